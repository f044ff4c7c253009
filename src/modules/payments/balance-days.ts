import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { DB } from '../../db/schema.js';
import { ownedBy, type BalanceOwner } from './balance-transactions.js';

/**
 * A balance statement's sums from the day totals of migration 059 (balance_days, decision 097):
 * whole UTC days, before and inside the period, from the totals, kept by the insert trigger in
 * the transaction that writes the rows; only the rows of a day the period's edge cuts through
 * from balance_transactions. So a statement reads a row per day and type of the owner's history,
 * not a row per transaction, and a month archived (detached) still counts in every later opening
 * balance: detaching fires no trigger.
 */

const DAY_MS = 24 * 60 * 60 * 1000;

/** One type's figures: the period's count and sums, and the net of everything before it. */
export interface TypeSums {
  type: string;
  count: number;
  gross: number;
  fees: number;
  net: number;
  before: number;
}

function dayStart(time: Date): Date {
  return new Date(Math.floor(time.getTime() / DAY_MS) * DAY_MS);
}

function nextDayStart(time: Date): Date {
  return new Date(Math.ceil(time.getTime() / DAY_MS) * DAY_MS);
}

function isoDay(time: Date): string {
  return time.toISOString().slice(0, 10);
}

/** A stretch of time read row by row: [start, end). */
interface Edge {
  start: Date;
  end: Date;
}

/** The days of `owner`'s totals: the business's own are filed under seller ''. */
function sellerKey(owner: BalanceOwner): string {
  return owner.seller ?? '';
}

/**
 * The owner's figures for [from, to), by type. Days wholly before `from` and wholly inside the
 * period come from the totals; the rest of the day `from` falls in, and the part of the period
 * outside its whole days, from the rows (none for a period of whole UTC days, as every statement
 * period is today).
 */
export async function sumsByType(
  db: Kysely<DB>,
  owner: BalanceOwner,
  period: { from: Date; to: Date },
): Promise<TypeSums[]> {
  const { from, to } = period;
  const beforeDays = dayStart(from);
  const wholeFrom = nextDayStart(from);
  const wholeTo = dayStart(to);
  const hasWholeDays = wholeFrom < wholeTo;
  const edges: Edge[] = [{ start: beforeDays, end: from }];
  if (hasWholeDays) edges.push({ start: from, end: wholeFrom }, { start: wholeTo, end: to });
  else edges.push({ start: from, end: to });
  const rowEdges = edges.filter((edge) => edge.start < edge.end);

  const inPeriodDay = hasWholeDays
    ? sql<boolean>`day >= ${isoDay(wholeFrom)}::date AND day < ${isoDay(wholeTo)}::date`
    : sql<boolean>`false`;
  const beforeDay = sql<boolean>`day < ${isoDay(beforeDays)}::date`;
  const days = sql`
    SELECT type,
      coalesce(sum(n) FILTER (WHERE ${inPeriodDay}), 0) AS count,
      coalesce(sum(amount) FILTER (WHERE ${inPeriodDay}), 0) AS gross,
      coalesce(sum(fee) FILTER (WHERE ${inPeriodDay}), 0) AS fees,
      coalesce(sum(net) FILTER (WHERE ${inPeriodDay}), 0) AS net,
      coalesce(sum(net) FILTER (WHERE ${beforeDay}), 0) AS before
    FROM balance_days
    WHERE business_id = ${owner.businessId} AND environment = ${owner.environment} AND seller_id = ${sellerKey(owner)}
      AND (${beforeDay} OR ${inPeriodDay})
    GROUP BY type`;
  const parts: RawBuilder<unknown>[] = [days];
  if (rowEdges.length > 0) {
    const inPeriod = sql<boolean>`created_at >= ${from}::timestamptz`;
    const inEdges = sql.join(
      rowEdges.map((edge) => sql`(created_at >= ${edge.start}::timestamptz AND created_at < ${edge.end}::timestamptz)`),
      sql` OR `,
    );
    parts.push(sql`
      SELECT type,
        count(*) FILTER (WHERE ${inPeriod}) AS count,
        coalesce(sum(amount) FILTER (WHERE ${inPeriod}), 0) AS gross,
        coalesce(sum(fee) FILTER (WHERE ${inPeriod}), 0) AS fees,
        coalesce(sum(net) FILTER (WHERE ${inPeriod}), 0) AS net,
        coalesce(sum(net) FILTER (WHERE NOT ${inPeriod}), 0) AS before
      FROM balance_transactions
      WHERE business_id = ${owner.businessId} AND environment = ${owner.environment} AND ${ownedBy(owner)}
        AND (${inEdges})
      GROUP BY type`);
  }
  const result = await sql<TypeSums>`
    SELECT type, sum(count)::int AS count, sum(gross)::bigint AS gross, sum(fees)::bigint AS fees,
      sum(net)::bigint AS net, sum(before)::bigint AS before
    FROM (${sql.join(parts, sql` UNION ALL `)}) AS figures
    GROUP BY type`.execute(db);
  return result.rows;
}

