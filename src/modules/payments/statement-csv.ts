import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { csvTextCell } from '../../lib/csv.js';
import { fillText, type Lang } from '../../lib/i18n.js';
import { balanceTransactionTexts, type ExportRow } from './balance-transactions.js';
import { balanceTypeLabel } from './balance-type-labels.js';
import { describeBalance } from './balance-wording.js';
import { statementDictionaries, type StatementDictionary, type StatementKey } from './statement-i18n.js';
import type { BalanceStatement } from './statement-types.js';

/**
 * A balance statement as CSV (statements.ts `statementFile`), and what its printable page shares
 * with it: the period's rows in the order the balance took them, the balance
 * after each.
 */

/**
 * The CSV's transaction columns, in the file's language (decision 086): what a person reconciles,
 * the type and description worded, amounts in MRU, one balance (the balance after each row).
 */
const CSV_COLUMNS: readonly { label: StatementKey; mru: boolean }[] = [
  { label: 'transactionId', mru: false },
  { label: 'date', mru: false },
  { label: 'type', mru: false },
  { label: 'description', mru: false },
  { label: 'source', mru: false },
  { label: 'gross', mru: true },
  { label: 'fee', mru: true },
  { label: 'net', mru: true },
  { label: 'balanceAfter', mru: true },
];

/**
 * Centimes as MRU for a spreadsheet (decision 086): two decimals after a dot, no grouping, no unit
 * (the header names it), whatever the file's language: `1250.50`, `-0.75`.
 */
export function csvMru(centimes: number): MruCell {
  const whole = Math.abs(centimes);
  return { mru: `${centimes < 0 ? '-' : ''}${Math.floor(whole / 100)}.${String(whole % 100).padStart(2, '0')}` };
}

// ---------------------------------------------------------------------------------------------
// CSV

/** An amount of the CSV (`csvMru`): written as it is, never taken for a formula's minus. */
interface MruCell {
  mru: string;
}

function csvLine(cells: readonly (string | number | MruCell)[]): string {
  const cell = (value: string | number | MruCell) =>
    typeof value === 'number' ? String(value) : typeof value === 'string' ? csvTextCell(value) : value.mru;
  return `${cells.map(cell).join(',')}\n`;
}

/** The summary block: who, when, the opening balance, the totals by type, the closing balance and the count. */
function csvSummary(statement: BalanceStatement, t: StatementDictionary, lang: Lang): string {
  const { period } = statement;
  return [
    csvLine([t.business, statement.business.name]),
    ...(statement.seller ? [csvLine([t.seller, statement.seller.name, statement.seller.id])] : []),
    csvLine([t.period, period.firstDay, period.lastDay]),
    csvLine([t.currency, 'MRU']),
    csvLine([inMru(t, t.openingBalance), csvMru(statement.openingBalance)]),
    csvLine([t.type, t.count, inMru(t, t.gross), inMru(t, t.fees), inMru(t, t.net)]),
    ...statement.totals.map((total) =>
      csvLine([
        balanceTypeLabel(total.type, lang),
        total.count,
        csvMru(total.gross),
        csvMru(total.fees),
        csvMru(total.net),
      ]),
    ),
    csvLine([inMru(t, t.closingBalance), csvMru(statement.closingBalance)]),
    csvLine([t.transactionCount, statement.transactionCount]),
    '\n',
  ].join('');
}

/** The transactions of the statement's period, oldest first, each batch rendered by `render`. */
export function periodTexts(
  db: Kysely<DB>,
  statement: BalanceStatement,
  render: (rows: ExportRow[]) => string,
): AsyncGenerator<string> {
  const { period, caller } = statement;
  return balanceTransactionTexts(db, caller, { from: period.from, before: period.to }, 'oldest', render);
}

/** A column's label, saying its amounts are MRU. */
function inMru(t: StatementDictionary, label: string): string {
  return fillText(t.inMru, { label });
}

/**
 * The balance after a row: the fold's (`balance_after`), or, for a row the fold has not reached
 * yet (about a second), the balance the statement reaches with it, the opening balance plus the
 * period's nets in the order the balance took them: the same number once it is folded.
 */
export function balanceAfter(row: ExportRow, running: number): number {
  return row.balance_after ?? running;
}

export async function* csvChunks(db: Kysely<DB>, statement: BalanceStatement, lang: Lang) {
  const t = statementDictionaries[lang];
  yield csvSummary(statement, t, lang);
  yield csvLine(CSV_COLUMNS.map((column) => (column.mru ? inMru(t, t[column.label]) : t[column.label])));
  let balance = statement.openingBalance;
  yield* periodTexts(db, statement, (rows) => {
    let text = '';
    for (const row of rows) {
      balance += row.net;
      text += csvLine([
        row.id,
        row.created_iso,
        balanceTypeLabel(row.type, lang),
        describeBalance(row, lang, { file: true }),
        row.source_reference,
        csvMru(row.amount),
        csvMru(row.fee),
        csvMru(row.net),
        csvMru(balanceAfter(row, balance)),
      ]);
    }
    return text;
  });
}
