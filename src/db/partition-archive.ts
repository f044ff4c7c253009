import { sql, type Transaction } from 'kysely';
import { isLockTimeout, limitLockWait, listMonthTables, monthStart, monthText, partitionName } from './partitions.js';
import type { DB } from './schema.js';

/**
 * An old month of money records leaves the live tables (decision 091): its totals are kept in
 * archived_month_totals, so `ledger check` still adds up, and its partition is detached, a plain
 * table the operator dumps (pg_dump -t), verifies against the printed count and sum, then drops.
 */
export const ARCHIVABLE_TABLES = ['ledger_postings', 'balance_transactions'] as const;
export type ArchivableTable = (typeof ARCHIVABLE_TABLES)[number];

/** Statements may be asked for any month of the past year: those months stay. */
export const MONTHS_KEPT = 12;

export type ArchiveRefusal =
  | { reason: 'too recent'; earliest: string }
  | { reason: 'no such month' }
  | { reason: 'unsettled balance rows'; rows: number }
  | { reason: 'refundable seller rows'; rows: number }
  | { reason: 'lock timeout' };

export interface ArchivedMonth {
  table: ArchivableTable;
  month: string;
  /** The detached table to dump, verify and drop. */
  detached: string;
  rows: number;
  /** Sum of amount (ledger_postings) or of net (balance_transactions): what the dump must hold. */
  total: string;
}

export function isArchivable(table: string): table is ArchivableTable {
  return (ARCHIVABLE_TABLES as readonly string[]).includes(table);
}

/** The months that may be archived: up to the month MONTHS_KEPT + 1 before the current one. */
export function latestArchivableMonth(now = new Date()): Date {
  return monthStart(now, -(MONTHS_KEPT + 1));
}

/**
 * Archives one month in the caller's transaction (the operator API's write): the totals, then the
 * detach under a savepoint, so a lock not had in time undoes the detach alone and the caller can
 * refuse and roll back.
 */
export async function archiveMonth(
  trx: Transaction<DB>,
  table: ArchivableTable,
  month: Date,
  now = new Date(),
): Promise<{ archived: ArchivedMonth } | { refused: ArchiveRefusal }> {
  const latest = latestArchivableMonth(now);
  if (month > latest) return { refused: { reason: 'too recent', earliest: monthText(latest) } };
  const name = partitionName(table, month);
  const attached = (await listMonthTables(trx)).some((entry) => entry.name === name && entry.attached);
  if (!attached) return { refused: { reason: 'no such month' } };
  const partition = sql.id(name);
  if (table === 'balance_transactions') {
    // A payout still has to take these: they must stay where payouts look for them.
    const { rows } = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM ${partition} WHERE settled_by IS NULL AND source_kind <> 'payout'`.execute(trx);
    if (rows[0]!.n > 0) return { refused: { reason: 'unsettled balance rows', rows: rows[0]!.n } };
    // A refund of a split payment or order takes from each seller its share less what the
    // seller's earlier returns of it gave (split-refunds.ts reads them here): those rows stay
    // while the payment or order may still be refunded.
    const { rows: refundable } = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM ${partition} b
      WHERE b.seller_id IS NOT NULL AND (
        EXISTS (SELECT 1 FROM payment_intents i WHERE b.source_kind = 'payment_intent'
          AND i.business_id = b.business_id AND i.reference_number = b.source_reference
          AND i.total_amount_refunded < coalesce(i.amount_paid, 0))
        OR EXISTS (SELECT 1 FROM orders o WHERE b.source_kind = 'order'
          AND o.business_id = b.business_id AND o.reference_number = b.source_reference
          AND o.total_amount_refunded < o.amount_paid))`.execute(trx);
    if (refundable[0]!.n > 0) return { refused: { reason: 'refundable seller rows', rows: refundable[0]!.n } };
  }
  const monthDate = sql.lit(month.toISOString().slice(0, 10));
  await (
    table === 'ledger_postings'
      ? sql`
      INSERT INTO archived_month_totals (table_name, month, owner_id, environment, rows, total)
      SELECT 'ledger_postings', ${monthDate}::date, p.account_id, coalesce(a.environment, 'test'), count(*), sum(p.amount)
      FROM ${partition} p LEFT JOIN ledger_accounts a ON a.id = p.account_id
      GROUP BY p.account_id, a.environment`
      : sql`
      INSERT INTO archived_month_totals (table_name, month, owner_id, environment, rows, total)
      SELECT 'balance_transactions', ${monthDate}::date, business_id, environment, count(*), sum(net)
      FROM ${partition} GROUP BY business_id, environment`
  ).execute(trx);
  const { rows: totals } = await sql<{ rows: string; total: string }>`
    SELECT coalesce(sum(rows), 0)::text AS rows, coalesce(sum(total), 0)::text AS total FROM archived_month_totals
    WHERE table_name = ${table} AND month = ${monthDate}::date`.execute(trx);
  if (table === 'balance_transactions') {
    // A detach fires no DELETE trigger: the balance list's counts of the month's days go with it,
    // so its total stays the rows it can show (its day totals stay: statements read them).
    await sql`DELETE FROM list_counts WHERE list = 'balance'
      AND day >= ${monthDate}::date AND day < (${monthDate}::date + interval '1 month')::date`.execute(trx);
  }
  // The detach waits at most the lock timeout, then holds the parent for a catalog change only.
  await sql`SAVEPOINT archive_detach`.execute(trx);
  try {
    await limitLockWait(trx);
    await sql`ALTER TABLE ${sql.id(table)} DETACH PARTITION ${partition}`.execute(trx);
    await sql`RELEASE SAVEPOINT archive_detach`.execute(trx);
  } catch (error) {
    if (!isLockTimeout(error)) throw error;
    await sql`ROLLBACK TO SAVEPOINT archive_detach`.execute(trx);
    return { refused: { reason: 'lock timeout' } };
  }
  return {
    archived: {
      table,
      month: monthText(month),
      detached: name,
      rows: Number(totals[0]!.rows),
      total: totals[0]!.total,
    },
  };
}