/**
 * Worker task: moves the totals writers left under their process's slot into slot 0, so a
 * statement sums one row per day and type. Rows a running transaction holds are skipped (next
 * time); slot-0 rows are written in key order, so two folds at once queue rather than deadlock.
 */
export async function foldBalanceDays(db: Kysely<DB>, maxRows = 10_000): Promise<number> {
  const result = await sql<{ folded: number }>`
    WITH moved AS (
      DELETE FROM balance_days WHERE ctid IN (
        SELECT ctid FROM balance_days WHERE slot <> 0 LIMIT ${maxRows} FOR UPDATE SKIP LOCKED)
      RETURNING business_id, environment, seller_id, day, type, n, amount, fee, net
    ),
    folded AS (
      INSERT INTO balance_days (business_id, environment, seller_id, day, type, slot, n, amount, fee, net)
      SELECT business_id, environment, seller_id, day, type, 0, sum(n), sum(amount), sum(fee), sum(net)
      FROM moved GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
      ON CONFLICT (business_id, environment, seller_id, day, type, slot) DO UPDATE SET n = balance_days.n + excluded.n,
        amount = balance_days.amount + excluded.amount, fee = balance_days.fee + excluded.fee,
        net = balance_days.net + excluded.net
    )
    SELECT count(*)::int AS folded FROM moved`.execute(db);
  return result.rows[0]?.folded ?? 0;
}

/**
 * For `ledger check`: the days whose totals differ from their rows (at most `limit`), each as a
 * sentence. A month archived (decision 091) is left out: its rows left the table, its totals
 * stay, which is what keeps later statements right (decision 097).
 */
export async function dayTotalProblems(db: Kysely<DB>, limit = 20): Promise<string[]> {
  const { rows } = await sql<{ owner: string; day: string; type: string; totals: string; counted: string }>`
    WITH totals AS (
      SELECT business_id, environment, seller_id, day, type, sum(n) AS n, sum(amount) AS amount, sum(fee) AS fee,
        sum(net) AS net
      FROM balance_days GROUP BY 1, 2, 3, 4, 5
    ),
    counted AS (
      SELECT business_id, environment, coalesce(seller_id, '') AS seller_id, (created_at AT TIME ZONE 'UTC')::date AS day,
        type, count(*) AS n, sum(amount) AS amount, sum(fee) AS fee, sum(net) AS net
      FROM balance_transactions GROUP BY 1, 2, 3, 4, 5
    )
    SELECT concat_ws(' ', business_id, environment, nullif(seller_id, '')) AS owner, day::text AS day, type,
      concat_ws('/', coalesce(t.n, 0), coalesce(t.amount, 0), coalesce(t.fee, 0), coalesce(t.net, 0)) AS totals,
      concat_ws('/', coalesce(c.n, 0), coalesce(c.amount, 0), coalesce(c.fee, 0), coalesce(c.net, 0)) AS counted
    FROM totals t FULL JOIN counted c USING (business_id, environment, seller_id, day, type)
    WHERE (coalesce(t.n, 0), coalesce(t.amount, 0), coalesce(t.fee, 0), coalesce(t.net, 0))
        IS DISTINCT FROM (coalesce(c.n, 0), coalesce(c.amount, 0), coalesce(c.fee, 0), coalesce(c.net, 0))
      AND NOT EXISTS (SELECT 1 FROM archived_month_totals a
        WHERE a.table_name = 'balance_transactions' AND a.month = date_trunc('month', day)::date)
    ORDER BY 1, 2, 3 LIMIT ${limit}`.execute(db);
  return rows.map(
    (row) =>
      `balance day totals of ${row.owner} on ${row.day} (${row.type}) say ${row.totals} (count/amount/fee/net), its rows ${row.counted}`,
  );
}
