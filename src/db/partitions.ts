import { sql, type Kysely, type Transaction } from 'kysely';
import type { DB } from './schema.js';
import { readDefaultPartitionRows } from './table-statistics.js';

/**
 * The tables partitioned by UTC month (migration 056, decision 091): one partition per month,
 * named `<table>_yYYYYmMM`, and `<table>_default` for a row no month holds yet. The worker creates
 * months ahead (`partitions-ahead`) and drops whole old months of the tables that have a retention
 * (`partitions-retention`); money records are never dropped, only archived by an operator.
 */
export const partitionedTables = [
  { table: 'ledger_postings', key: 'created_at', retention: 'archived by the operator' },
  { table: 'balance_transactions', key: 'created_at', retention: 'archived by the operator' },
  { table: 'events', key: 'created_at', retention: 'eventDays' },
  { table: 'webhook_attempts', key: 'started_at', retention: 'webhookAttemptDays' },
] as const;

export type PartitionedTableName = (typeof partitionedTables)[number]['table'];
type PartitionedTable = (typeof partitionedTables)[number];

/** How long a partition task's DDL waits for its lock: a payment queued behind it waits no longer. */
export const PARTITION_LOCK_TIMEOUT_MS = 50;
/** Months created ahead of the current one. */
export const MONTHS_AHEAD = 3;
const LOCK_NOT_AVAILABLE = '55P03';

/** The first instant of the UTC month of `at`, `months` months later. */
export function monthStart(at: Date, months = 0): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + months, 1));
}

export function partitionName(table: PartitionedTableName, month: Date): string {
  return `${table}_y${month.getUTCFullYear()}m${String(month.getUTCMonth() + 1).padStart(2, '0')}`;
}

/** The month a partition's name says, or undefined for a name that is not a month's. */
export function monthOf(table: PartitionedTableName, name: string): Date | undefined {
  const match = new RegExp(`^${table}_y(\\d{4})m(\\d{2})$`).exec(name);
  return match ? new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, 1)) : undefined;
}

/** `YYYY-MM`, the month as an operator writes it. */
export function monthText(month: Date): string {
  return month.toISOString().slice(0, 7);
}

function isoDate(day: Date): string {
  return day.toISOString().slice(0, 10);
}

function tableOf(name: PartitionedTableName): PartitionedTable {
  return partitionedTables.find((entry) => entry.table === name)!;
}

export function isLockTimeout(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === LOCK_NOT_AVAILABLE;
}

/** Every DDL of these tasks waits at most PARTITION_LOCK_TIMEOUT_MS for its lock, then gives up. */
export async function limitLockWait(trx: Transaction<DB>): Promise<void> {
  await sql.raw(`SET LOCAL lock_timeout = '${PARTITION_LOCK_TIMEOUT_MS}ms'`).execute(trx);
}

export interface MonthTable {
  table: PartitionedTableName;
  name: string;
  month: Date;
  attached: boolean;
  /** The planner's estimate (pg_class.reltuples): exact counts would read every row. */
  estimatedRows: number;
  bytes: number;
}

/** Every month table of the partitioned tables, attached or detached (an archive not yet dropped). */
export async function listMonthTables(db: Kysely<DB>): Promise<MonthTable[]> {
  const { rows } = await sql<{ name: string; attached: boolean; estimated_rows: number; bytes: string }>`
    SELECT c.relname AS name, c.relispartition AS attached, greatest(c.reltuples, 0)::float8 AS estimated_rows,
      pg_total_relation_size(c.oid)::text AS bytes
    FROM pg_class c
    WHERE c.relkind = 'r' AND pg_table_is_visible(c.oid) AND c.relname ~ '_y[0-9]{4}m[0-9]{2}$'
    ORDER BY c.relname`.execute(db);
  const tables: MonthTable[] = [];
  for (const row of rows) {
    for (const { table } of partitionedTables) {
      const month = monthOf(table, row.name);
      if (!month) continue;
      tables.push({
        table,
        name: row.name,
        month,
        attached: row.attached,
        estimatedRows: Number(row.estimated_rows),
        bytes: Number(row.bytes),
      });
    }
  }
  return tables;
}

export type EnsureOutcome = 'created' | 'exists' | 'lock timeout';

