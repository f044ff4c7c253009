import { sql, type RawBuilder, type Selectable } from 'kysely';
import type { PaymentRequestStatus, PaymentRequestsTable } from '../../db/schema.js';
import type { Executor } from '../../db/transaction.js';
import { maskPhone } from '../../lib/phone.js';
import { eventRecord, type EventRecord } from '../events/outbox.js';
import type { UnitOfWork } from '../events/unit-of-work.js';
import { failureMessage } from '../payments/methods.js';
import type { PaymentFailureCode } from '../payments/state.js';
import { paymentEnd } from '../payments/store.js';

/**
 * How a payment request ends, written once. A request (modules/requests) is a payment of its
 * intent that waits for the payer; it ends when its payer answers, its merchant withdraws it or its
 * time is up (modules/requests), and also when its intent can no longer be paid through it: paid
 * another way, cancelled or expired. The intent's own changes end it in their statement, and the
 * requests module sits above intents, so the ending lives here, on the floor both reach.
 */

/** A request with its intent's reference, as every read answers it. */
export type RequestRow = Selectable<PaymentRequestsTable> & { intent_reference: string };

export type EndedRequestStatus = Exclude<PaymentRequestStatus, 'PENDING'>;

/** A request ends once: how its waiting payment ended says which way. */
export function endedStatus(ended: { paid: true } | { paid: false; failure: PaymentFailureCode }): EndedRequestStatus {
  if (ended.paid) return 'APPROVED';
  switch (ended.failure) {
    case 'DECLINED':
      return 'DECLINED';
    case 'TIMED_OUT':
      return 'EXPIRED';
    case 'CANCELLED':
      return 'CANCELLED';
    default:
      // Approved, and the payment failed (too little balance, the intent no longer payable).
      return 'FAILED';
  }
}

/** The event each ending sends. */
export const REQUEST_EVENTS = {
  APPROVED: 'payment_request.approved',
  DECLINED: 'payment_request.declined',
  EXPIRED: 'payment_request.expired',
  CANCELLED: 'payment_request.cancelled',
  FAILED: 'payment_request.failed',
} as const satisfies Record<EndedRequestStatus, string>;

/** A request's event, from its row as the event's moment leaves it. */
export function requestEvent(
  name: (typeof REQUEST_EVENTS)[keyof typeof REQUEST_EVENTS] | 'payment_request.created',
  row: RequestRow,
  at: Date,
): EventRecord {
  return eventRecord(
    name,
    { businessId: row.business_id, environment: row.environment },
    row.id,
    {
      id: row.id,
      intent: row.intent_reference,
      status: row.status,
      amount: Number(row.amount),
      currency: 'MRU',
      phone: maskPhone(row.phone),
      message: row.message,
      failure_code: row.failure_code,
      expires_at: row.expires_at.toISOString(),
      created_at: row.created_at.toISOString(),
      ended_at: row.ended_at?.toISOString() ?? null,
    },
    at,
  );
}

/** The end of pending requests (alias `r`), a statement the caller may extend with RETURNING. */
export function requestEndStatement(
  ids: readonly string[],
  end: { status: EndedRequestStatus; failureCode: string | null; at: Date },
): RawBuilder<unknown> {
  return sql`UPDATE payment_requests r SET status = ${end.status}, failure_code = ${end.failureCode}::text,
      ended_at = ${end.at}::timestamptz, updated_at = ${end.at}::timestamptz
    WHERE r.id IN (${sql.join(ids)}) AND r.status = 'PENDING'`;
}

/**
 * The pending requests of intents the caller holds locked, but the one whose payment is `paying`
 * (the approval that pays the intent ends its own request). Every end of a request locks its
 * intent first, so what is read here is what the intent's statement ends.
 */
export async function pendingRequestsOf(
  trx: Executor,
  intentIds: readonly number[],
  paying?: string,
): Promise<RequestRow[]> {
  if (intentIds.length === 0) return [];
  const result = await sql<RequestRow>`
    SELECT r.*, i.reference_number AS intent_reference
    FROM payment_requests r JOIN payment_intents i ON i.id = r.intent_id
    WHERE r.intent_id IN (${sql.join(intentIds)}) AND r.status = 'PENDING'
      ${paying === undefined ? sql`` : sql`AND r.payment_id <> ${paying}`}`.execute(trx);
  return result.rows;
}

/**
 * Adds to the intent's unit of work the end of its pending requests, once the intent can no longer
 * be paid through them: each waiting payment FAILED with `failure` (`CANCELLED`: the intent was
 * cancelled or paid another way; `TIMED_OUT`: it expired), each request CANCELLED or EXPIRED
 * accordingly (`endedStatus`), with its event. Nothing moved while it waited, so nothing moves back.
 */
export function withdrawRequests<R>(
  unit: UnitOfWork<R>,
  requests: readonly RequestRow[],
  failure: 'CANCELLED' | 'TIMED_OUT',
  now: Date,
): UnitOfWork<R> {
  if (requests.length === 0) return unit;
  const status = endedStatus({ paid: false, failure });
  for (const request of requests) {
    unit.write(
      paymentEnd(request.payment_id, {
        status: 'FAILED',
        failure: { code: failure, message: failureMessage(failure, Number(request.amount)) },
        at: now,
      }),
    );
  }
  unit.write(
    requestEndStatement(
      requests.map((request) => request.id),
      { status, failureCode: null, at: now },
    ),
  );
  return unit.events(
    requests.map((request) =>
      requestEvent(
        REQUEST_EVENTS[status],
        { ...request, status, failure_code: null, ended_at: now, updated_at: now },
        now,
      ),
    ),
  );
}
