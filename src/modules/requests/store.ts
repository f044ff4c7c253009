import { sql, type Kysely } from 'kysely';
import type { DB, Environment } from '../../db/schema.js';
import type { Executor } from '../../db/transaction.js';
import type { EventRecord } from '../events/outbox.js';
import { unitOfWork } from '../events/unit-of-work.js';
import { requestEndStatement, type EndedRequestStatus, type RequestRow } from '../intents/request-ends.js';

export type { RequestRow };

const WITH_INTENT = sql`r.*, (SELECT reference_number FROM payment_intents WHERE id = r.intent_id) AS intent_reference`;

export async function findRequest(db: Executor | Kysely<DB>, id: string): Promise<RequestRow | undefined> {
  const result = await sql<RequestRow>`SELECT ${WITH_INTENT} FROM payment_requests r WHERE r.id = ${id}`.execute(db);
  return result.rows[0];
}

/** An intent's requests, newest first, with how many it has. */
export async function requestsOfIntent(
  db: Kysely<DB>,
  intentId: number,
  window: { limit: number; offset: number },
): Promise<{ items: RequestRow[]; total: number }> {
  const [items, count] = await Promise.all([
    sql<RequestRow>`SELECT ${WITH_INTENT} FROM payment_requests r WHERE r.intent_id = ${intentId}
      ORDER BY r.created_at DESC, r.id DESC LIMIT ${window.limit} OFFSET ${window.offset}`.execute(db),
    sql<{ n: number }>`SELECT count(*)::int AS n FROM payment_requests WHERE intent_id = ${intentId}`.execute(db),
  ]);
  return { items: items.rows, total: Number(count.rows[0]?.n ?? 0) };
}

/** What a business asked of one phone: its requests still pending and those of the last hour, with when each window frees a place. */
export async function askedOfPhone(
  db: Executor,
  owner: { businessId: string; environment: Environment },
  phone: string,
  since: Date,
): Promise<{
  pending: number;
  soonestExpiry: Date | null;
  lastHour: number;
  oldestInHour: Date | null;
  muted: boolean;
}> {
  const result = await sql<{
    pending: number;
    soonest_expiry: Date | null;
    last_hour: number;
    oldest_in_hour: Date | null;
    muted: boolean;
  }>`
    SELECT count(*) FILTER (WHERE status = 'PENDING')::int AS pending,
      min(expires_at) FILTER (WHERE status = 'PENDING') AS soonest_expiry,
      count(*) FILTER (WHERE created_at > ${since}::timestamptz)::int AS last_hour,
      min(created_at) FILTER (WHERE created_at > ${since}::timestamptz) AS oldest_in_hour,
      EXISTS (SELECT 1 FROM merchant_mutes m WHERE m.environment = ${owner.environment} AND m.phone = ${phone}
        AND m.business_id = ${owner.businessId}) AS muted
    FROM payment_requests
    WHERE business_id = ${owner.businessId} AND environment = ${owner.environment} AND phone = ${phone}
      AND (status = 'PENDING' OR created_at > ${since}::timestamptz)`.execute(db);
  const row = result.rows[0]!;
  return {
    pending: Number(row.pending),
    soonestExpiry: row.soonest_expiry,
    lastHour: Number(row.last_hour),
    oldestInHour: row.oldest_in_hour,
    muted: row.muted,
  };
}

export async function hasPendingRequest(db: Executor, intentId: number): Promise<boolean> {
  const result = await sql`SELECT 1 FROM payment_requests WHERE intent_id = ${intentId} AND status = 'PENDING'`.execute(
    db,
  );
  return result.rows.length > 0;
}

export interface NewRequest {
  id: string;
  businessId: string;
  environment: Environment;
  intentId: number;
  paymentId: string;
  phone: string;
  amount: number;
  message: string | null;
  expiresAt: Date;
  createdAt: Date;
}

/** A request and its `payment_request.created`, in one statement. */
export async function insertRequest(trx: Executor, request: NewRequest, event: EventRecord): Promise<void> {
  await unitOfWork()
    .write(
      sql`INSERT INTO payment_requests (id, business_id, environment, intent_id, payment_id, phone, amount, message,
        status, expires_at, created_at, updated_at)
      VALUES (${request.id}, ${request.businessId}, ${request.environment}, ${request.intentId}, ${request.paymentId},
        ${request.phone}, ${request.amount}, ${request.message}, 'PENDING', ${request.expiresAt}::timestamptz,
        ${request.createdAt}::timestamptz, ${request.createdAt}::timestamptz)`,
    )
    .events([event])
    .run(trx);
}

/**
 * A pending request's end and its event, in one statement; undefined when it had ended already
 * (its waiting payment decides who ends it, so this is a backstop).
 */
export async function endRequest(
  trx: Executor,
  id: string,
  end: { status: EndedRequestStatus; failureCode: string | null; at: Date },
  event: (ended: RequestRow) => EventRecord,
): Promise<RequestRow | undefined> {
  const result = await sql<RequestRow>`${requestEndStatement([id], end)} RETURNING ${WITH_INTENT}`.execute(trx);
  const ended = result.rows[0];
  if (ended)
    await unitOfWork()
      .events([event(ended)])
      .run(trx);
  return ended;
}

/** Pending requests whose time is up, oldest first. */
export async function dueRequests(db: Kysely<DB>, due: ReturnType<typeof sql<boolean>>, limit: number) {
  const result = await sql<RequestRow>`SELECT ${WITH_INTENT} FROM payment_requests r
    WHERE r.status = 'PENDING' AND ${due} ORDER BY r.expires_at LIMIT ${limit}`.execute(db);
  return result.rows;
}
