import { sql, type Selectable } from 'kysely';
import type { Database, PreparedStatement } from '../../db/connect.js';
import type { Environment, IntentStatus, PaymentIntentsTable } from '../../db/schema.js';
import type { Executor } from '../../db/transaction.js';
import { fanOutSql } from '../events/outbox.js';

export type IntentRow = Selectable<PaymentIntentsTable>;

export interface RefundRow {
  id: string;
  amount: number;
  reason: string | null;
  status: 'SUCCEEDED';
  createdAt: Date;
}

export type IntentWithRefunds = IntentRow & { refunds: RefundRow[] };

/**
 * The first free code at or after a random start, wrapping around: the start itself, else the
 * code right after the first taken code whose successor is free. Each branch is one walk of the
 * partial unique index, so allocation costs a few index reads even with most codes taken, and
 * never guesses at random against a full table. `$3` is the start, `$4` the environment, `$21`
 * the size of the code space.
 */
export const FREE_CODE_AT_OR_AFTER_START = `
  SELECT c FROM (
    (SELECT $3::int AS c
      WHERE NOT EXISTS (SELECT 1 FROM payment_intents WHERE environment = $4::text AND payment_code = $3::int))
    UNION ALL
    (SELECT p.payment_code + 1 FROM payment_intents p
      WHERE p.environment = $4::text AND p.payment_code >= $3::int AND p.payment_code < $21::int - 1
        AND NOT EXISTS (SELECT 1 FROM payment_intents q
                        WHERE q.environment = $4::text AND q.payment_code = p.payment_code + 1)
      ORDER BY p.payment_code LIMIT 1)
    UNION ALL
    (SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM payment_intents WHERE environment = $4::text AND payment_code = 0))
    UNION ALL
    (SELECT p.payment_code + 1 FROM payment_intents p
      WHERE p.environment = $4::text AND p.payment_code < $3::int AND p.payment_code < $21::int - 1
        AND NOT EXISTS (SELECT 1 FROM payment_intents q
                        WHERE q.environment = $4::text AND q.payment_code = p.payment_code + 1)
      ORDER BY p.payment_code LIMIT 1)
  ) AS free LIMIT 1`;

/**
 * The whole create as one statement (one round trip, one commit): allocate a code, insert the
 * intent, its `payment.created` event and the event's webhook deliveries, and store the idempotent response with the allocated
 * code written into it. With a `new` claim the statement also inserts the idempotency key: if the
 * key exists it inserts nothing and the caller answers as any write does. With a `held` claim (a
 * dead request's key taken over) it checks the claim is still ours. A unique clash on the intent
 * (a code taken by a concurrent create, a reference collision) fails the statement, which rolls
 * all of it back; the caller tries again with fresh values.
 */
function createStatement(claim: 'new' | 'held'): PreparedStatement {
  const intentColumns = `reference_number, short_code, business_id, environment, amount_type, amount,
      suggested_amount, label, metadata, success_url, cancel_url, status, payment_code, expires_at,
      created_at, updated_at`;
  const intentValues = `$5::text, $6::text, $7::text, $4::text, $8::text, $9::bigint, $10::bigint, $11::text,
      $12::jsonb, $13::text, $14::text, 'PENDING', candidate.c, $15::timestamptz, $16::timestamptz, $16::timestamptz`;
  const response = `overlay($19::text PLACING lpad(candidate.c::text, 6, '0') FROM $20::int FOR 6)`;
  const event = `event AS (
    INSERT INTO events (id, business_id, environment, event, subject, body, created_at)
    SELECT $17::text, $7::text, $4::text, 'payment.created', $5::text, $18::text, $16::timestamptz FROM inserted
    RETURNING id, business_id, environment, event, created_at
  ),
  deliveries AS (${fanOutSql('event')})`;
  const outcome = `SELECT (SELECT count(*) FROM claim)::int AS claimed,
         (SELECT count(*) FROM candidate)::int AS code_found,
         (SELECT payment_code FROM inserted) AS payment_code`;
  if (claim === 'new') {
    return {
      name: 'intents_create',
      text: `
      WITH candidate AS (${FREE_CODE_AT_OR_AFTER_START}),
      claim AS (
        INSERT INTO idempotency_keys (business_id, environment, idempotency_key, fingerprint, state,
          response_status, response_body)
        SELECT $7::text, $4::text, $1::text, $2::text, 'done', 201, ${response} FROM candidate
        ON CONFLICT (business_id, environment, idempotency_key) DO NOTHING
        RETURNING id
      ),
      inserted AS (
        INSERT INTO payment_intents (${intentColumns})
        SELECT ${intentValues} FROM candidate, claim
        RETURNING payment_code
      ),
      ${event}
      ${outcome}`,
    };
  }
  return {
    name: 'intents_create_with_held_claim',
    text: `
    WITH claim AS (
      SELECT id FROM idempotency_keys WHERE id = $1::bigint AND lock_token = $2::text FOR UPDATE
    ),
    candidate AS (${FREE_CODE_AT_OR_AFTER_START}),
    inserted AS (
      INSERT INTO payment_intents (${intentColumns})
      SELECT ${intentValues} FROM candidate, claim
      RETURNING payment_code
    ),
    ${event},
    stored AS (
      UPDATE idempotency_keys
      SET state = 'done', response_status = 201, lock_token = NULL, locked_at = NULL, response_body = ${response}
      FROM candidate, inserted
      WHERE idempotency_keys.id = $1::bigint
      RETURNING idempotency_keys.id
    )
    ${outcome}`,
  };
}
const CREATE_WITH_NEW_CLAIM = createStatement('new');
const CREATE_WITH_HELD_CLAIM = createStatement('held');

