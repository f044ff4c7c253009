import { maskPhone } from '../../lib/phone.js';
import type { EventNameOf } from '../events/catalog.js';
import { eventRecord, type EventData, type EventRecord } from '../events/outbox.js';
import { NO_COMMISSION, type Commission } from '../payments/fees.js';
import type { SplitShare } from '../payments/splits.js';
import type { IntentRow } from './repo.js';

export type PaymentEventName = EventNameOf<'payment'>;

/** Extra facts some events carry beyond the payment data of api.md 6.2. */
export interface PaymentEventExtras {
  /** The confirmed payment's commission, or the refunded part of it. */
  commission?: Commission;
  /** payment.failed of an OPEN intent: the amount the payer tried to pay. */
  attemptedAmount?: number;
  /** payment.refunded: the refund, and of a split intent what each seller gave back with it. */
  refund?: { id: string; amount: number; splits?: readonly { seller: string; amount: number }[] | undefined };
  /** payment.confirmed of a split intent: each seller's gross, fee and net (decision 080). */
  splits?: readonly SplitShare[] | undefined;
}

/**
 * A payment event: envelope `{ id, event, created_at, sandbox, data }` with snake_case data
 * (api.md 6.2, decisions "Events and deliveries"). Key order is fixed here, once, because the
 * body text is what gets signed and delivered.
 */
/** What a payment event tells of its intent. */
export type PaymentEventFacts = Pick<
  IntentRow,
  | 'reference_number'
  | 'short_code'
  | 'business_id'
  | 'environment'
  | 'amount'
  | 'amount_paid'
  | 'status'
  | 'paid_at'
  | 'payer_phone'
  | 'metadata'
  | 'total_amount_refunded'
  | 'payment_link'
  | 'payer_name'
  | 'payer_note'
>;

export function paymentEvent(
  event: PaymentEventName,
  intent: PaymentEventFacts,
  createdAt: Date,
  extras: PaymentEventExtras = {},
): EventRecord {
  const paid = intent.paid_at !== null;
  const data: EventData<PaymentEventName> = {
    reference_number: intent.reference_number,
    short_code: intent.short_code,
    amount: intent.amount_paid ?? intent.amount ?? extras.attemptedAmount ?? null,
    currency: 'MRU',
    status: intent.status,
    paid_at: paid ? intent.paid_at!.toISOString() : null,
    payer_phone: paid && intent.payer_phone ? maskPhone(intent.payer_phone) : null,
    metadata: intent.metadata,
    commission: extras.commission ?? NO_COMMISSION,
  };
  if (intent.payment_link !== null) data.payment_link = intent.payment_link;
  if (intent.payer_name !== null) data.payer_name = intent.payer_name;
  if (intent.payer_note !== null) data.payer_note = intent.payer_note;
  if (extras.splits) data.splits = extras.splits.map((share) => ({ ...share }));
  if (extras.refund) {
    data.refund_id = extras.refund.id;
    data.amount_refunded = extras.refund.amount;
    data.total_amount_refunded = intent.total_amount_refunded;
    if (extras.refund.splits) data.splits_refunded = extras.refund.splits.map((back) => ({ ...back }));
  }
  return eventRecord(
    event,
    { businessId: intent.business_id, environment: intent.environment },
    intent.reference_number,
    data,
    createdAt,
  );
}
