import { sql, type Kysely, type RawBuilder, type Selectable } from 'kysely';
import { countedPage, type CountedTable } from '../../db/counted-list.js';
import type { BalanceTransactionsTable, DB } from '../../db/schema.js';
import { inOtherEnvironment } from '../../http/environments.js';
import { ApiError } from '../../http/errors.js';
import { csvTextCell } from '../../lib/csv.js';
import type { Lang } from '../../lib/i18n.js';
import { BALANCE_TRANSACTION_TYPES, type BalanceTransactionType } from './balance-types.js';
import { describeBalance, type BalanceDetail } from './balance-wording.js';
import type { Caller } from '../../http/context.js';

export { BALANCE_SOURCE_KINDS, BALANCE_TRANSACTION_TYPES, type BalanceTransactionType } from './balance-types.js';

export type BalanceTransactionRow = Selectable<BalanceTransactionsTable>;

export type { Caller };

/**
 * Whose balance a read is of: the business's own (no `seller`), or one of its sellers'
 * (decision 082). A seller's transactions are rows of its business that name it.
 */
export type BalanceOwner = Caller & { seller?: string | undefined };

/** The rows of the owner's balance, over a row of balance_transactions (aliased or not). */
export function ownedBy(owner: BalanceOwner, alias?: string): RawBuilder<boolean> {
  const column = sql.ref(alias ? `${alias}.seller_id` : 'seller_id');
  return owner.seller === undefined ? sql<boolean>`${column} IS NULL` : sql<boolean>`${column} = ${owner.seller}`;
}

/**
 * How the payments module learns that a seller is the caller's: the sellers module's one lookup
 * (sellers/lookup.ts `visibleSeller`: 404 SELLER_NOT_FOUND naming the field, 403 SANDBOX_MISMATCH),
 * handed to the balance and statement routes by modules/index.ts, since payments sits below
 * sellers and cannot import it (decision 079).
 */
export type SellerLookup = (db: Kysely<DB>, caller: Caller, id: string, field: string) => Promise<unknown>;

/**
 * The caller's balance of the `seller` a query asks for: its business's own without one; with one,
 * the seller the lookup found the caller's.
 */
export async function balanceOwner(
  db: Kysely<DB>,
  caller: Caller,
  seller: string | undefined,
  lookup: SellerLookup,
): Promise<BalanceOwner> {
  if (seller === undefined) return { businessId: caller.businessId, environment: caller.environment };
  await lookup(db, caller, seller, 'query.seller');
  return { businessId: caller.businessId, environment: caller.environment, seller };
}

export function balanceTransactionView(row: BalanceTransactionRow) {
  return {
    id: row.id,
    type: row.type as BalanceTransactionType,
    amount: row.amount,
    fee: row.fee,
    net: row.net,
    currency: 'MRU' as const,
    source: { reference: row.source_reference, kind: row.source_kind },
    // The API's language: the English wording of the row's data (balance-wording.ts).
    description: describeBalance(row, 'en'),
    balanceAfter: row.balance_after,
    seller: row.seller_id,
    sandbox: row.environment === 'test',
    createdAt: row.created_at.toISOString(),
  };
}

/**
 * A balance transaction as a page in `lang` shows it: the API's view, its description worded in
 * the page's language (the API's is English).
 */
export function balanceTransactionViewIn(row: BalanceTransactionRow, lang: Lang) {
  return { ...balanceTransactionView(row), description: describeBalance(row, lang) };
}

export interface BalanceFilters {
  /** A seller's transactions (decision 082) rather than the business's own: one `balanceOwner` found the caller's. */
  seller?: string | undefined;
  type?: BalanceTransactionType | undefined;
  source?: string | undefined;
  from?: Date | undefined;
  to?: Date | undefined;
}

const BALANCE: CountedTable = {
  list: 'balance',
  table: 'balance_transactions',
  tiebreak: 'id',
  statusColumn: 'type',
  // The order the balance took them (migration 053), never the creation time: `balanceAfter`
  // chains down the list.
  orderColumn: 'applied_order',
};

/** A page of a list: `hasMore` when a row follows it. */
export interface BalancePage {
  items: BalanceTransactionRow[];
  total: number;
  hasMore: boolean;
}

/**
 * A page of the caller's balance transactions, newest first in the order the balance took them
 * (applied_order, migration 053): each row's `balanceAfter` is the next older row's plus its `net`. The business's own take their exact
 * total from the list counts (counted-list.ts); a source's handful, and a seller's rows, are
 * counted from their index (`total` is exact, as the contract defines it; a seller's count grows
 * with its rows: issue 55 measures it).
 */
