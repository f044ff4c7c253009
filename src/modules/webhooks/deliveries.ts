import { sql, type Kysely, type Selectable, type Transaction } from 'kysely';
import type { DB, DeadReason, DeliveryStatus, WebhookAttemptsTable } from '../../db/schema.js';
import { countedPage, deliveryEventCountKey, type CountedTable } from '../../db/counted-list.js';
import { inOtherEnvironment } from '../../http/environments.js';
import { ApiError } from '../../http/errors.js';
import type { ScopedCaller } from '../../http/context.js';
import type { ErrorClass } from './sender.js';
import { checkEndpointScopes, readableDeliveryEvents } from './scopes.js';
import { wakeWorkers } from './wake.js';
import {
  assertDeliveryAction,
  DELIVERY_STATUSES,
  deliveryMachine,
  fromStatuses,
  isWaiting,
  toStatus,
  type DeliveryAction,
} from './delivery-state.js';

export interface DeliveryView {
  id: string;
  eventId: string;
  event: string;
  endpointId: string;
  url: string;
  status: DeliveryStatus;
  /** Why no attempt will follow: set exactly while the status is DEAD. */
  deadReason: DeadReason | null;
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
  errorClass: ErrorClass | null;
  /** decisions.md: the first 1 KB of the answer (the whole kept body is in `response`). */
  responseBodySnippet: string | null;
  request: { headers: Record<string, string> } | null;
  response: { statusCode: number; headers: Record<string, string>; body: string } | null;
}

const SNIPPET_BYTES = 1024;

function attemptView(row: Selectable<WebhookAttemptsTable>): AttemptView {
  return {
    attempt: row.attempt,
    at: row.started_at.toISOString(),
    statusCode: row.status_code,
    durationMs: row.duration_ms,
    error: row.error,
    errorClass: row.error_class as ErrorClass | null,
    responseBodySnippet:
      row.response_body === null
        ? null
        : Buffer.from(row.response_body, 'utf8').subarray(0, SNIPPET_BYTES).toString('utf8'),
    request: row.request_headers ? { headers: row.request_headers } : null,
    response:
      row.status_code === null
        ? null
        : { statusCode: row.status_code, headers: row.response_headers ?? {}, body: row.response_body ?? '' },
  };
}

/** The caller's deliveries: of its business and environment, and of the events its key may read. */
function deliveriesOf(db: Kysely<DB> | Transaction<DB>, caller: ScopedCaller) {
  const readable = readableDeliveryEvents(caller);
  let query = db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
    .where('d.business_id', '=', caller.businessId)
    .where('d.environment', '=', caller.environment);
  if (readable) query = query.where('d.event', 'in', readable);
  return query;
}

const columns = [
  'd.id',
  'd.event_id',
  'd.event',
  'd.endpoint_id',
  'e.url',
  'd.status',
  'd.dead_reason',
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
  dead_reason: DeadReason | null;
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
    deadReason: row.dead_reason,
    attemptCount: row.attempt_count,
    nextAttemptAt: isWaiting(row.status) ? row.next_attempt_at.toISOString() : null,
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
  eventId?: string;
  from?: Date;
  to?: Date;
}

const DELIVERIES: CountedTable = { list: 'deliveries', table: 'webhook_deliveries', tiebreak: 'id' };
const DELIVERY_EVENTS: CountedTable = { list: 'delivery events', table: 'webhook_deliveries', tiebreak: 'id' };
const PAGE_COLUMNS = sql`t.id, t.event_id, t.event, t.endpoint_id,
  (SELECT e.url FROM webhook_endpoints e WHERE e.id = t.endpoint_id) AS url, t.status, t.dead_reason, t.attempt_count,
  t.next_attempt_at, t.last_status_code, t.last_error, t.environment, t.created_at, t.updated_at, t.completed_at`;

/**
 * A page of the delivery log, newest first, with the exact number that match: from the list
 * counts (counted-list.ts) unless it is filtered by endpoint or event id. A key that reads every
 * event, unfiltered, sums the counts per status; a key that reads some events, or a filter by
 * event, sums the counts per status and event name of the names shown (migration 058).
 */
