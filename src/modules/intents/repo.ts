import { sql, type RawBuilder, type Selectable, type Transaction } from 'kysely';
import type { Database, PreparedStatement } from '../../db/connect.js';
import { countedPage, type CountedTable } from '../../db/counted-list.js';
import type { AmountType, DB, Environment, IntentStatus, PaymentIntentsTable, SplitRecord } from '../../db/schema.js';
import type { Executor } from '../../db/transaction.js';
import { fanOutSql, sequencedInsertSql, type EventRecord } from '../events/outbox.js';
import { unitOfWork } from '../events/unit-of-work.js';
import type { LedgerTransfer } from '../payments/ledger.js';
import { INTENT_STATUSES, intentMachine } from './state.js';

export type IntentRow = Selectable<PaymentIntentsTable>;

export interface RefundRow {
  id: string;
  amount: number;
  reason: string | null;
  status: 'SUCCEEDED';
  createdAt: Date;
}

export type IntentWithRefunds = IntentRow & { refunds: RefundRow[] };

/** The columns the API's view of an intent shows (`intentView`), with the two that say whose it is. */
const VIEW_COLUMNS = [
  'reference_number',
  'short_code',
  'business_id',
  'environment',
  'amount_type',
  'amount',
  'suggested_amount',
  'label',
  'metadata',
  'success_url',
  'cancel_url',
  'status',
  'payment_code',
  'expires_at',
  'amount_paid',
  'paid_at',
  'payment_method',
  'total_amount_refunded',
  'created_at',
  'updated_at',
  'payment_link',
  'payer_name',
  'payer_note',
  'split',
  'split_shares',
] as const satisfies readonly (keyof IntentRow)[];

export type IntentViewRow = Pick<IntentRow, (typeof VIEW_COLUMNS)[number]> & { refunds: RefundRow[] };

/**
 * A free code: the first of `candidates` (random codes) that is free, else the first free code at
 * or after `candidates[0]`, wrapping around (the code right after the first taken code whose
 * successor is free). Probing random codes first keeps the taken codes scattered: a walk-only
 * allocator is linear probing, whose runs of taken codes grow long as the space fills (at 99 %
 * taken a walk crossed thousands of codes). With scattered codes the probes find a free code
 * within 1/(1 - load) tries on average, and the walk, when every probe hit a taken code, is short.
 * Every branch is index reads; `LIMIT 1` stops at the first branch that answers. A probe is a
 * point lookup per candidate, in their order, until one is free: written as a plain NOT EXISTS,
 * a generic plan (prepared statements) joined all the candidates against the code index instead,
 * reading every taken code below the smallest (1 ms of a 2 ms create on PGlite at 3,000 codes).
 */
export function freeCode(candidates: readonly number[], environment: Environment, space: number) {
  const start = candidates[0] ?? 0;
  return sql<{ c: number }>`
  SELECT c FROM (
    (SELECT t.c FROM unnest(${[...candidates]}::int[]) AS t(c)
      WHERE NOT (SELECT EXISTS (SELECT 1 FROM payment_intents WHERE environment = ${environment} AND payment_code = t.c))
      LIMIT 1)
    UNION ALL
    (SELECT p.payment_code + 1 FROM payment_intents p
      WHERE p.environment = ${environment} AND p.payment_code >= ${start}::int AND p.payment_code < ${space}::int - 1
        AND NOT EXISTS (SELECT 1 FROM payment_intents q
                        WHERE q.environment = ${environment} AND q.payment_code = p.payment_code + 1)
      ORDER BY p.payment_code LIMIT 1)
    UNION ALL
    (SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM payment_intents WHERE environment = ${environment} AND payment_code = 0))
    UNION ALL
    (SELECT p.payment_code + 1 FROM payment_intents p
      WHERE p.environment = ${environment} AND p.payment_code < ${start}::int AND p.payment_code < ${space}::int - 1
        AND NOT EXISTS (SELECT 1 FROM payment_intents q
                        WHERE q.environment = ${environment} AND q.payment_code = p.payment_code + 1)
      ORDER BY p.payment_code LIMIT 1)
  ) AS free LIMIT 1`;
}

