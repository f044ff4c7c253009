import { sql, type Kysely, type Transaction } from 'kysely';
import type { DB, DeliveryStatus } from '../../db/schema.js';
import { ApiError } from '../../http/errors.js';
import type { Caller } from './endpoints.js';

export interface DeliveryView {
  id: string;
  eventId: string;
  event: string;
  endpointId: string;
  url: string;
  status: DeliveryStatus;
  attemptCount: number;
  nextAttemptAt: string | null;
  lastStatusCode: number | null;
  lastError: string | null;
  sandbox: boolean;
  createdAt: string;
  updatedAt: string;
  completedAt: string | null;
}

export interface AttemptView {
  attempt: number;
  at: string;
  statusCode: number | null;
  durationMs: number | null;
  error: string | null;
  responseBodySnippet: string | null;
}

function deliveriesOf(db: Kysely<DB> | Transaction<DB>, caller: Caller) {
  return db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
    .where('d.business_id', '=', caller.businessId)
    .where('d.environment', '=', caller.environment);
}

const columns = [
  'd.id',
  'd.event_id',
  'd.event',
  'd.endpoint_id',
  'e.url',
  'd.status',
  'd.attempt_count',
  'd.next_attempt_at',
  'd.last_status_code',
  'd.last_error',
  'd.environment',
  'd.created_at',
  'd.updated_at',
  'd.completed_at',
] as const;

type DeliveryRow = {
  id: string;
  event_id: string;
  event: string;
  endpoint_id: string;
  url: string;
  status: DeliveryStatus;
  attempt_count: number;
  next_attempt_at: Date;
  last_status_code: number | null;
  last_error: string | null;
  environment: string;
  created_at: Date;
  updated_at: Date;
  completed_at: Date | null;
};

function view(row: DeliveryRow): DeliveryView {
  return {
    id: row.id,
    eventId: row.event_id,
    event: row.event,
    endpointId: row.endpoint_id,
    url: row.url,
    status: row.status,
    attemptCount: row.attempt_count,
    nextAttemptAt: row.status === 'PENDING' ? row.next_attempt_at.toISOString() : null,
    lastStatusCode: row.last_status_code,
    lastError: row.last_error,
    sandbox: row.environment === 'test',
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    completedAt: row.completed_at?.toISOString() ?? null,
  };
}

export interface DeliveryFilters {
  status?: DeliveryStatus;
  event?: string;
  endpointId?: string;
  from?: Date;
  to?: Date;
}

export async function listDeliveries(
  db: Kysely<DB>,
  caller: Caller,
  filters: DeliveryFilters,
  window: { limit: number; offset: number },
): Promise<{ items: DeliveryView[]; total: number }> {
  let query = deliveriesOf(db, caller);
  if (filters.status) query = query.where('d.status', '=', filters.status);
  if (filters.event) query = query.where('d.event', '=', filters.event);
  if (filters.endpointId) query = query.where('d.endpoint_id', '=', filters.endpointId);
  if (filters.from) query = query.where('d.created_at', '>=', filters.from);
  if (filters.to) query = query.where('d.created_at', '<=', filters.to);
  const [rows, total] = await Promise.all([
    query
      .select(columns)
      .orderBy('d.created_at', 'desc')
      .orderBy('d.id', 'desc')
      .limit(window.limit)
      .offset(window.offset)
      .execute(),
    query.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { items: rows.map(view), total: Number(total.n) };
}

async function findDelivery(db: Kysely<DB> | Transaction<DB>, caller: Caller, id: string): Promise<DeliveryRow> {
  const row = await deliveriesOf(db, caller).select(columns).where('d.id', '=', id).executeTakeFirst();
  if (!row) {
    // api.md 5 rule 4: the business's delivery in the other environment is a mismatch, not missing.
    const elsewhere = await db
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('id', '=', id)
      .where('business_id', '=', caller.businessId)
      .where('environment', '!=', caller.environment)
      .executeTakeFirst();
    throw new ApiError(elsewhere ? 'SANDBOX_MISMATCH' : 'DELIVERY_NOT_FOUND');
  }
  return row;
}

export async function getDelivery(
  db: Kysely<DB> | Transaction<DB>,
  caller: Caller,
  id: string,
): Promise<DeliveryView & { attempts: AttemptView[]; payload: unknown }> {
  const row = await findDelivery(db, caller, id);
  const [attempts, event] = await Promise.all([
    db.selectFrom('webhook_attempts').selectAll().where('delivery_id', '=', id).orderBy('attempt').execute(),
    db.selectFrom('events').select('body').where('id', '=', row.event_id).executeTakeFirstOrThrow(),
  ]);
  return {
    ...view(row),
    attempts: attempts.map((attempt) => ({
      attempt: attempt.attempt,
      at: attempt.started_at.toISOString(),
      statusCode: attempt.status_code,
      durationMs: attempt.duration_ms,
      error: attempt.error,
      responseBodySnippet: attempt.response_snippet,
    })),
    payload: JSON.parse(event.body) as unknown,
  };
}

/**
 * Manual retry, in any state: a finished delivery (DEAD or SUCCEEDED) starts a fresh 8-attempt
 * schedule; a waiting one is simply due now.
 */
export async function retryDelivery(trx: Transaction<DB>, caller: Caller, id: string) {
  const row = await findDelivery(trx, caller, id);
  const endpoint = await trx
    .selectFrom('webhook_endpoints')
    .select('deleted_at')
    .where('id', '=', row.endpoint_id)
    .executeTakeFirstOrThrow();
  if (endpoint.deleted_at) {
    throw new ApiError('ENDPOINT_NOT_FOUND', 'The endpoint of this delivery was deleted; it cannot be retried.');
  }
  await trx
    .updateTable('webhook_deliveries')
    .set({
      status: 'PENDING',
      next_attempt_at: sql<Date>`now()`,
      ...(row.status === 'PENDING' ? {} : { attempt_count: 0, completed_at: null }),
      updated_at: sql<Date>`now()`,
    })
    .where('id', '=', id)
    .execute();
  return getDelivery(trx, caller, id);
}