export async function listDeliveries(
  db: Kysely<DB>,
  caller: ScopedCaller,
  filters: DeliveryFilters,
  window: { limit: number; offset: number },
): Promise<{ items: DeliveryView[]; total: number }> {
  if (!filters.endpointId && !filters.eventId) {
    const statuses = filters.status ? [filters.status] : DELIVERY_STATUSES;
    const readable = readableDeliveryEvents(caller);
    const names = filters.event ? (readable ?? [filters.event]).filter((name) => name === filters.event) : readable;
    const page = await countedPage<DeliveryRow>(
      db,
      names ? DELIVERY_EVENTS : DELIVERIES,
      {
        businessId: caller.businessId,
        environment: caller.environment,
        statuses,
        filterRowsByStatus: filters.status !== undefined,
        ...(names && {
          countKeys: statuses.flatMap((status) => names.map((name) => deliveryEventCountKey(status, name))),
          where: names.length > 0 ? sql<boolean>`t.event IN (${sql.join(names)})` : sql<boolean>`false`,
        }),
        from: filters.from,
        to: filters.to,
        order: 'newest',
        limit: window.limit,
        offset: window.offset,
      },
      PAGE_COLUMNS,
    );
    return { items: page.items.map(view), total: page.total };
  }
  let query = deliveriesOf(db, caller);
  if (filters.status) query = query.where('d.status', '=', filters.status);
  if (filters.event) query = query.where('d.event', '=', filters.event);
  if (filters.endpointId) query = query.where('d.endpoint_id', '=', filters.endpointId);
  if (filters.eventId) query = query.where('d.event_id', '=', filters.eventId);
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

/** DELIVERY_NOT_FOUND too for a delivery of an event the key may not read, as the Events API answers. */
async function findDelivery(db: Kysely<DB> | Transaction<DB>, caller: ScopedCaller, id: string): Promise<DeliveryRow> {
  const row = await deliveriesOf(db, caller).select(columns).where('d.id', '=', id).executeTakeFirst();
  if (!row) {
    // api.md 5 rule 4: the business's delivery in the other environment is a mismatch, not missing.
    const elsewhere = await inOtherEnvironment(db, 'webhook_deliveries', { column: 'id', value: id }, caller);
    throw new ApiError(elsewhere ? 'SANDBOX_MISMATCH' : 'DELIVERY_NOT_FOUND');
  }
  return row;
}

export async function getDelivery(
  db: Kysely<DB> | Transaction<DB>,
  caller: ScopedCaller,
  id: string,
): Promise<DeliveryView & { attempts: AttemptView[]; payload: unknown }> {
  const row = await findDelivery(db, caller, id);
  const [attempts, event] = await Promise.all([
    db.selectFrom('webhook_attempts').selectAll().where('delivery_id', '=', id).orderBy('attempt').execute(),
    db.selectFrom('events').select('body').where('id', '=', row.event_id).executeTakeFirstOrThrow(),
  ]);
  return {
    ...view(row),
    attempts: attempts.map(attemptView),
    payload: JSON.parse(event.body) as unknown,
  };
}

/**
 * Manual retry, in any state: a waiting delivery (PENDING, FAILED) is due now, on its schedule
 * (`hasten`); a finished one (SUCCEEDED, DEAD) starts a fresh 8-attempt schedule (`retry`). Its
 * endpoint must be active: a delivery to a disabled endpoint would wait with no attempt to come.
 */
export async function retryDelivery(trx: Transaction<DB>, caller: ScopedCaller, id: string) {
  const row = await findDelivery(trx, caller, id);
  const endpoint = await trx
    .selectFrom('webhook_endpoints')
    .select(['deleted_at', 'active', 'events'])
    .where('id', '=', row.endpoint_id)
    .executeTakeFirstOrThrow();
  if (endpoint.deleted_at) {
    throw new ApiError('ENDPOINT_NOT_FOUND', 'The endpoint of this delivery was deleted; it cannot be retried.');
  }
  checkEndpointScopes(endpoint, caller, 'retry the deliveries of');
  if (!endpoint.active) {
    throw new ApiError(
      'ENDPOINT_INACTIVE',
      'The endpoint of this delivery is disabled: re-enable it (PATCH active: true) before retrying its deliveries.',
    );
  }
  const action: DeliveryAction = isWaiting(row.status) ? 'hasten' : 'retry';
  await trx
    .updateTable('webhook_deliveries')
    .set({
      status: assertDeliveryAction(row.status, action),
      next_attempt_at: sql<Date>`now()`,
      ...(action === 'retry' ? { attempt_count: 0, completed_at: null, dead_reason: null } : {}),
      updated_at: sql<Date>`now()`,
    })
    .where('id', '=', id)
    .where(deliveryMachine.sqlFilter(action))
    .execute();
  await wakeWorkers(trx);
  return getDelivery(trx, caller, id);
}

/**
 * Queues a fresh 8-attempt schedule for every DEAD delivery of the endpoint created in
 * [since, until], oldest first, at most `batch` per call (config.webhookRecoverBatch). The endpoint row is locked, so two
 * calls at once queue each delivery once; a recovered delivery is PENDING, so calling again only
 * picks up what is left. With a rate limit, the recovered deliveries are spread over time at
 * that rate so they do not crowd the claim window.
 */
export async function recoverDeliveries(
  trx: Transaction<DB>,
  endpoint: { id: string; max_per_second: number | null },
  window: { since: Date; until: Date },
  batch: number,
): Promise<{ recovered: number; remaining: number }> {
  const spacing = endpoint.max_per_second ? 1 / endpoint.max_per_second : 0;
  // Planned for its own values, never generically: after a few calls the session's cached generic
  // plan (which knows neither the window nor how many rows it picks) joined the picked rows to
  // every DEAD row of the table, and a recover of 10,000 took two minutes instead of half a second.
  await sql`SET LOCAL plan_cache_mode = force_custom_plan`.execute(trx);
  const recovered = await sql<{ id: string }>`
    WITH picked AS (
      SELECT id, row_number() OVER (ORDER BY created_at, id) - 1 AS position
      FROM (
        SELECT id, created_at FROM webhook_deliveries
        WHERE endpoint_id = ${endpoint.id} AND status IN (${fromStatuses('recover')})
          AND created_at >= ${window.since} AND created_at <= ${window.until}
        ORDER BY created_at, id
        LIMIT ${batch}
      ) oldest
    )
    UPDATE webhook_deliveries d
    SET status = ${toStatus('recover')}, dead_reason = NULL, attempt_count = 0, completed_at = NULL, locked_by = NULL,
        locked_until = NULL,
        next_attempt_at = now() + make_interval(secs => picked.position * ${spacing}::float8), updated_at = now()
    FROM picked
    WHERE d.id = picked.id AND d.status IN (${fromStatuses('recover')})
    RETURNING d.id`.execute(trx);
  if (recovered.rows.length > 0) await wakeWorkers(trx);
  const left = await trx
    .selectFrom('webhook_deliveries')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('endpoint_id', '=', endpoint.id)
    .where(deliveryMachine.sqlFilter('recover'))
    .where('created_at', '>=', window.since)
    .where('created_at', '<=', window.until)
    .executeTakeFirstOrThrow();
  return { recovered: recovered.rows.length, remaining: Number(left.n) };
}