/**
 * Creates the month partitions of every table for the months from `from` to `to` (both included)
 * that have no table yet. A month is a plain table made LIKE its parent, then attached: ATTACH
 * PARTITION takes SHARE UPDATE EXCLUSIVE on the parent, which inserts do not wait for (CREATE
 * TABLE ... PARTITION OF would take ACCESS EXCLUSIVE), and ACCESS EXCLUSIVE on the default
 * partition only. Rows the default partition holds for that month move in the same transaction.
 * Each month is its own transaction; one whose lock is not had within the timeout is left to the
 * next run.
 */
export async function ensureMonthlyPartitions(
  db: Kysely<DB>,
  from: Date,
  to: Date,
): Promise<{ table: PartitionedTableName; month: string; outcome: EnsureOutcome }[]> {
  const existing = new Set((await listMonthTables(db)).map((month) => month.name));
  const outcomes: { table: PartitionedTableName; month: string; outcome: EnsureOutcome }[] = [];
  for (const { table } of partitionedTables) {
    for (let month = monthStart(from); month <= to; month = monthStart(month, 1)) {
      const outcome = existing.has(partitionName(table, month)) ? 'exists' : await createMonth(db, table, month);
      outcomes.push({ table, month: monthText(month), outcome });
    }
  }
  return outcomes;
}

async function createMonth(db: Kysely<DB>, table: PartitionedTableName, month: Date): Promise<EnsureOutcome> {
  const { key } = tableOf(table);
  const name = partitionName(table, month);
  const start = sql.lit(`${month.toISOString()}`);
  const end = sql.lit(`${monthStart(month, 1).toISOString()}`);
  try {
    await db.transaction().execute(async (trx) => {
      await limitLockWait(trx);
      // ATTACH needs this lock anyway; taken first, no update waiting on a row being moved out of
      // the default partition below finds it gone and does nothing (the fold, a payout settling).
      await sql`LOCK TABLE ${sql.id(`${table}_default`)} IN ACCESS EXCLUSIVE MODE`.execute(trx);
      await sql`CREATE TABLE ${sql.id(name)} (LIKE ${sql.id(table)} INCLUDING DEFAULTS INCLUDING CONSTRAINTS)`.execute(
        trx,
      );
      // The only delete ledger_postings' immutability trigger lets through (migration 056).
      if (table === 'ledger_postings') await sql`SET LOCAL devapi.moving_partition_rows = 'on'`.execute(trx);
      await sql`
        WITH moved AS (
          DELETE FROM ${sql.id(`${table}_default`)} WHERE ${sql.id(key)} >= ${start} AND ${sql.id(key)} < ${end}
          RETURNING *
        )
        INSERT INTO ${sql.id(name)} SELECT * FROM moved`.execute(trx);
      await sql`ALTER TABLE ${sql.id(table)} ATTACH PARTITION ${sql.id(name)} FOR VALUES FROM (${start}) TO (${end})`.execute(
        trx,
      );
    });
    return 'created';
  } catch (error) {
    if (isLockTimeout(error)) return 'lock timeout';
    throw error;
  }
}

/**
 * What a partition task did, as the worker logs it: `putOff` names the months whose lock was not
 * had in time (the worker warns; the next run tries them again).
 */
export interface PartitionTaskSummary {
  done: string[];
  putOff: string[];
  kept: string[];
}

function summarize(outcomes: { table: string; month: string; outcome: string }[]): PartitionTaskSummary {
  const summary: PartitionTaskSummary = { done: [], putOff: [], kept: [] };
  for (const { table, month, outcome } of outcomes) {
    const name = `${table} ${month}`;
    if (outcome === 'lock timeout') summary.putOff.push(name);
    else if (outcome === 'created' || outcome === 'dropped') summary.done.push(name);
    else if (outcome !== 'exists') summary.kept.push(`${name}: ${outcome.replace(/^kept: /, '')}`);
  }
  return summary;
}

/** The `partitions-ahead` task: this month and MONTHS_AHEAD more exist for every table. */
export async function createMonthsAhead(db: Kysely<DB>, now = new Date()): Promise<PartitionTaskSummary> {
  return summarize(await ensureMonthlyPartitions(db, monthStart(now), monthStart(now, MONTHS_AHEAD)));
}

