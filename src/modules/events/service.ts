import { sql, type Kysely } from 'kysely';
import { countedTotal } from '../../db/counted-list.js';
import type { DB, Environment } from '../../db/schema.js';
import type { ScopedCaller } from '../../http/context.js';
import { inOtherEnvironment } from '../../http/environments.js';
import { ApiError } from '../../http/errors.js';
import { eventCatalog, EVENT_NAMES, WEBHOOK_NOTICES, type OutboxEventName } from './catalog.js';

export interface EventView {
  id: string;
  type: string;
  object: string;
  sequence: number;
  sandbox: boolean;
  createdAt: string;
  payload: unknown;
}

export interface EventFilters {
  type?: string;
  object?: string;
  after?: string;
}

/** The event names a key may read: those it could subscribe an endpoint to, and the webhook notices. */
export function readableEvents(scopes: readonly string[]): OutboxEventName[] {
  return [...EVENT_NAMES.filter((name) => scopes.includes(eventCatalog[name])), ...WEBHOOK_NOTICES];
}

/** The readable names a `type` filter (a name, or a prefix ending in `.*`) matches. */
function typeMatches(readable: readonly string[], type: string | undefined): string[] {
  if (type?.endsWith('.*')) return readable.filter((name) => name.startsWith(type.slice(0, -1)));
  return type ? readable.filter((name) => name === type) : [...readable];
}

interface EventRow {
  id: string;
  event: string;
  subject: string;
  sequence: number;
  environment: Environment;
  body: string;
  created_at: Date;
}

function view(row: EventRow): EventView {
  return {
    id: row.id,
    type: row.event,
    object: row.subject,
    sequence: Number(row.sequence),
    sandbox: row.environment === 'test',
    createdAt: row.created_at.toISOString(),
    payload: JSON.parse(row.body) as unknown,
  };
}

// Polling (`after`) reads only events of transactions older than every running one: nothing can
// commit behind them later, so a reader that remembers the last id it saw never skips an event. An
// event shows there once the transactions that started before its own have ended (milliseconds).
const SETTLED = sql`e.txid < pg_snapshot_xmin(pg_current_snapshot())::text::bigint`;

/**
 * The business's events, newest first (page by page) or, after a given event, oldest first.
 * Both read one order, (txid, seq): the order in which they became final, which the cursor
 * follows; newest first is its exact reverse. Insertion order (`seq` alone) is not it: a
 * transaction that took its id first may insert its events after another's, and events written
 * together share a `createdAt`, so neither can order the list without contradicting the cursor.
 */
export async function listEvents(
  db: Kysely<DB>,
  caller: ScopedCaller,
  filters: EventFilters,
  window: { limit: number; offset: number },
): Promise<{ items: EventView[]; total: number }> {
  const readable = readableEvents(caller.scopes);
  const conditions = [
    sql`e.business_id = ${caller.businessId}`,
    sql`e.environment = ${caller.environment}`,
    sql`e.event = ANY (${readable}::text[])`,
  ];
  if (filters.type?.endsWith('.*')) {
    conditions.push(sql`starts_with(e.event, ${filters.type.slice(0, -1)})`);
  } else if (filters.type) {
    conditions.push(sql`e.event = ${filters.type}`);
  }
  if (filters.object) conditions.push(sql`e.subject = ${filters.object}`);
  if (filters.after) {
    const anchor = await db
      .selectFrom('events')
      .select(['txid', 'seq'])
      .where('id', '=', filters.after)
      .where('business_id', '=', caller.businessId)
      .where('environment', '=', caller.environment)
      .executeTakeFirst();
    if (!anchor) {
      throw new ApiError('EVENT_NOT_FOUND', `No event ${filters.after} in this environment (query.after).`, [
        { field: 'query.after', message: 'unknown event' },
      ]);
    }
    conditions.push(sql`(e.txid, e.seq) > (${anchor.txid}::bigint, ${anchor.seq}::bigint)`, SETTLED);
  }
  const where = sql.join(conditions, sql` AND `);
  const columns = sql`e.id, e.event, e.subject, e.sequence, e.environment, e.body, e.created_at`;
  if (!filters.object && !filters.after) {
    // Newest first, unfiltered or by type: the total is summed from the per-name counts (migration
    // 058) in the page's own statement, instead of counting every event the business ever had.
    const total = countedTotal('events', caller.businessId, caller.environment, typeMatches(readable, filters.type));
    const { rows } = await sql<Partial<EventRow> & { list_total: string; txid: string | null }>`
      SELECT ${total} AS list_total, page.* FROM (SELECT 1) AS one
      LEFT JOIN LATERAL (
        SELECT ${columns}, e.txid, e.seq FROM events e WHERE ${where}
        ORDER BY e.txid DESC, e.seq DESC LIMIT ${window.limit} OFFSET ${window.offset}
      ) AS page ON true
      ORDER BY page.txid DESC, page.seq DESC`.execute(db);
    const items = rows.filter((row) => row.txid !== null).map((row) => view(row as EventRow));
    return { items, total: Number(rows[0]?.list_total ?? 0) };
  }
  // An object's events, or those after a cursor (how far a poller is behind): counted from the
  // rows, which are few. Read along events_feed_idx (business, environment, txid, seq).
  const order = filters.after ? sql`e.txid, e.seq` : sql`e.txid DESC, e.seq DESC`;
  const [rows, count] = await Promise.all([
    sql<EventRow>`
      SELECT ${columns} FROM events e WHERE ${where} ORDER BY ${order} LIMIT ${window.limit} OFFSET ${window.offset}`.execute(
      db,
    ),
    sql<{ total: number }>`SELECT count(*)::int AS total FROM events e WHERE ${where}`.execute(db),
  ]);
  return { items: rows.rows.map(view), total: count.rows[0]?.total ?? 0 };
}

export async function getEvent(db: Kysely<DB>, caller: ScopedCaller, id: string): Promise<EventView> {
  const row = await db
    .selectFrom('events')
    .select(['id', 'event', 'subject', 'sequence', 'environment', 'body', 'created_at'])
    .where('id', '=', id)
    .where('business_id', '=', caller.businessId)
    .where('environment', '=', caller.environment)
    .where('event', 'in', readableEvents(caller.scopes))
    .executeTakeFirst();
  if (row) return view(row);
  // An event of the caller's business in the other environment is a mismatch (api.md 5 rule 4).
  const elsewhere = await inOtherEnvironment(db, 'events', { column: 'id', value: id }, caller);
  throw new ApiError(elsewhere ? 'SANDBOX_MISMATCH' : 'EVENT_NOT_FOUND');
}
