import { sql, type Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { DownloadFile } from '../../http/downloads.js';
import { ApiError } from '../../http/errors.js';
import { newNonce, pageCsp, renderView, templateFolder } from '../../http/views.js';
import { fillText, formatPageAmount, INTL_LOCALES, textDirection, type Lang } from '../../lib/i18n.js';
import { ownedBy, type BalanceOwner } from './balance-transactions.js';
import { sumsByType, type TypeSums } from './balance-days.js';
import { describeBalance } from './balance-wording.js';
import { balanceTypeLabel } from './balance-type-labels.js';
import { balanceAfter, csvChunks, periodTexts } from './statement-csv.js';
import { BALANCE_TRANSACTION_TYPES } from './balance-types.js';
import { statementDictionaries } from './statement-i18n.js';
import type { BalanceStatement, StatementPeriod, TypeTotal } from './statement-types.js';

export type { BalanceStatement, StatementPeriod, TypeTotal } from './statement-types.js';

/**
 * Balance statements: what a merchant's balance was at the start of a period (a UTC month or a
 * range of UTC days), what moved it during the period, by type, and what it was at the end, from
 * the same balance transactions the API lists. As JSON, or as a CSV file or a printable page that
 * also list every transaction of the period, streamed in batches of a few hundred.
 */

export const STATEMENT_FORMATS = ['json', 'csv', 'html'] as const;
export type StatementFormat = (typeof STATEMENT_FORMATS)[number];

/** The longest range of days a statement covers: a leap year. */
export const MAX_STATEMENT_DAYS = 366;

const DAY_MS = 24 * 60 * 60 * 1000;

function periodInvalid(field: string, message: string): ApiError {
  return new ApiError('STATEMENT_PERIOD_INVALID', `${field} ${message}.`, [{ field, message }]);
}

/**
 * A `YYYY-MM-DD` the schema let through, as the start of that UTC day. JavaScript rolls an
 * impossible day over (2026-02-30 becomes March 2nd) and knows a year 0 that PostgreSQL does not:
 * both are refused.
 */
function utcDay(text: string, field: string): Date {
  const day = new Date(`${text}T00:00:00.000Z`);
  if (Number.isNaN(day.getTime()) || day.getUTCFullYear() < 1 || day.toISOString().slice(0, 10) !== text) {
    throw periodInvalid(field, 'is not a day of the calendar');
  }
  return day;
}

/** A period's end (the instant after it) keeps a four-digit year, as the API's timestamps and the drivers' do. */
function refuseEndPastCalendar(end: Date, field: string): void {
  if (end.getUTCFullYear() > 9999) throw periodInvalid(field, 'ends after 9999-12-30');
}

function isoDay(time: Date): string {
  return time.toISOString().slice(0, 10);
}

/** A UTC month, `YYYY-MM` (the schema checks the shape; this, that the month exists). */
export function monthPeriod(month: string, field = 'params.period'): StatementPeriod {
  const from = utcDay(`${month}-01`, field);
  const to = new Date(from);
  to.setUTCMonth(to.getUTCMonth() + 1);
  refuseEndPastCalendar(to, field);
  return { from, to, firstDay: isoDay(from), lastDay: isoDay(new Date(to.getTime() - DAY_MS)), label: month };
}

/** The UTC days `first`..`last`, both included, at most MAX_STATEMENT_DAYS of them. */
export function rangePeriod(first: string, last: string): StatementPeriod {
  const from = utcDay(first, 'query.from');
  const lastStart = utcDay(last, 'query.to');
  if (lastStart < from) throw periodInvalid('query.from', 'is after query.to');
  const to = new Date(lastStart.getTime() + DAY_MS);
  refuseEndPastCalendar(to, 'query.to');
  if ((to.getTime() - from.getTime()) / DAY_MS > MAX_STATEMENT_DAYS) {
    throw periodInvalid('query.to', `is more than ${MAX_STATEMENT_DAYS} days after query.from`);
  }
  return { from, to, firstDay: first, lastDay: last, label: `${first}_${last}` };
}

// ---------------------------------------------------------------------------------------------
// The statement's figures

/** The caller's statement for a period: opening and closing balances, and the period's totals by type. */
export async function balanceStatement(
  db: Kysely<DB>,
  caller: BalanceOwner,
  period: StatementPeriod,
): Promise<BalanceStatement> {
  const business = await db
    .selectFrom('businesses')
    .select(['id', 'name'])
    .where('id', '=', caller.businessId)
    .executeTakeFirstOrThrow();
  const seller =
    caller.seller === undefined
      ? null
      : await db.selectFrom('sellers').select(['id', 'name']).where('id', '=', caller.seller).executeTakeFirstOrThrow();
  const sums = await sumsByType(db, caller, period);
  const total = (pick: (row: TypeSums) => number) => sums.reduce((sum, row) => sum + Number(pick(row)), 0);
  const openingBalance = total((row) => row.before);
  const totals = BALANCE_TRANSACTION_TYPES.map((type): TypeTotal => {
    const row = sums.find((sum) => sum.type === type);
    return {
      type,
      count: Number(row?.count ?? 0),
      gross: Number(row?.gross ?? 0),
      fees: Number(row?.fees ?? 0),
      net: Number(row?.net ?? 0),
    };
  });
  return {
    caller,
    period,
    business: { id: business.id, name: business.name },
    seller,
    openingBalance,
    // From every row of the period, a type outside the list included: closing - opening is always
    // the net of the transactions the files list.
    closingBalance: openingBalance + total((row) => row.net),
    transactionCount: total((row) => row.count),
    totals,
  };
}

/** The statement as the API answers it. */
export function statementView(statement: BalanceStatement) {
  return {
    period: { from: statement.period.from.toISOString(), to: statement.period.to.toISOString() },
    business: statement.business,
    // Only on a seller's statement: the business's own is as it always was.
    ...(statement.seller ? { seller: statement.seller } : {}),
    currency: 'MRU' as const,
    sandbox: statement.caller.environment === 'test',
    openingBalance: statement.openingBalance,
    closingBalance: statement.closingBalance,
    transactionCount: statement.transactionCount,
    totals: statement.totals,
  };
}

/**
 * The months a merchant may want a statement of, newest first: the current month, and those of the
 * `count - 1` months before it that saw a transaction.
 */
export async function statementMonths(
  db: Kysely<DB>,
  caller: BalanceOwner,
  now: Date = new Date(),
  count = 12,
): Promise<StatementPeriod[]> {
  const current = monthPeriod(now.toISOString().slice(0, 7));
  const months = [current];
  for (let back = 1; back < count; back++) {
    const start = new Date(current.from);
    start.setUTCMonth(start.getUTCMonth() - back);
    if (start.getUTCFullYear() >= 1) months.push(monthPeriod(start.toISOString().slice(0, 7)));
  }
  // One probe of the list index per month, not a scan of a year of transactions.
  const active = await sql<{ label: string }>`
    SELECT m.label FROM (VALUES ${sql.join(
      months.map((month) => sql`(${month.label}::text, ${month.from}::timestamptz, ${month.to}::timestamptz)`),
    )}) AS m(label, starts, ends)
    WHERE EXISTS (
      SELECT 1 FROM balance_transactions b
      WHERE b.business_id = ${caller.businessId} AND b.environment = ${caller.environment} AND ${ownedBy(caller, 'b')}
        AND b.created_at >= m.starts AND b.created_at < m.ends
    )`.execute(db);
  const labels = new Set(active.rows.map((row) => row.label));
  return months.filter((month) => month === current || labels.has(month.label));
}

// ---------------------------------------------------------------------------------------------
// The printable page

// Through the server's one view engine, every value escaped: business names and descriptions are the merchant's text.
const VIEWS = templateFolder(import.meta.url);

/** How the page writes amounts and times in its language (UTC: a statement's days are UTC days). */
function makeFormatters(lang: Lang) {
  const time = new Intl.DateTimeFormat(INTL_LOCALES[lang], {
    dateStyle: 'medium',
    timeStyle: 'short',
    timeZone: 'UTC',
  });
  const day = new Intl.DateTimeFormat(INTL_LOCALES[lang], { dateStyle: 'long', timeZone: 'UTC' });
  return {
    money: (centimes: number) => formatPageAmount(centimes, lang),
    time: (iso: string) => time.format(new Date(iso)),
    day: (isoDay: string) => day.format(new Date(`${isoDay}T00:00:00.000Z`)),
  };
}

/** One set per language for every page: an Intl formatter is costly to make and to keep per download. */
const FORMATTERS = new Map<Lang, ReturnType<typeof makeFormatters>>();

function formatters(lang: Lang): ReturnType<typeof makeFormatters> {
  let set = FORMATTERS.get(lang);
  if (!set) FORMATTERS.set(lang, (set = makeFormatters(lang)));
  return set;
}

/** Whose statement the page says it is: the business, or its seller under it. */
function ownerName(statement: BalanceStatement): string {
  return statement.seller ? `${statement.business.name} · ${statement.seller.name}` : statement.business.name;
}

async function* htmlChunks(db: Kysely<DB>, statement: BalanceStatement, lang: Lang, nonce: string) {
  const t = statementDictionaries[lang];
  const format = formatters(lang);
  const { period } = statement;
  yield renderView(`${VIEWS}/statement-head`, {
    t,
    lang,
    dir: textDirection(lang),
    nonce,
    title: fillText(t.titleFor, { business: ownerName(statement) }),
    business: ownerName(statement),
    sandbox: statement.caller.environment === 'test',
    period: fillText(t.periodRange, { from: format.day(period.firstDay), to: format.day(period.lastDay) }),
    issued: fillText(t.issuedAt, { date: format.time(new Date().toISOString()) }),
    opening: format.money(statement.openingBalance),
    closing: format.money(statement.closingBalance),
    count: statement.transactionCount,
    totals: statement.totals.map((total) => ({
      label: balanceTypeLabel(total.type, lang),
      count: total.count,
      gross: format.money(total.gross),
      fees: format.money(total.fees),
      net: format.money(total.net),
    })),
    net: format.money(statement.closingBalance - statement.openingBalance),
  });
  let balance = statement.openingBalance;
  let shown = 0;
  yield* periodTexts(db, statement, (rows) => {
    shown += rows.length;
    return renderView(`${VIEWS}/statement-rows`, {
      t,
      rows: rows.map((row) => {
        balance += row.net;
        return {
          id: row.id,
          date: format.time(row.created_iso),
          type: balanceTypeLabel(row.type, lang),
          description: describeBalance(row, lang),
          source: row.source_reference,
          gross: format.money(row.amount),
          fee: format.money(row.fee),
          net: format.money(row.net),
          balance: format.money(balanceAfter(row, balance)),
        };
      }),
    });
  });
  yield renderView(`${VIEWS}/statement-foot`, { t, empty: shown === 0 });
}

// ---------------------------------------------------------------------------------------------
// Files

/**
 * The statement as a file: a CSV download, or a printable page whose only style is its own (the
 * nonce of its Content-Security-Policy) and which runs no script. Its rows are read in batches as
 * the client takes them (http/downloads.ts): a month of 100,000 transactions holds one batch.
 */
export function statementFile(
  db: Kysely<DB>,
  statement: BalanceStatement,
  format: Exclude<StatementFormat, 'json'>,
  lang: Lang,
): DownloadFile {
  const name = `statement-${statement.period.label}`;
  const common = { 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' };
  if (format === 'csv') {
    return {
      headers: {
        ...common,
        'Content-Type': 'text/csv; charset=utf-8',
        'Content-Disposition': `attachment; filename="${name}.csv"`,
      },
      chunks: csvChunks(db, statement, lang),
    };
  }
  const nonce = newNonce();
  return {
    headers: {
      ...common,
      'Content-Type': 'text/html; charset=utf-8',
      'Content-Disposition': `inline; filename="${name}.html"`,
      'Content-Security-Policy': pageCsp(nonce, { forms: 'none' }),
      'Referrer-Policy': 'no-referrer',
    },
    chunks: htmlChunks(db, statement, lang, nonce),
  };
}
