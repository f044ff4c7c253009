import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { DB, Environment } from './schema.js';
import type { Executor } from './transaction.js';

/**
 * Pages of the big lists (intents, orders, products, webhook deliveries) with an exact `total`
 * that costs the same at 1,000 rows as at 1,000,000. Migration 018 keeps a count per business,
 * environment, UTC creation day and status, changed by triggers in the statement that changes a
 * row. A page's statement sums those counts (the days a date range cuts through are counted from
 * the rows), finds the day its offset falls in, and reads from that day on: a deep page skips at
 * most one day's rows instead of every newer row. One statement, so the total and the page come
 * from the same snapshot.
 */

export type CountedListName =
  | 'intents'
  | 'orders'
  | 'products'
  | 'deliveries'
  | 'balance'
  /** Events per event name (migration 058): the name stands for the status. */
  | 'events'
  /** Webhook deliveries per status and event name, keyed by deliveryEventCountKey (migration 058). */
  | 'delivery events';

export interface CountedTable {
  list: CountedListName;
  table: 'payment_intents' | 'orders' | 'products' | 'webhook_deliveries' | 'balance_transactions';
  /** The unique column that orders rows created in the same microsecond. */
  tiebreak: 'reference_number' | 'id';
  /** The column counted as the status (`status` unless named). */
  statusColumn?: 'type';
  /**
   * The column a page is ordered by within a day, when not created_at then the tiebreak: the
   * balance transactions' applied_order (migration 053), the order their balance took them in.
   */
  orderColumn?: 'applied_order';
}

export interface CountedListQuery {
  businessId: string;
  environment: Environment;
  /** The statuses the list shows (one for a status filter, else every status it shows). */
  statuses: readonly string[];
  /** Whether the rows must be filtered on status (false when every row that exists is shown). */
  filterRowsByStatus: boolean;
  /**
   * The count keys summed, when the list is counted under a finer key than `statuses` (the
   * 'delivery events' pairs): `where` then narrows the rows exactly as these keys narrow the counts.
   */
  countKeys?: readonly string[];
  /**
   * Conditions on the row `t` beyond business, environment, status and dates that every counted
   * row meets (the total comes from the counts, so these must not narrow the list beyond what
   * `countKeys` narrows).
   */
  where?: RawBuilder<boolean>;
  from?: Date | undefined;
  to?: Date | undefined;
  order: 'newest' | 'oldest';
  limit: number;
  offset: number;
}

const DAY_MS = 24 * 60 * 60 * 1000;

function utcDayStart(time: Date): Date {
  return new Date(Math.floor(time.getTime() / DAY_MS) * DAY_MS);
}

function isoDay(time: Date): string {
  return time.toISOString().slice(0, 10);
}

/** `status IN (...)`, or false for no key at all (a filter nothing the caller reads matches). */
function countKeyFilter(keys: readonly string[]): RawBuilder<boolean> {
  return keys.length === 0 ? sql<boolean>`false` : sql<boolean>`status IN (${sql.join([...keys])})`;
}

/**
 * The key a webhook delivery is counted under in 'delivery events': its status and event name,
 * as migration 058's delivery_event_count_key writes it.
 */
export function deliveryEventCountKey(status: string, event: string): string {
  return `${status} ${event}`;
}

/**
 * The exact number of rows a list counts under `keys` (statuses, or event names for 'events'),
 * as one scalar expression: a page's statement selects it beside its rows, so both come from the
 * same snapshot.
 */
export function countedTotal(
  list: CountedListName,
  businessId: string,
  environment: Environment,
  keys: readonly string[],
): RawBuilder<number> {
  return sql<number>`(SELECT coalesce(sum(n), 0)::bigint FROM list_counts
    WHERE list = ${list} AND business_id = ${businessId} AND environment = ${environment} AND ${countKeyFilter(keys)})`;
}

/**
 * One page of `table` and the exact number of rows the query matches. `select` is what each page
 * row answers, over the row `t`. Rows come back in the list's order.
 */