/**
 * The CTEs that write the `payment.created` event of the intent a statement's `inserted` CTE
 * inserted, and its deliveries: none when the insert clashed and inserted nothing.
 */
function createdEventOfInserted(event: { id: string; body: string }) {
  return sql`created_event AS (
      SELECT ${event.id}::text AS id, business_id, environment, 'payment.created'::text AS event,
        reference_number AS subject, ${event.body}::text AS body, created_at, 0 AS ord
      FROM inserted
    ),
    ${sql.raw(sequencedInsertSql('created_event', 'one'))},
    deliveries AS (${sql.raw(fanOutSql('ev'))})`;
}

export interface NewIntent {
  /** Random codes to try first (the walk for a free code starts at the first), and the space's size. */
  codeCandidates: readonly number[];
  codeSpace: number;
  environment: Environment;
  referenceNumber: string;
  shortCode: string;
  businessId: string;
  amountType: AmountType;
  amount: number | null;
  suggestedAmount: number | null;
  label: string;
  metadata: Record<string, string>;
  successUrl: string | null;
  cancelUrl: string | null;
  /** The split between sellers (decision 080), checked by the caller. */
  split?: SplitRecord | null;
  expiresAt: Date;
  createdAt: Date;
  /** The `payment.created` event (its body does not carry the code). */
  event: { id: string; body: string };
}

/**
 * The create as one statement of the caller's transaction: allocate a code, insert the intent,
 * its `payment.created` event and the event's webhook deliveries. A clash on a unique column (a
 * code a concurrent create took first, a reference collision) inserts nothing: `undefined`, and
 * the caller tries again with fresh values. `'exhausted'` when no code is free.
 */
export async function insertIntent(trx: Executor, intent: NewIntent): Promise<IntentRow | 'exhausted' | undefined> {
  const result = await sql<IntentRow & { code_found: number; id: number | null }>`
    WITH candidate AS (${freeCode(intent.codeCandidates, intent.environment, intent.codeSpace)}),
    inserted AS (
      INSERT INTO payment_intents (reference_number, short_code, business_id, environment, amount_type, amount,
        suggested_amount, label, metadata, success_url, cancel_url, status, payment_code, expires_at,
        created_at, updated_at, split)
      SELECT ${intent.referenceNumber}, ${intent.shortCode}, ${intent.businessId}, ${intent.environment},
        ${intent.amountType}, ${intent.amount}::bigint, ${intent.suggestedAmount}::bigint, ${intent.label},
        ${JSON.stringify(intent.metadata)}::jsonb, ${intent.successUrl}::text, ${intent.cancelUrl}::text, 'PENDING',
        candidate.c, ${intent.expiresAt}::timestamptz, ${intent.createdAt}::timestamptz, ${intent.createdAt}::timestamptz,
        ${intent.split ? JSON.stringify(intent.split) : null}::jsonb
      FROM candidate
      ON CONFLICT DO NOTHING
      RETURNING *
    ),
    ${createdEventOfInserted(intent.event)}
    SELECT (SELECT count(*) FROM candidate)::int AS code_found, inserted.*
    FROM (SELECT 1) AS one LEFT JOIN inserted ON true`.execute(trx);
  const row = result.rows[0];
  if (!row || row.code_found === 0) return 'exhausted';
  if (row.id === null) return undefined;
  const { code_found: _found, ...intentRow } = row;
  return intentRow as IntentRow;
}

/** An intent made through a payment link: no code (it is paid in the transaction that makes it). */
export type NewLinkIntent = Omit<NewIntent, 'codeCandidates' | 'codeSpace'> & {
  paymentLink: string;
  payerName: string | null;
  payerNote: string | null;
};

/**
 * Inserts a link's intent with its `payment.created` event and the event's deliveries, in one
 * statement of the caller's transaction, as `insertIntent` does without a code. A clash on a
 * unique column (a reference or short code drawn twice) inserts nothing, the event included:
 * `undefined`, and the caller draws again; a raised error would end the payer's transaction.
 */