export async function listBalanceTransactions(
  db: Kysely<DB>,
  caller: Caller,
  query: BalanceFilters & { limit: number; offset: number },
): Promise<BalancePage> {
  if (query.from && query.to && query.from > query.to) {
    throw new ApiError('VALIDATION_ERROR', 'query.from is after query.to.', [
      { field: 'query.from', message: 'is after query.to' },
    ]);
  }
  const owner: BalanceOwner = { businessId: caller.businessId, environment: caller.environment, seller: query.seller };
  const counted = (page: { items: BalanceTransactionRow[]; total: number }): BalancePage => ({
    ...page,
    hasMore: query.offset + page.items.length < page.total,
  });
  if (query.source === undefined && owner.seller === undefined) {
    return counted(
      await countedPage<BalanceTransactionRow>(db, BALANCE, {
        businessId: caller.businessId,
        environment: caller.environment,
        statuses: query.type ? [query.type] : BALANCE_TRANSACTION_TYPES,
        filterRowsByStatus: query.type !== undefined,
        // The counts are of the business's own rows (migration 046), as this condition is.
        where: ownedBy(owner, 't'),
        from: query.from,
        to: query.to,
        order: 'newest',
        limit: query.limit,
        offset: query.offset,
      }),
    );
  }
  let rows = db
    .selectFrom('balance_transactions')
    .where('business_id', '=', caller.businessId)
    .where('environment', '=', caller.environment)
    .where(ownedBy(owner));
  if (query.source !== undefined) rows = rows.where('source_reference', '=', query.source);
  if (query.type) rows = rows.where('type', '=', query.type);
  if (query.from) rows = rows.where('created_at', '>=', query.from);
  if (query.to) rows = rows.where('created_at', '<=', query.to);
  const [items, count] = await Promise.all([
    rows.selectAll().orderBy('applied_order', 'desc').offset(query.offset).limit(query.limit).execute(),
    rows.select(sql<number>`count(*)`.as('n')).executeTakeFirstOrThrow(),
  ]);
  return counted({ items, total: Number(count.n) });
}

export async function getBalanceTransaction(
  db: Kysely<DB>,
  caller: Caller,
  id: string,
): Promise<BalanceTransactionRow> {
  const row = await db
    .selectFrom('balance_transactions')
    .selectAll()
    .where('id', '=', id)
    .where('business_id', '=', caller.businessId)
    .where('environment', '=', caller.environment)
    .executeTakeFirst();
  if (row) return row;
  const elsewhere = await inOtherEnvironment(db, 'balance_transactions', { column: 'id', value: id }, caller);
  throw new ApiError(
    elsewhere ? 'SANDBOX_MISMATCH' : 'BALANCE_TRANSACTION_NOT_FOUND',
    elsewhere ? undefined : `No balance transaction ${id}.`,
  );
}

export const EXPORT_COLUMNS = [
  'id',
  'type',
  'amount',
  'fee',
  'net',
  'currency',
  'sourceReference',
  'sourceKind',
  'description',
  'balanceAfter',
  'createdAt',
] as const;

/**
 * Rows per batch of a file: what a download holds while its client is slow or stalled (the next
 * batch is read only once the socket took this one, http/downloads.ts). A few hundred keep 40
 * stalled downloads under 20 MB; more buy little speed (docs/benchmarks.md).
 */
export const EXPORT_BATCH = 200;

/**
 * Which rows a keyset read takes: `to` includes its instant, `before` stops short of it; `type`
 * and `source` are the list's filters.
 */
export interface BatchRange {
  from?: Date | undefined;
  to?: Date | undefined;
  before?: Date | undefined;
  type?: BalanceTransactionType | undefined;
  source?: string | undefined;
}

/** What a file (the export, a statement) shows of a balance transaction, as the batches read it. */
export interface ExportRow {
  id: string;
  type: string;
  amount: number;
  fee: number;
  net: number;
  source_reference: string;
  source_kind: string;
  detail: BalanceDetail;
  balance_after: number | null;
  /** The time in the file's form (ISO 8601 UTC, milliseconds), written by PostgreSQL. */
  created_iso: string;
}

/** The last row of a batch: its place in the order the balance took it. */
type Cursor = number;

/**
 * Where a stream of batches is. A row the fold has not reached yet has a number from when it was
 * written, and the fold gives it a new, higher one (ledger.ts `foldPendingMovements`): a stream
 * of several reads sees it move. Oldest first, a row read before it moved is met again above the
 * cursor (`shown` skips it); newest first, a row below the cursor would move above it and never be
 * read, so the rows not yet folded are read first (`pending`: they are the newest in the
 * balance's order, the fold applies them after every folded one), then the folded ones from the
 * top, those already shown skipped. Folded rows never move. Holding one snapshot (a REPEATABLE
 * READ transaction) instead would hold a connection, PGlite's only one, while a client stalls.
 */
