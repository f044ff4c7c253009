import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/schema.js';
import { ApiError, invalid } from '../../http/errors.js';
import { randomBase62, randomDigits } from '../../lib/ids.js';
import { checkPaymentAmount } from '../payments/amount.js';
import { walletPin } from '../payments/methods.js';
import { eventRecord } from '../events/outbox.js';
import { unitOfWork } from '../events/unit-of-work.js';
import { checkoutView, failedPaymentError, type CheckoutView } from '../checkout/service.js';
import { paymentEvent } from '../intents/events.js';
import { lockIntentAndPayer } from '../intents/payer-lock.js';
import { attemptPayment } from '../intents/payments.js';
import { insertLinkIntent, type IntentRow } from '../intents/repo.js';
import { INTENT_LIFETIME_MS } from '../intents/service.js';
import { linkStatus, STATUS_REFUSALS } from './state.js';
import { countLinkPayment, findLink, type LinkRow } from './store.js';

/** The most a payer may write in a link's name and note fields. */
export const PAYER_NAME_MAX = 100;
export const PAYER_NOTE_MAX = 500;

/** A link as its payer meets it: the link, who it pays, and whether that business takes payments now. */
export interface PayerLink {
  link: LinkRow;
  merchantName: string;
  payerFee: number;
  apiEnabled: boolean;
  liveApproved: boolean;
}

/** The link at `/l/{slug}`, with its payee, in one statement; undefined for an unknown slug. */
export async function linkBySlug(db: Kysely<DB>, slug: string): Promise<PayerLink | undefined> {
  const row = await db
    .selectFrom('payment_links as l')
    .innerJoin('businesses as b', 'b.id', 'l.business_id')
    .leftJoin('fee_plans as f', 'f.business_id', 'l.business_id')
    .selectAll('l')
    .select(['b.name as merchant_name', 'b.api_enabled', 'b.live_approved', 'f.payer_fee as plan_payer_fee'])
    .where('l.slug', '=', slug)
    .executeTakeFirst();
  if (!row) return undefined;
  const { merchant_name, api_enabled, live_approved, plan_payer_fee, ...link } = row;
  return {
    link,
    merchantName: merchant_name,
    payerFee: plan_payer_fee ?? 0,
    apiEnabled: api_enabled,
    liveApproved: live_approved,
  };
}

/**
 * Why a link takes no payment now, or undefined when it does: its status, else its business (the
 * API switched off, or a live link of a business not approved for live), with the codes the API
 * answers those with. Asked before the PIN (a dead link costs no attempt; with the page's key,
 * after it, so that a retry replays its payment's receipt) and, for the status, again under the
 * payment's lock.
 */
export function payerRefusal(found: PayerLink, now: Date): ApiError | undefined {
  const status = linkStatus(found.link, now);
  if (status !== 'ACTIVE') return new ApiError(STATUS_REFUSALS[status]);
  if (!found.apiEnabled) return new ApiError('FEATURE_DISABLED', 'This business does not take payments right now.');
  if (found.link.environment === 'live' && !found.liveApproved) return new ApiError('LIVE_ACCESS_NOT_APPROVED');
  return undefined;
}

/** What a payer sends a link: the amount of an OPEN link, and the name and note it asks for. */
export interface LinkPaymentInput {
  amount?: number | undefined;
  name?: string | undefined;
  note?: string | undefined;
}

/** What the payer pays and writes, checked against the link: the amount within its bounds, a name where asked. */
export function linkPayment(
  link: LinkRow,
  input: LinkPaymentInput,
  maxAmount: number,
): { amount: number; name: string | null; note: string | null } {
  let amount: number;
  if (link.amount_type === 'FIXED') {
    amount = link.amount!;
  } else {
    if (input.amount === undefined) throw invalid('body.amount', 'is required');
    checkPaymentAmount(input.amount, maxAmount);
    if (link.min_amount !== null && input.amount < link.min_amount) {
      throw new ApiError('AMOUNT_OUT_OF_RANGE', `The amount must be at least ${link.min_amount} centimes.`);
    }
    if (link.max_amount !== null && input.amount > link.max_amount) {
      throw new ApiError('AMOUNT_OUT_OF_RANGE', `The amount must be at most ${link.max_amount} centimes.`);
    }
    amount = input.amount;
  }
  const name = link.collect_name ? (input.name?.trim() ?? '') : '';
  if (link.collect_name && name === '') throw invalid('body.name', 'is required');
  const note = link.collect_note ? (input.note?.trim() ?? '') : '';
  return { amount, name: name === '' ? null : name, note: note === '' ? null : note };
}