export async function insertLinkIntent(trx: Executor, intent: NewLinkIntent): Promise<IntentRow | undefined> {
  const result = await sql<IntentRow>`
    WITH inserted AS (
      INSERT INTO payment_intents (reference_number, short_code, business_id, environment, amount_type, amount,
        suggested_amount, label, metadata, success_url, cancel_url, status, payment_code, expires_at,
        created_at, updated_at, payment_link, payer_name, payer_note)
      VALUES (${intent.referenceNumber}, ${intent.shortCode}, ${intent.businessId}, ${intent.environment},
        ${intent.amountType}, ${intent.amount}::bigint, ${intent.suggestedAmount}::bigint, ${intent.label},
        ${JSON.stringify(intent.metadata)}::jsonb, ${intent.successUrl}::text, ${intent.cancelUrl}::text, 'PENDING',
        NULL, ${intent.expiresAt}::timestamptz, ${intent.createdAt}::timestamptz, ${intent.createdAt}::timestamptz,
        ${intent.paymentLink}, ${intent.payerName}::text, ${intent.payerNote}::text)
      ON CONFLICT DO NOTHING
      RETURNING *
    ),
    ${createdEventOfInserted(intent.event)}
    SELECT * FROM inserted`.execute(trx);
  return result.rows[0];
}

const REFUNDS_JSON = `coalesce((
    SELECT json_agg(json_build_object('id', r.id, 'amount', r.amount, 'reason', r.reason, 'status', r.status,
                                      'createdAt', r.created_at) ORDER BY r.created_at, r.id)
    FROM refunds r WHERE r.intent_id = i.id), '[]'::json) AS refunds`;

const GET_BY_REFERENCE: PreparedStatement = {
  name: 'intents_get_by_reference',
  text: `SELECT i.*, ${REFUNDS_JSON} FROM payment_intents i WHERE i.reference_number = $1`,
};

/**
 * The API's GET reads only what its view shows: the fee, payer and failure columns it leaves out
 * are over a third of the row, each one parsed by the driver and sent by the server on every read.
 */
const GET_VIEW_BY_REFERENCE: PreparedStatement = {
  name: 'intents_view_by_reference',
  text: `SELECT ${VIEW_COLUMNS.map((column) => `i.${column}`).join(', ')}, ${REFUNDS_JSON}
    FROM payment_intents i WHERE i.reference_number = $1`,
};

interface RawRefund {
  id: string;
  amount: number;
  reason: string | null;
  status: 'SUCCEEDED';
  createdAt: string;
}

function withParsedRefunds<Row extends { refunds: RawRefund[] }>(row: Row): Row & { refunds: RefundRow[] } {
  return { ...row, refunds: row.refunds.map((refund) => ({ ...refund, createdAt: new Date(refund.createdAt) })) };
}

export async function findIntentView(database: Database, referenceNumber: string): Promise<IntentViewRow | undefined> {
  const [row] = await database.query<Omit<IntentViewRow, 'refunds'> & { refunds: RawRefund[] }>(GET_VIEW_BY_REFERENCE, [
    referenceNumber,
  ]);
  return row ? withParsedRefunds(row) : undefined;
}

export async function findIntentWithRefunds(
  database: Database,
  referenceNumber: string,
): Promise<IntentWithRefunds | undefined> {
  const [row] = await database.query<IntentRow & { refunds: RawRefund[] }>(GET_BY_REFERENCE, [referenceNumber]);
  return row ? withParsedRefunds(row) : undefined;
}

const INTENTS: CountedTable = { list: 'intents', table: 'payment_intents', tiebreak: 'reference_number' };
const PAGE_REFUNDS = sql`coalesce((
    SELECT json_agg(json_build_object('id', r.id, 'amount', r.amount, 'reason', r.reason, 'status', r.status,
                                      'createdAt', r.created_at) ORDER BY r.created_at, r.id)
    FROM refunds r WHERE r.intent_id = t.id), '[]'::json) AS refunds`;