export async function countedPage<Row>(
  executor: Executor | Kysely<DB>,
  table: CountedTable,
  query: CountedListQuery,
  select: RawBuilder<unknown> = sql`t.*`,
): Promise<{ total: number; items: Row[] }> {
  const rowsTable = sql.table(table.table);
  const tiebreak = sql.ref(`t.${table.tiebreak}`);
  const ordering = table.orderColumn ? sql.ref(`t.${table.orderColumn}`) : undefined;
  const rowFilter = sql.join(
    [
      sql`t.business_id = ${query.businessId}`,
      sql`t.environment = ${query.environment}`,
      ...(query.filterRowsByStatus
        ? [sql`${sql.ref(`t.${table.statusColumn ?? 'status'}`)} IN (${sql.join([...query.statuses])})`]
        : []),
      ...(query.where ? [query.where] : []),
      ...(query.from ? [sql`t.created_at >= ${query.from}::timestamptz`] : []),
      ...(query.to ? [sql`t.created_at <= ${query.to}::timestamptz`] : []),
    ],
    sql` AND `,
  );
  const countedRows = (start: Date, end: Date, endInclusive: boolean) =>
    sql`SELECT ${isoDay(start)}::date, count(*)::bigint FROM ${rowsTable} AS t
      WHERE ${rowFilter} AND t.created_at >= ${start}::timestamptz
        AND t.created_at ${endInclusive ? sql`<=` : sql`<`} ${end}::timestamptz`;

  // Days wholly inside the range come from the counts; a day the range cuts is counted row by row.
  const fromDay = query.from ? utcDayStart(query.from) : undefined;
  const toDay = query.to ? utcDayStart(query.to) : undefined;
  const edges: RawBuilder<unknown>[] = [];
  if (query.from && query.to && fromDay!.getTime() === toDay!.getTime()) {
    edges.push(countedRows(query.from, query.to, true));
  } else {
    if (query.from) edges.push(countedRows(query.from, new Date(fromDay!.getTime() + DAY_MS), false));
    if (query.to) edges.push(countedRows(toDay!, query.to, true));
  }
  const countFilter = sql.join(
    [
      sql`list = ${table.list}`,
      sql`business_id = ${query.businessId}`,
      sql`environment = ${query.environment}`,
      countKeyFilter(query.countKeys ?? query.statuses),
      ...(fromDay ? [sql`day > ${isoDay(fromDay)}::date`] : []),
      ...(toDay ? [sql`day < ${isoDay(toDay)}::date`] : []),
    ],
    sql` AND `,
  );
  const days = sql.join(
    [sql`SELECT day, sum(n)::bigint FROM list_counts WHERE ${countFilter} GROUP BY day`, ...edges],
    sql` UNION ALL `,
  );

  const newest = query.order === 'newest';
  const direction = newest ? sql`DESC` : sql`ASC`;
  // The first day of the page, and how many of its rows come before the page. Ordered by another
  // column than the creation time (applied_order), a day's rows are not together in the order:
  // the page is read from the start of the order, skipping `offset` rows of the filtered index
  // (the counts give only the total), else a page boundary across a UTC midnight repeats a row
  // and drops another (decision 086).
  const pageBound = ordering
    ? sql`true`
    : newest
      ? sql`t.created_at < (SELECT (day + 1)::timestamp AT TIME ZONE 'UTC' FROM start)`
      : sql`t.created_at >= (SELECT day::timestamp AT TIME ZONE 'UTC' FROM start)`;
  const result = await sql<{ list_total: number; list_created_at: Date | null } & Record<string, unknown>>`
    WITH days (day, n) AS (${days}),
    running AS (SELECT day, n, sum(n) OVER (ORDER BY day ${direction}) AS through FROM days WHERE n > 0),
    start AS (
      SELECT day, (${query.offset}::bigint - (through - n))::bigint AS skip FROM running
      WHERE through > ${query.offset}::bigint ORDER BY day ${direction} LIMIT 1
    )
    SELECT (SELECT coalesce(sum(n), 0) FROM days)::bigint AS list_total, page.*
    FROM (SELECT 1) AS one
    LEFT JOIN LATERAL (
      SELECT ${select}, t.created_at AS list_created_at, ${tiebreak} AS list_tiebreak,
        ${ordering ?? sql`NULL::bigint`} AS list_order
      FROM (
        SELECT * FROM ${rowsTable} AS t
        -- No start day: the page is past the end (or nothing matches); the scan is not even begun.
        WHERE EXISTS (SELECT 1 FROM start) AND ${rowFilter} AND ${pageBound}
        ORDER BY ${ordering ? sql`${ordering} ${direction}` : sql`t.created_at ${direction}, ${tiebreak} ${direction}`}
        LIMIT ${query.limit} OFFSET ${ordering ? sql`${query.offset}::bigint` : sql`(SELECT skip FROM start)`}
      ) AS t
    ) AS page ON true
    ORDER BY ${
      ordering
        ? sql`page.list_order ${direction}`
        : sql`page.list_created_at ${direction}, page.list_tiebreak ${direction}`
    }`.execute(executor);

  const total = Number(result.rows[0]?.list_total ?? 0);
  const items: Row[] = [];
  for (const row of result.rows) {
    if (row.list_created_at === null) continue;
    const {
      list_total: _total,
      list_created_at: _created,
      list_tiebreak: _tiebreak,
      list_order: _order,
      ...item
    } = row;
    items.push(item as Row);
  }
  return { total, items };
}

