import type { FastifyRequest } from 'fastify';
import type { Selectable } from 'kysely';
import type { AuditDetails, PaymentLinksTable, SellersTable } from '../../db/schema.js';
import type { Executor } from '../../db/transaction.js';
import type { AuditAction } from './actions.js';
import { recordAct, type AuditTarget } from './record.js';

/** A refund as intents and orders keep them, oldest first: the act's own is the last. */
interface KeptRefund {
  id: string;
  amount: number;
}

/**
 * A refund's entry (intents and orders, the API and the dashboard alike): on the intent or order
 * it refunds, naming the refund and its amount.
 */
export async function recordRefund(
  db: Executor,
  request: FastifyRequest,
  target: AuditTarget,
  refunds: readonly KeptRefund[],
): Promise<void> {
  const refund = refunds.at(-1);
  const details = { refund: refund?.id ?? null, amount: refund?.amount ?? null };
  await recordAct(db, request, { action: 'refund.created', target, details });
}

/** A payout as the payouts module keeps it: what its entries name. */
interface KeptPayout {
  reference: string;
  amount: number;
  fee: number;
  seller_id: string | null;
}

/** A payout created or cancelled: on the payout, with its amount, fee and seller (null: the business's). */
export async function recordPayout(
  db: Executor,
  request: FastifyRequest,
  action: 'payout.created' | 'payout.cancelled',
  payout: KeptPayout,
): Promise<void> {
  await recordAct(db, request, {
    action,
    target: { kind: 'payout', id: payout.reference },
    details: { amount: payout.amount, fee: payout.fee, seller: payout.seller_id },
  });
}

/** A batch of payouts: one entry for the batch, with how many payouts and their total (each payout's own is its batch's). */
export async function recordPayoutBatch(
  db: Executor,
  request: FastifyRequest,
  batchId: string,
  payouts: readonly KeptPayout[],
): Promise<void> {
  const total = payouts.reduce((sum, payout) => sum + payout.amount, 0);
  await recordAct(db, request, {
    action: 'payout_batch.created',
    target: { kind: 'payout_batch', id: batchId },
    details: { payouts: payouts.length, amount: total },
  });
}

/** The fields of a row an update may change: the name an entry gives each, and its column. */
export type WatchedFields<Row> = Readonly<Record<string, keyof Row>>;

/** The names of the watched fields whose values differ between two reads of a row. */
export function changedFields<Row>(before: Row, after: Row, fields: WatchedFields<Row>): string[] {
  return Object.entries(fields)
    .filter(([, column]) => JSON.stringify(before[column]) !== JSON.stringify(after[column]))
    .map(([name]) => name);
}

/**
 * An update's entry, naming the fields it changed (never their values: a phone or a message is
 * not the log's to copy). An update that changed nothing is no act and writes none, as it sends
 * no event.
 */
export async function recordUpdate<Row>(
  db: Executor,
  request: FastifyRequest,
  act: { action: AuditAction; target: AuditTarget },
  rows: { before: Row; after: Row },
  fields: WatchedFields<Row>,
): Promise<void> {
  const changed = changedFields(rows.before, rows.after, fields);
  if (changed.length > 0) await recordAct(db, request, { ...act, details: { changed } });
}

/** What a seller's update may change, by the API's names. */
export const SELLER_FIELDS: WatchedFields<Selectable<SellersTable>> = {
  name: 'name',
  phone: 'phone',
  commissionBps: 'commission_bps',
  status: 'status',
  payoutSchedule: 'payout_schedule',
  metadata: 'metadata',
};

/** What a payment link's update may change, by the API's names. */
export const LINK_FIELDS: WatchedFields<Selectable<PaymentLinksTable>> = {
  label: 'label',
  active: 'active',
  inactiveMessage: 'inactive_message',
  maxPayments: 'max_payments',
  expiresAt: 'expires_at',
  metadata: 'metadata',
};

type Seller = Selectable<SellersTable>;
type Link = Selectable<PaymentLinksTable>;

/** A seller's update, read before and after it (the API's PATCH and the dashboard's form alike). */
export function recordSellerUpdate(
  db: Executor,
  request: FastifyRequest,
  before: Seller,
  after: Seller,
): Promise<void> {
  const act = { action: 'seller.updated', target: { kind: 'seller', id: after.id } } as const;
  return recordUpdate(db, request, act, { before, after }, SELLER_FIELDS);
}

/** A payment link's update, read before and after it (the API's PATCH and the dashboard's forms alike). */
export function recordLinkUpdate(db: Executor, request: FastifyRequest, before: Link, after: Link): Promise<void> {
  const act = { action: 'payment_link.updated', target: { kind: 'payment_link', id: after.reference_number } } as const;
  return recordUpdate(db, request, act, { before, after }, LINK_FIELDS);
}

/** What the shop contact form changes, by the API's names (the values stay out of the log). */
export const CONTACT_AUDIT_FIELDS: WatchedFields<{
  phone: unknown;
  email: unknown;
  pickupAddress: unknown;
  delivers: unknown;
}> = {
  phone: 'phone',
  email: 'email',
  pickupAddress: 'pickupAddress',
  delivers: 'delivers',
};

/**
 * A webhook endpoint as an entry names it: its URL without query or fragment (a receiver's token
 * is often put there, and the log keeps no secret) and the events it takes.
 */
export function endpointDetails(endpoint: { url: string; events: readonly string[] }): AuditDetails {
  const url = new URL(endpoint.url);
  return { url: `${url.origin}${url.pathname}`, events: [...endpoint.events] };
}