/** Either a key to claim in the create statement, or a claim this request already holds. */
export type CreateClaim = { key: string; fingerprint: string } | { rowId: number; token: string };

export interface NewIntent {
  claim: CreateClaim;
  randomStart: number;
  codeSpace: number;
  environment: Environment;
  referenceNumber: string;
  shortCode: string;
  businessId: string;
  amountType: 'FIXED' | 'OPEN';
  amount: number | null;
  suggestedAmount: number | null;
  label: string;
  metadata: Record<string, string>;
  successUrl: string | null;
  cancelUrl: string | null;
  expiresAt: Date;
  createdAt: Date;
  eventId: string;
  eventBody: string;
  /** The serialized response, with a placeholder code at `codePosition` (1-based). */
  responseBody: string;
  codePosition: number;
}

const UNIQUE_VIOLATION = '23505';

export interface CreateOutcome {
  claimed: boolean;
  codeFound: boolean;
  paymentCode: number | null;
}

/** Runs the create statement; `undefined` when a unique clash rolled it back (try again). */
export async function insertIntent(database: Database, intent: NewIntent): Promise<CreateOutcome | undefined> {
  const held = 'rowId' in intent.claim;
  const [first, second] =
    'rowId' in intent.claim ? [intent.claim.rowId, intent.claim.token] : [intent.claim.key, intent.claim.fingerprint];
  let rows;
  try {
    rows = await database.query<{ claimed: number; code_found: number; payment_code: number | null }>(
      held ? CREATE_WITH_HELD_CLAIM : CREATE_WITH_NEW_CLAIM,
      [
        first,
        second,
        intent.randomStart,
        intent.environment,
        intent.referenceNumber,
        intent.shortCode,
        intent.businessId,
        intent.amountType,
        intent.amount,
        intent.suggestedAmount,
        intent.label,
        JSON.stringify(intent.metadata),
        intent.successUrl,
        intent.cancelUrl,
        intent.expiresAt,
        intent.createdAt,
        intent.eventId,
        intent.eventBody,
        intent.responseBody,
        intent.codePosition,
        intent.codeSpace,
      ],
    );
  } catch (error) {
    if ((error as { code?: unknown }).code === UNIQUE_VIOLATION) return undefined;
    throw error;
  }
  const [row] = rows;
  return {
    claimed: (row?.claimed ?? 0) > 0,
    codeFound: (row?.code_found ?? 0) > 0,
    paymentCode: row?.payment_code ?? null,
  };
}

const REFUNDS_JSON = `coalesce((
    SELECT json_agg(json_build_object('id', r.id, 'amount', r.amount, 'reason', r.reason, 'status', r.status,
                                      'createdAt', r.created_at) ORDER BY r.created_at, r.id)
    FROM refunds r WHERE r.intent_id = i.id), '[]'::json) AS refunds`;