/** The `partitions-retention` task. */
export async function dropMonthsPastRetention(
  db: Kysely<DB>,
  days: RetentionDays,
  now = new Date(),
): Promise<PartitionTaskSummary> {
  return summarize(await dropExpiredMonths(db, days, now));
}

export interface RetentionDays {
  eventDays: number;
  webhookAttemptDays: number;
}

export type DropOutcome = 'dropped' | 'kept: webhook deliveries point at its events' | 'lock timeout';

/**
 * The `partitions-retention` task: drops each month of events and webhook attempts whose whole
 * month ended more than its retention ago, each month detached in one transaction and dropped in
 * the next (a run stopped between them leaves a whole detached month, which the next run drops). An events month is kept while a webhook
 * delivery still names one of its events (delivery retention removes them first, decision 092).
 * DETACH ... CONCURRENTLY is refused beside a default partition, so the plain DETACH takes ACCESS
 * EXCLUSIVE on the parent for the few milliseconds of the catalog change, after waiting at most
 * the lock timeout.
 */
export async function dropExpiredMonths(
  db: Kysely<DB>,
  days: RetentionDays,
  now = new Date(),
): Promise<{ table: PartitionedTableName; month: string; outcome: DropOutcome }[]> {
  const outcomes: { table: PartitionedTableName; month: string; outcome: DropOutcome }[] = [];
  for (const month of await listMonthTables(db)) {
    const entry = tableOf(month.table);
    // Money months are never dropped: a detached one is an archive the operator dumps and drops.
    if (entry.retention !== 'eventDays' && entry.retention !== 'webhookAttemptDays') continue;
    const keptUntil = monthStart(month.month, 1).getTime() + days[entry.retention] * 86_400_000;
    if (keptUntil > now.getTime()) continue;
    outcomes.push({ table: month.table, month: monthText(month.month), outcome: await dropMonth(db, month) });
  }
  return outcomes;
}

async function dropMonth(db: Kysely<DB>, month: MonthTable): Promise<DropOutcome> {
  try {
    if (month.attached) {
      const detached = await db.transaction().execute(async (trx) => {
        await limitLockWait(trx);
        if (month.table === 'events') {
          // No new row lands in an ended month; a share lock makes sure while deliveries are looked for.
          await sql`LOCK TABLE ${sql.id(month.name)} IN SHARE MODE`.execute(trx);
          const { rows } = await sql<{ pointed: boolean }>`
            SELECT EXISTS (
              SELECT 1 FROM webhook_deliveries d WHERE d.event_id IN (SELECT id FROM ${sql.id(month.name)})
            ) AS pointed`.execute(trx);
          if (rows[0]?.pointed) return false;
          // A dropped partition fires no DELETE trigger: the month's counts of the events list
          // (migration 058) go in this transaction, before the DETACH takes the parent's lock.
          await sql`DELETE FROM list_counts WHERE list = 'events'
            AND day >= ${isoDate(month.month)}::date AND day < ${isoDate(monthStart(month.month, 1))}::date`.execute(
            trx,
          );
        }
        await sql`ALTER TABLE ${sql.id(month.table)} DETACH PARTITION ${sql.id(month.name)}`.execute(trx);
        return true;
      });
      if (!detached) return 'kept: webhook deliveries point at its events';
    }
    // Dropped in a transaction of its own: the parent's lock, taken by the detach, is not held
    // while the month's files and buffers go. A run stopped here leaves a detached month, which
    // the next run drops (listMonthTables lists it).
    await db.transaction().execute(async (trx) => {
      await limitLockWait(trx);
      await sql`DROP TABLE ${sql.id(month.name)}`.execute(trx);
    });
    return 'dropped';
  } catch (error) {
    if (isLockTimeout(error)) return 'lock timeout';
    throw error;
  }
}

/**
 * The rows each default partition holds (counted up to table-statistics' limit): a row there is
 * one whose month did not exist when it was written, the alert /metrics exports.
 */
export async function rowsInDefaultPartitions(
  db: Kysely<DB>,
): Promise<{ table: PartitionedTableName; rows: number }[]> {
  const caught = new Map((await readDefaultPartitionRows(db)).map(({ table, rows }) => [table, rows]));
  return partitionedTables.map(({ table }) => ({ table, rows: caught.get(table) ?? 0 }));
}