/**
 * A payment through a link, in the caller's transaction, once the payer's PIN checked out: the
 * link's intent is made (`payment.created`) and paid as any intent is (`attemptPayment`:
 * `payment.confirmed`, the ledger's transfer), then the payment is counted on the link. A link that
 * took its last payment, was switched off or expired meanwhile refuses it there, and the whole
 * transaction rolls back: nothing is debited and no intent stays. A failed attempt (too little in
 * the wallet) rolls back the same way: a link's intents are its payments.
 */
export async function payThroughLink(
  trx: Transaction<DB>,
  found: PayerLink,
  payment: { amount: number; name: string | null; note: string | null; phone: string },
): Promise<CheckoutView> {
  const { link } = found;
  const now = new Date();
  const created = await insertIntentOfLink(trx, link, payment, now);
  const { intent, payer } = (await lockIntentAndPayer(trx, { id: created.id }, { phone: payment.phone })) ?? {};
  if (!intent) throw new Error(`intent ${created.reference_number} vanished in its own transaction`);
  if (!payer) throw new ApiError('WALLET_NOT_FOUND');
  const result = await attemptPayment(trx, intent, {
    amount: payment.amount,
    phone: payer.wallet.phone,
    payer,
    method: walletPin,
    now,
  });
  // Thrown, not committed as the checkout's is: a link's intents are its payments, so nothing stays.
  if (result.outcome === 'failed') throw failedPaymentError(result);
  if (result.outcome === 'pending') throw new Error(`payment ${result.paymentId} of a wallet and PIN is waiting`);
  const counted = await countLinkPayment(trx, link.reference_number, payment.amount, now);
  if (!counted) throw (await refusalNow(trx, link.reference_number, now)) ?? new ApiError('PAYMENT_LINK_INACTIVE');
  if (counted.max_payments !== null && counted.payments_count === counted.max_payments) {
    await unitOfWork()
      .events([completedEvent(counted, now)])
      .run(trx);
  }
  return checkoutView(result.intent, { name: found.merchantName, payerFee: intent.plan_payer_fee ?? 0 });
}

/** Random values a link's intent draws before a clash on all of them is taken for a fault. */
const MAX_INSERT_ATTEMPTS = 8;

/** The link's new intent (PENDING, no code) and its `payment.created`, drawing its random values again on a clash. */
async function insertIntentOfLink(
  trx: Transaction<DB>,
  link: LinkRow,
  payment: { name: string | null; note: string | null },
  now: Date,
): Promise<IntentRow> {
  for (let attempt = 0; attempt < MAX_INSERT_ATTEMPTS; attempt++) {
    const intent = {
      referenceNumber: `PI-${randomDigits(16)}`,
      // Longer than a checkout intent's: a link's intents are many, and nobody types this one.
      shortCode: randomBase62(10),
      businessId: link.business_id,
      environment: link.environment,
      amountType: link.amount_type,
      amount: link.amount_type === 'FIXED' ? link.amount : null,
      suggestedAmount: null,
      label: link.label,
      metadata: link.metadata,
      successUrl: link.success_url,
      cancelUrl: null,
      expiresAt: new Date(now.getTime() + INTENT_LIFETIME_MS),
      createdAt: now,
      paymentLink: link.reference_number,
      payerName: payment.name,
      payerNote: payment.note,
    };
    const event = paymentEvent(
      'payment.created',
      {
        reference_number: intent.referenceNumber,
        short_code: intent.shortCode,
        business_id: intent.businessId,
        environment: intent.environment,
        amount: intent.amount,
        amount_paid: null,
        status: 'PENDING',
        paid_at: null,
        payer_phone: null,
        metadata: intent.metadata,
        total_amount_refunded: 0,
        payment_link: intent.paymentLink,
        payer_name: intent.payerName,
        payer_note: intent.payerNote,
      },
      now,
    );
    const row = await insertLinkIntent(trx, { ...intent, event: { id: event.id, body: event.body } });
    if (row) return row;
  }
  throw new Error(`no free intent reference for link ${link.reference_number} after ${MAX_INSERT_ATTEMPTS} draws`);
}

async function refusalNow(trx: Transaction<DB>, referenceNumber: string, now: Date): Promise<ApiError | undefined> {
  const link = await findLink(trx, referenceNumber);
  if (!link) return undefined;
  const status = linkStatus(link, now);
  return status === 'ACTIVE' ? undefined : new ApiError(STATUS_REFUSALS[status]);
}

function completedEvent(link: LinkRow, now: Date) {
  return eventRecord(
    'payment_link.completed',
    { businessId: link.business_id, environment: link.environment },
    link.reference_number,
    {
      reference_number: link.reference_number,
      label: link.label,
      status: linkStatus(link, now),
      payments_count: link.payments_count,
      max_payments: link.max_payments,
      amount_collected: Number(link.amount_collected),
      currency: 'MRU',
      metadata: link.metadata,
      created_at: link.created_at.toISOString(),
    },
    now,
  );
}