const GET_BY_REFERENCE: PreparedStatement = {
  name: 'intents_get_by_reference',
  text: `SELECT i.*, ${REFUNDS_JSON} FROM payment_intents i WHERE i.reference_number = $1`,
};

interface RawRefund {
  id: string;
  amount: number;
  reason: string | null;
  status: 'SUCCEEDED';
  createdAt: string;
}

function withParsedRefunds(row: IntentRow & { refunds: RawRefund[] }): IntentWithRefunds {
  return { ...row, refunds: row.refunds.map((refund) => ({ ...refund, createdAt: new Date(refund.createdAt) })) };
}

export async function findIntentWithRefunds(
  database: Database,
  referenceNumber: string,
): Promise<IntentWithRefunds | undefined> {
  const [row] = await database.query<IntentRow & { refunds: RawRefund[] }>(GET_BY_REFERENCE, [referenceNumber]);
  return row ? withParsedRefunds(row) : undefined;
}

/** Two shapes only (with and without a status), so each keeps one good plan for its index. */
function listStatement(withStatus: boolean): PreparedStatement {
  const filters = `business_id = $1 AND environment = $2 AND created_at >= $3::timestamptz AND created_at <= $4::timestamptz
    ${withStatus ? 'AND status = $7' : ''}`;
  return {
    name: withStatus ? 'intents_list_by_status' : 'intents_list',
    text: `
    SELECT total.n AS total, page.*
    FROM (SELECT count(*)::bigint AS n FROM payment_intents WHERE ${filters}) AS total
    LEFT JOIN LATERAL (
      SELECT i.*, ${REFUNDS_JSON}
      FROM (SELECT * FROM payment_intents WHERE ${filters}
            ORDER BY created_at DESC, reference_number DESC LIMIT $5 OFFSET $6) AS i
    ) AS page ON true
    ORDER BY page.created_at DESC, page.reference_number DESC`,
  };
}
const LIST = listStatement(false);
const LIST_BY_STATUS = listStatement(true);

export interface IntentListQuery {
  businessId: string;
  environment: Environment;
  status: IntentStatus | undefined;
  from: Date | undefined;
  to: Date | undefined;
  limit: number;
  offset: number;
}

export async function listIntents(
  database: Database,
  query: IntentListQuery,
): Promise<{ total: number; items: IntentWithRefunds[] }> {
  const values: unknown[] = [
    query.businessId,
    query.environment,
    query.from ?? '-infinity',
    query.to ?? 'infinity',
    query.limit,
    query.offset,
  ];
  if (query.status) values.push(query.status);
  const rows = await database.query<
    (IntentRow & { refunds: RawRefund[]; total: number }) | { total: number; id: null }
  >(query.status ? LIST_BY_STATUS : LIST, values);
  const total = Number(rows[0]?.total ?? 0);
  const items: IntentWithRefunds[] = [];
  for (const row of rows) {
    if (row.id === null) continue;
    const { total: _total, ...intent } = row as IntentRow & { refunds: RawRefund[]; total: number };
    items.push(withParsedRefunds(intent));
  }
  return { total, items };
}

/** Reads an intent inside a transaction, locking its row when the caller will change it. */
export async function lockIntent(trx: Executor, referenceNumber: string): Promise<IntentRow | undefined> {
  return trx
    .selectFrom('payment_intents')
    .selectAll()
    .where('reference_number', '=', referenceNumber)
    .forUpdate()
    .executeTakeFirst();
}

export async function findIntent(trx: Executor, referenceNumber: string): Promise<IntentRow | undefined> {
  return trx
    .selectFrom('payment_intents')
    .selectAll()
    .where('reference_number', '=', referenceNumber)
    .executeTakeFirst();
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

/** Payable intents whose time is up, locked for the caller's transaction; other workers skip them. */
export async function lockExpiredIntents(trx: Executor, limit: number): Promise<IntentRow[]> {
  return trx
    .selectFrom('payment_intents')
    .selectAll()
    .where('status', 'in', ['PENDING', 'FAILED'])
    .where('expires_at', '<=', sql<Date>`now()`)
    .orderBy('expires_at')
    .limit(limit)
    .forUpdate()
    .skipLocked()
    .execute();
}