interface StreamState {
  order: 'newest' | 'oldest';
  /** Newest first: still reading the rows not yet folded. */
  pending: boolean;
  after: Cursor | undefined;
  /** The rows shown while not yet folded: only they can be met again. */
  shown: Set<string>;
}

/**
 * One batch of the caller's balance transactions in a range, read by keyset after the state's
 * cursor in the order the balance took them (applied_order), and rendered: its rows are garbage
 * once this returns. Only what the files show, the time already in the files' form.
 */
async function renderedBatch(
  db: Kysely<DB>,
  caller: BalanceOwner,
  range: BatchRange,
  state: StreamState,
  render: (rows: ExportRow[]) => string,
): Promise<{ text: string; count: number; last: Cursor | undefined }> {
  const newest = state.order === 'newest';
  let query = db
    .selectFrom('balance_transactions')
    .select(['id', 'type', 'amount', 'fee', 'net', 'source_reference', 'source_kind', 'detail', 'balance_after'])
    .select('applied_order')
    .select(sql<string>`to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`.as('created_iso'))
    .where('business_id', '=', caller.businessId)
    .where('environment', '=', caller.environment)
    .where(ownedBy(caller));
  if (range.from) query = query.where('created_at', '>=', range.from);
  if (range.to) query = query.where('created_at', '<=', range.to);
  if (range.before) query = query.where('created_at', '<', range.before);
  if (range.type) query = query.where('type', '=', range.type);
  if (range.source) query = query.where('source_reference', '=', range.source);
  if (newest) query = query.where('balance_after', state.pending ? 'is' : 'is not', null);
  if (state.after !== undefined) query = query.where('applied_order', newest ? '<' : '>', state.after);
  const rows = await query
    .orderBy('applied_order', newest ? 'desc' : 'asc')
    .limit(EXPORT_BATCH)
    .execute();
  const fresh = rows.filter((row) => !state.shown.has(row.id));
  for (const row of fresh) if (row.balance_after === null) state.shown.add(row.id);
  const last = rows.at(-1);
  return { text: fresh.length > 0 ? render(fresh) : '', count: rows.length, last: last && Number(last.applied_order) };
}

/**
 * The caller's balance transactions in a range as text, a batch at a time, newest or oldest
 * first, each row once (`StreamState`). The rows are read and rendered outside this generator,
 * so that while it waits for its client (a stalled download) it holds the batch's text and not
 * its rows.
 */
export async function* balanceTransactionTexts(
  db: Kysely<DB>,
  caller: BalanceOwner,
  range: BatchRange,
  order: 'newest' | 'oldest',
  render: (rows: ExportRow[]) => string,
): AsyncGenerator<string> {
  const state: StreamState = { order, pending: order === 'newest', after: undefined, shown: new Set() };
  for (;;) {
    const batch = await renderedBatch(db, caller, range, state, render);
    if (batch.text !== '') yield batch.text;
    if (batch.count === EXPORT_BATCH) {
      state.after = batch.last;
    } else if (state.pending) {
      state.pending = false;
      state.after = undefined;
    } else {
      return;
    }
  }
}

/**
 * A row as a line of the export, without its line break. One template string (only the two free-text
 * cells can need quoting), not a row object walked by a general CSV writer: that halved the
 * server's CPU per line (docs/benchmarks.md).
 */
export function exportLine(row: ExportRow): string {
  return (
    `${row.id},${row.type},${row.amount},${row.fee},${row.net},MRU,` +
    `${csvTextCell(row.source_reference)},${row.source_kind},${csvTextCell(describeBalance(row, 'en'))},` +
    `${row.balance_after ?? ''},${row.created_iso}`
  );
}

/** The export's text: the header, then one CSV text per batch, newest first. */
async function* exportBatches(db: Kysely<DB>, caller: BalanceOwner, filters: BatchRange): AsyncGenerator<string> {
  yield `${EXPORT_COLUMNS.join(',')}\n`;
  yield* balanceTransactionTexts(db, caller, filters, 'newest', (rows) => {
    let text = '';
    for (const row of rows) text += `${exportLine(row)}\n`;
    return text;
  });
}

/**
 * The export as CSV text in batches: a header row, then every transaction of the owner (the
 * business, or a seller `balanceOwner` checked) the list's filters (`type`, `source`, `from`,
 * `to`) take, newest first. The filters are checked here, before the
 * first byte; the batches are read as the client takes them.
 */
export function exportBalanceTransactions(
  db: Kysely<DB>,
  caller: BalanceOwner,
  filters: Omit<BalanceFilters, 'seller'>,
): AsyncGenerator<string> {
  if (filters.from && filters.to && filters.from > filters.to) {
    throw new ApiError('VALIDATION_ERROR', 'query.from is after query.to.', [
      { field: 'query.from', message: 'is after query.to' },
    ]);
  }
  return exportBatches(db, caller, filters);
}