export interface IntentListQuery {
  businessId: string;
  environment: Environment;
  status: IntentStatus | undefined;
  /** Only the intents whose split names this seller, one the caller's lookup found (sellers/lookup.ts). */
  seller?: string | undefined;
  from: Date | undefined;
  to: Date | undefined;
  limit: number;
  offset: number;
}

/** A page of a business's intents, newest first, with the exact number that match (counted-list.ts). */
export async function listIntents(
  database: Database,
  query: IntentListQuery,
): Promise<{ total: number; items: IntentWithRefunds[] }> {
  if (query.seller !== undefined) return listSellerIntents(database, { ...query, seller: query.seller });
  const { total, items } = await countedPage<IntentRow & { refunds: RawRefund[] }>(
    database.db,
    INTENTS,
    {
      businessId: query.businessId,
      environment: query.environment,
      statuses: query.status ? [query.status] : INTENT_STATUSES,
      filterRowsByStatus: query.status !== undefined,
      from: query.from,
      to: query.to,
      order: 'newest',
      limit: query.limit,
      offset: query.offset,
    },
    sql`t.*, ${PAGE_REFUNDS}`,
  );
  return { total, items: items.map(withParsedRefunds) };
}

/** A page of the intents a condition on `t` takes, newest first, counted from the rows its index finds. */
async function pageWhere(
  database: Database,
  where: RawBuilder<unknown>,
  window: { limit: number; offset: number },
): Promise<{ total: number; items: IntentWithRefunds[] }> {
  const [items, count] = await Promise.all([
    sql<IntentRow & { refunds: RawRefund[] }>`SELECT t.*, ${PAGE_REFUNDS} FROM payment_intents t WHERE ${where}
      ORDER BY t.created_at DESC, t.reference_number DESC LIMIT ${window.limit} OFFSET ${window.offset}`.execute(
      database.db,
    ),
    sql<{ n: number }>`SELECT count(*)::int AS n FROM payment_intents t WHERE ${where}`.execute(database.db),
  ]);
  return { total: Number(count.rows[0]?.n ?? 0), items: items.rows.map(withParsedRefunds) };
}

/** The intents whose split names a seller, found and counted from the split index (migration 049). */
function listSellerIntents(database: Database, query: IntentListQuery & { seller: string }) {
  const where = sql.join(
    [
      sql`t.business_id = ${query.businessId}`,
      sql`t.environment = ${query.environment}`,
      sql`t.split IS NOT NULL`,
      sql`t.split -> 'lines' @> ${JSON.stringify([{ seller: query.seller }])}::jsonb`,
      ...(query.status ? [sql`t.status = ${query.status}`] : []),
      ...(query.from ? [sql`t.created_at >= ${query.from}::timestamptz`] : []),
      ...(query.to ? [sql`t.created_at <= ${query.to}::timestamptz`] : []),
    ],
    sql` AND `,
  );
  return pageWhere(database, where, query);
}

/** A page of the intents a payment link made, newest first, with how many it made. */
export const listLinkIntents = (database: Database, paymentLink: string, window: { limit: number; offset: number }) =>
  pageWhere(database, sql`t.payment_link = ${paymentLink}`, window);

/** An intent locked for a change, with its business's fee plan (null: the plan's defaults). */
export type LockedIntent = IntentRow & {
  plan_provider_bps: number | null;
  plan_payer_fee: number | null;
  plan_tof_bps: number | null;
  plan_tte_bps: number | null;
};

/**
 * Reads an intent inside a transaction and locks its row, with the fee plan a payment needs, in
 * one statement. `nowait`: fail at once with a lock error when another transaction holds it.
 */
export async function lockIntent(
  trx: Transaction<DB>,
  where: { referenceNumber: string } | { id: number },
  options: { nowait?: boolean } = {},
): Promise<LockedIntent | undefined> {
  const query = trx
    .selectFrom('payment_intents as i')
    .leftJoin('fee_plans as f', 'f.business_id', 'i.business_id')
    .selectAll('i')
    .select([
      'f.provider_bps as plan_provider_bps',
      'f.payer_fee as plan_payer_fee',
      'f.tof_bps as plan_tof_bps',
      'f.tte_bps as plan_tte_bps',
    ])
    .where(
      'referenceNumber' in where ? 'i.reference_number' : 'i.id',
      '=',
      'referenceNumber' in where ? where.referenceNumber : where.id,
    )
    .forUpdate('i');
  return (options.nowait ? query.noWait() : query).executeTakeFirst();
}

