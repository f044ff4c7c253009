import { maskPhone } from '../../lib/phone.js';
import type { EventNameOf } from '../events/catalog.js';
import { eventRecord, type EventData, type EventRecord } from '../events/outbox.js';
import type { PayoutRow } from './views.js';

export type PayoutEventName = EventNameOf<'payout'>;

/**
 * A payout event, in the envelope of payment events (`{ id, event, created_at, sandbox, data }`,
 * snake_case data): both are money. The destination phone is masked as a payer's is, since the
 * Events API and webhook logs show events to keys that may not read payouts themselves.
 */
export function payoutEvent(event: PayoutEventName, payout: PayoutRow, createdAt: Date): EventRecord {
  const data: EventData<PayoutEventName> = {
    reference_number: payout.reference,
    batch_id: payout.batch_id,
    amount: payout.amount,
    fee: payout.fee,
    currency: 'MRU',
    status: payout.status,
    destination: { type: payout.destination_type, phone: maskPhone(payout.destination_phone) },
    description: payout.description,
    metadata: payout.metadata,
    failure_code: payout.failure_code,
    failure_message: payout.failure_message,
    created_at: payout.created_at.toISOString(),
    // Only on a seller's payout (decision 082): an added field.
    ...(payout.seller_id ? { seller: payout.seller_id } : {}),
  };
  return eventRecord(
    event,
    { businessId: payout.business_id, environment: payout.environment },
    payout.reference,
    data,
    createdAt,
  );
}
