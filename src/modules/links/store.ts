import { sql, type Kysely, type Selectable } from 'kysely';
import type { DB, PaymentLinkStatus, PaymentLinksTable } from '../../db/schema.js';
import type { Executor } from '../../db/transaction.js';
import type { Caller } from '../../http/context.js';
import { statusCondition } from './state.js';

export type LinkRow = Selectable<PaymentLinksTable>;

export interface NewLink {
  referenceNumber: string;
  slug: string;
  businessId: string;
  environment: LinkRow['environment'];
  label: string;
  amountType: LinkRow['amount_type'];
  amount: number | null;
  minAmount: number | null;
  maxAmount: number | null;
  maxPayments: number | null;
  expiresAt: Date | null;
  collectName: boolean;
  collectNote: boolean;
  successUrl: string | null;
  metadata: Record<string, string>;
  createdAt: Date;
}

/** Inserts a link; undefined when its reference or slug clashed with another (the caller draws again). */
export async function insertLink(trx: Executor, link: NewLink): Promise<LinkRow | undefined> {
  const result = await sql<LinkRow>`
    INSERT INTO payment_links (reference_number, slug, business_id, environment, label, amount_type, amount,
      min_amount, max_amount, max_payments, expires_at, collect_name, collect_note, success_url, metadata,
      created_at, updated_at)
    VALUES (${link.referenceNumber}, ${link.slug}, ${link.businessId}, ${link.environment}, ${link.label},
      ${link.amountType}, ${link.amount}::bigint, ${link.minAmount}::bigint, ${link.maxAmount}::bigint,
      ${link.maxPayments}::int, ${link.expiresAt}::timestamptz, ${link.collectName}, ${link.collectNote},
      ${link.successUrl}::text, ${JSON.stringify(link.metadata)}::jsonb, ${link.createdAt}::timestamptz,
      ${link.createdAt}::timestamptz)
    ON CONFLICT DO NOTHING
    RETURNING *`.execute(trx);
  return result.rows[0];
}

export async function findLink(
  db: Executor | Kysely<DB>,
  referenceNumber: string,
  options: { lock?: boolean } = {},
): Promise<LinkRow | undefined> {
  const query = db.selectFrom('payment_links').selectAll().where('reference_number', '=', referenceNumber);
  // NO KEY UPDATE: a payment's intent holds KEY SHARE on its link (the foreign key), which a merchant's change need not wait for.
  return (options.lock ? query.forNoKeyUpdate() : query).executeTakeFirst();
}

export async function listLinks(
  db: Kysely<DB>,
  caller: Caller,
  query: { status: PaymentLinkStatus | undefined; limit: number; offset: number; now: Date },
): Promise<{ items: LinkRow[]; total: number }> {
  const filter = sql.join(
    [
      sql`l.business_id = ${caller.businessId}`,
      sql`l.environment = ${caller.environment}`,
      ...(query.status ? [statusCondition(query.status, query.now)] : []),
    ],
    sql` AND `,
  );
  const [items, count] = await Promise.all([
    sql<LinkRow>`SELECT l.* FROM payment_links l WHERE ${filter}
      ORDER BY l.created_at DESC, l.reference_number DESC LIMIT ${query.limit} OFFSET ${query.offset}`.execute(db),
    sql<{ n: number }>`SELECT count(*)::int AS n FROM payment_links l WHERE ${filter}`.execute(db),
  ]);
  return { items: items.rows, total: Number(count.rows[0]?.n ?? 0) };
}

/** What a merchant may change of a link, as columns; absent: unchanged. */
export interface LinkChange {
  label?: string;
  active?: boolean;
  inactive_message?: string | null;
  max_payments?: number | null;
  expires_at?: Date | null;
  metadata?: string;
}

export async function updateLink(trx: Executor, referenceNumber: string, change: LinkChange, now: Date) {
  return trx
    .updateTable('payment_links')
    .set({ ...change, updated_at: now })
    .where('reference_number', '=', referenceNumber)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * Counts one payment of `amount` against the link, if it still takes one: active, under its limit,
 * not expired. The last statement of the payment's transaction, so the row lock it takes is held
 * only while the transaction commits, and racing payers beyond the limit find it reached and roll
 * back their whole payment. Undefined: the link takes no payment now.
 */
export async function countLinkPayment(
  trx: Executor,
  referenceNumber: string,
  amount: number,
  now: Date,
): Promise<LinkRow | undefined> {
  const result = await sql<LinkRow>`
    UPDATE payment_links l
    SET payments_count = l.payments_count + 1, amount_collected = l.amount_collected + ${amount}::bigint,
      updated_at = ${now}::timestamptz
    WHERE l.reference_number = ${referenceNumber} AND ${statusCondition('ACTIVE', now)}
    RETURNING l.*`.execute(trx);
  return result.rows[0];
}