export async function findIntent(trx: Executor, referenceNumber: string): Promise<IntentRow | undefined> {
  return trx
    .selectFrom('payment_intents')
    .selectAll()
    .where('reference_number', '=', referenceNumber)
    .executeTakeFirst();
}

export interface NewRefund {
  id: string;
  amount: number;
  reason: string | null;
  providerTtc: number;
  tof: number;
  tte: number;
  createdAt: Date;
  ledgerTransactionId: string | null;
}

/**
 * Records a refund, the intent's new totals, the refund's events and the ledger transfer that
 * pays it back (`payment.walletRefund`) in one statement, and answers the intent with all its
 * refunds (the new one comes from the statement itself: its own insert is not visible yet).
 */
export async function recordRefund(
  trx: Executor,
  intent: { id: number; status: IntentStatus; totalAmountRefunded: number },
  refund: NewRefund,
  events: readonly EventRecord[],
  money: LedgerTransfer | undefined,
): Promise<IntentWithRefunds> {
  // The new refund is not visible to the statement that inserts it: the answer lists it from its values.
  const [row] = await unitOfWork()
    .money(money)
    .write(
      sql`INSERT INTO refunds (id, intent_id, amount, reason, status, provider_ttc, tof, tte, created_at,
        ledger_transaction_id)
      VALUES (${refund.id}, ${intent.id}, ${refund.amount}, ${refund.reason}, 'SUCCEEDED', ${refund.providerTtc},
        ${refund.tof}, ${refund.tte}, ${refund.createdAt}::timestamptz, ${refund.ledgerTransactionId})`,
    )
    .change(
      sql<IntentRow & { refunds: RawRefund[] }>`UPDATE payment_intents i
      SET status = ${intent.status}, total_amount_refunded = ${intent.totalAmountRefunded},
        provider_returned = i.provider_returned + ${refund.providerTtc},
        tof_returned = i.tof_returned + ${refund.tof}, tte_returned = i.tte_returned + ${refund.tte},
        updated_at = ${refund.createdAt}::timestamptz
      WHERE i.id = ${intent.id}
      RETURNING i.*, (
        SELECT json_agg(json_build_object('id', r.id, 'amount', r.amount, 'reason', r.reason, 'status', r.status,
                                          'createdAt', r.created_at) ORDER BY r.created_at, r.id)
        FROM (SELECT id, amount, reason, status, created_at FROM refunds WHERE intent_id = i.id
              UNION ALL SELECT ${refund.id}::text, ${refund.amount}::bigint, ${refund.reason}::text,
                'SUCCEEDED'::text, ${refund.createdAt}::timestamptz) AS r
      ) AS refunds`,
    )
    .events(events)
    .run(trx);
  return withParsedRefunds(row!);
}

export async function refundsOf(trx: Executor, intentId: number): Promise<RefundRow[]> {
  const rows = await trx
    .selectFrom('refunds')
    .select(['id', 'amount', 'reason', 'status', 'created_at'])
    .where('intent_id', '=', intentId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map((row) => ({
    id: row.id,
    amount: row.amount,
    reason: row.reason,
    status: row.status,
    createdAt: row.created_at,
  }));
}

/**
 * Intents whose time is up and that may expire, locked for the caller's transaction; other workers
 * skip them. The statuses are literals (`sqlFilter`), so a generic plan still uses the expiry index.
 */
export async function lockExpiredIntents(trx: Transaction<DB>, limit: number): Promise<IntentRow[]> {
  return trx
    .selectFrom('payment_intents')
    .selectAll()
    .where(intentMachine.sqlFilter('expire'))
    .where('expires_at', '<=', sql<Date>`now()`)
    .orderBy('expires_at')
    .limit(limit)
    .forUpdate()
    .skipLocked()
    .execute();
}