/** How many rows of a list a business has in each status (every day, every slot summed). */
export async function countsByStatus(
  executor: Executor | Kysely<DB>,
  list: CountedListName,
  businessId: string,
  environment: Environment,
): Promise<Map<string, number>> {
  const result = await sql<{ status: string; n: string }>`
    SELECT status, sum(n)::bigint AS n FROM list_counts
    WHERE list = ${list} AND business_id = ${businessId} AND environment = ${environment}
    GROUP BY status`.execute(executor);
  return new Map(result.rows.map((row) => [row.status, Number(row.n)]));
}

/**
 * Worker task: moves the counts writers left under their process's slot into slot 0, so a list
 * sums one row per day and status. Rows a running transaction holds are skipped (next time).
 * Slot-0 rows are written in key order, so two folds at once (one running past its interval)
 * queue rather than deadlock.
 */
export async function foldListCounts(db: Kysely<DB>, maxRows = 10_000): Promise<number> {
  const counts = await sql<{ folded: number }>`
    WITH moved AS (
      DELETE FROM list_counts WHERE ctid IN (
        SELECT ctid FROM list_counts WHERE slot <> 0 LIMIT ${maxRows} FOR UPDATE SKIP LOCKED)
      RETURNING list, business_id, environment, day, status, n
    ),
    folded AS (
      INSERT INTO list_counts (list, business_id, environment, day, status, slot, n)
      SELECT list, business_id, environment, day, status, 0, sum(n) FROM moved GROUP BY 1, 2, 3, 4, 5
      ORDER BY 1, 2, 3, 4, 5
      ON CONFLICT (list, business_id, environment, day, status, slot) DO UPDATE SET n = list_counts.n + excluded.n
    )
    SELECT count(*)::int AS folded FROM moved`.execute(db);
  const volume = await sql<{ folded: number }>`
    WITH moved AS (
      DELETE FROM paid_volume_days WHERE ctid IN (
        SELECT ctid FROM paid_volume_days WHERE slot <> 0 LIMIT ${maxRows} FOR UPDATE SKIP LOCKED)
      RETURNING business_id, environment, day, n, amount
    ),
    folded AS (
      INSERT INTO paid_volume_days (business_id, environment, day, slot, n, amount)
      SELECT business_id, environment, day, 0, sum(n), sum(amount) FROM moved GROUP BY 1, 2, 3
      ORDER BY 1, 2, 3
      ON CONFLICT (business_id, environment, day, slot)
      DO UPDATE SET n = paid_volume_days.n + excluded.n, amount = paid_volume_days.amount + excluded.amount
    )
    SELECT count(*)::int AS folded FROM moved`.execute(db);
  return (counts.rows[0]?.folded ?? 0) + (volume.rows[0]?.folded ?? 0);
}
