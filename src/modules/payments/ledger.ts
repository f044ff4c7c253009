import { sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import type { DB, Environment, LedgerAccountKind } from '../../db/schema.js';
import { namesUnder, type NamedCtes } from '../../db/named-ctes.js';
import type { Executor } from '../../db/transaction.js';
import { newId } from '../../lib/ids.js';
import { dayTotalProblems } from './balance-days.js';
import type { BalanceSourceKind, BalanceTransactionType } from './balance-types.js';
import type { BalanceDetail } from './balance-wording.js';

/**
 * The double-entry ledger. Every account exists before its first movement (platform accounts by
 * migration, a wallet's, a business's and a seller's with their owner), so a movement never
 * creates or looks up an account on its own.
 *
 * Hot accounts: a wallet's balance is its row, locked by whoever debits it. Every other account
 * (a merchant's, the platform's revenue, tax and funding accounts) is shared by many payers, so a
 * movement on it is appended to `ledger_pending_movements` instead of updating its row: payments
 * of different wallets never wait on one row. Its balance is the row plus its pending movements;
 * the worker folds those into the row (`foldPendingMovements`). Only a debit that must not overdraw
 * a shared account (a merchant paying a refund) locks that account's row first, which serializes
 * debits of one merchant without ever making its payments wait.
 */

export interface AccountRef {
  kind: LedgerAccountKind;
  /** The wallet id or the business id; empty for platform accounts. */
  ownerId?: string;
}

export interface PostingLine {
  account: AccountRef;
  /** Signed centimes: positive credits the account, negative debits it. */
  amount: number;
}

const keyOf = (account: AccountRef) => `${account.kind}:${account.ownerId ?? ''}`;

/** The balance of an account and its pending movements, as one SQL expression over `a`. */
const AVAILABLE = sql<number>`(a.balance + coalesce((SELECT sum(m.amount) FROM ledger_pending_movements m
  WHERE m.account_id = a.id), 0))::bigint`;

/**
 * Locks the accounts a debit must not overdraw, in id order (so two movements over the same
 * accounts queue instead of deadlocking), and returns what each holds, read after the locks: under
 * READ COMMITTED a statement that waited for a row lock still reads other rows with the snapshot
 * it began with, so a balance summed in the locking statement would miss the movements of the
 * transaction it waited for (two refunds would both spend the last of a balance) and count again
 * those a fold moved into the row meanwhile.
 */
export async function lockAccounts(
  trx: Transaction<DB>,
  environment: Environment,
  accounts: AccountRef[],
): Promise<Map<string, number>> {
  const locked = await sql<{ id: string }>`
    SELECT a.id FROM ledger_accounts a
    WHERE a.environment = ${environment}
      AND (a.kind, a.owner_id) IN (${sql.join(accounts.map((account) => sql`(${account.kind}, ${account.ownerId ?? ''})`))})
    ORDER BY a.id
    FOR NO KEY UPDATE OF a`.execute(trx);
  if (locked.rows.length === 0) return new Map();
  // A list, not an array: the prepared statement's generic plan then knows how many ids there are
  // (see `transfer`).
  const rows = await sql<{ kind: LedgerAccountKind; owner_id: string; available: number }>`
    SELECT a.kind, a.owner_id, ${AVAILABLE} AS available
    FROM ledger_accounts a WHERE a.id IN (${sql.join(locked.rows.map((row) => row.id))})`.execute(trx);
  return new Map(rows.rows.map((row) => [keyOf({ kind: row.kind, ownerId: row.owner_id }), Number(row.available)]));
}

export function balanceIn(locked: Map<string, number>, account: AccountRef): number {
  return locked.get(keyOf(account)) ?? 0;
}

export interface LedgerEntry {
  environment: Environment;
  kind: 'payment' | 'refund' | 'credit' | 'payout';
  reference: string;
  lines: PostingLine[];
  at?: Date;
  /**
   * What the merchant's balance transaction says of its line (`net`): required when one moves it.
   * An entry that moves no merchant account but one seller's (a seller's payout) says it of that line.
   */
  balance?: BalanceEntry;
  /**
   * What each seller's balance transaction says of its line, by seller id (a split's gross and
   * fee). A seller line without one takes the merchant's type, source and description, its own
   * line as the amount (no fee).
   */
  sellerBalances?: ReadonlyMap<string, BalanceEntry>;
  /** The business a seller's balance transaction belongs to, when no merchant line names it. */
  businessId?: string;
}

/** A merchant's view of a movement of its account: what it came from and the gross behind it. */
export interface BalanceEntry {
  type: BalanceTransactionType;
  /** The gross, signed as the movement is: `fee` is what the platform kept of it (gross - net). */
  amount: number;
  source: { reference: string; kind: BalanceSourceKind };
  /** What its description is worded from besides the type and source (balance-wording.ts): data, no sentence. */
  detail: BalanceDetail;
  /** The payout (or batch) that settles it, when it is known as it is written. */
  settledBy?: string;
}

/** A ledger transaction as CTEs, to be written by a statement of the caller's (or by `post`). */
export interface LedgerTransfer {
  transactionId: string;
  /** CTEs for the statement's WITH, named by it; undefined when no line moves money. */
  ctes: NamedCtes | undefined;
}

/** Several ledger transactions as the CTEs of one statement (`transfers`). */
export interface LedgerTransfers {
  transactionIds: string[];
  ctes: NamedCtes | undefined;
}

/**
 * The lines of an entry that write a balance transaction, each with what it says: the merchant's
 * (`balance`, even of 0), and every seller's that moves (decision 082): its own entry, else
 * `balance` when it is the entry's only balanced line (a seller's payout), else the merchant's
 * type, source and description with its own line as the gross.
 */
function balancedLines(
  entry: LedgerEntry,
  lines: readonly PostingLine[],
  merchant: PostingLine | undefined,
): [PostingLine, BalanceEntry][] {
  const balanced: [PostingLine, BalanceEntry][] = [];
  const sellerLines = lines.filter((line) => line.account.kind === 'seller');
  // The merchant's line of 0 posts nothing but still records its balance transaction.
  if (merchant && entry.balance) balanced.push([merchant, entry.balance]);
  for (const line of sellerLines) {
    const own = entry.sellerBalances?.get(line.account.ownerId ?? '');
    const alone = !merchant && sellerLines.length === 1 ? entry.balance : undefined;
    const like =
      merchant && entry.balance ? { ...entry.balance, amount: line.amount, settledBy: undefined } : undefined;
    const balance = own ?? alone ?? like;
    if (!balance) throw new Error(`ledger transaction ${entry.reference} names no balance entry for a seller`);
    balanced.push([line, balance]);
  }
  return balanced;
}

/**
 * One ledger transaction as the CTEs of one statement: immutable postings that sum to zero, the
 * wallet balances they move (a wallet below zero fails the database check, so everything rolls
 * back), and the pending movements of shared accounts. A payment writes them in the statement
 * that changes what was paid, saving a round trip; `post` writes them on their own. A line whose
 * account does not exist leaves its posting without an account id, which the NOT NULL column
 * refuses: the statement fails rather than post an unbalanced transaction.
 */
export function transfer(entry: LedgerEntry): LedgerTransfer {
  const { transactionIds, ctes } = transfers([entry]);
  return { transactionId: transactionIds[0]!, ctes };
}

/**
 * Ledger transactions of one environment as the CTEs of one statement (`transfer` of each, set
 * based): a batch of payouts reserves its money in a few statements rather than thousands.
 */
export function transfers(entries: readonly LedgerEntry[]): LedgerTransfers {
  const environment = entries[0]?.environment;
  const lineValues: RawBuilder<unknown>[] = [];
  const balanceValues: RawBuilder<unknown>[] = [];
  const transactionIds: string[] = [];
  const wallets = new Set<string>();
  let walletTwice = false;
  for (const entry of entries) {
    if (entry.environment !== environment) throw new Error('ledger transfers of one statement span two environments');
    const lines = entry.lines.filter((line) => line.amount !== 0);
    const sum = lines.reduce((total, line) => total + line.amount, 0);
    if (sum !== 0) throw new Error(`unbalanced ledger transaction ${entry.reference}: sums to ${sum}`);
    const transactionId = newId('ltx');
    transactionIds.push(transactionId);
    const merchantLines = entry.lines.filter((line) => line.account.kind === 'merchant');
    if (merchantLines.length > 1) throw new Error(`ledger transaction ${entry.reference} moves two merchant accounts`);
    const merchant = merchantLines[0];
    if (merchant && !entry.balance) throw new Error(`ledger transaction ${entry.reference} names no balance entry`);
    const at = entry.at ?? new Date();
    const balanceIds = new Map<PostingLine, string>();
    for (const [line, balance] of balancedLines(entry, lines, merchant)) {
      const balanceId = newId('txn');
      balanceIds.set(line, balanceId);
      const seller = line.account.kind === 'seller' ? (line.account.ownerId ?? '') : null;
      const businessId = merchant?.account.ownerId ?? entry.businessId;
      if (businessId === undefined) throw new Error(`ledger transaction ${entry.reference} names no business`);
      balanceValues.push(
        sql`(${balanceId}::text, ${businessId}::text, ${balance.type}::text, ${balance.amount}::bigint, ${balance.amount - line.amount}::bigint, ${line.amount}::bigint, ${balance.source.reference}::text, ${balance.source.kind}::text, ${JSON.stringify(balance.detail)}::jsonb, ${transactionId}::text, ${at}::timestamptz, ${balance.settledBy ?? null}::text, ${seller}::text)`,
      );
    }
    // A VALUES list, not unnest() of arrays: the planner then knows how many lines there are in
    // the prepared statement's generic plan too. With arrays it guessed 10, found the generic plan
    // dearer than a custom one, and planned the statement again on every call.
    for (const line of lines) {
      if (line.account.kind === 'wallet') {
        walletTwice ||= wallets.has(line.account.ownerId ?? '');
        wallets.add(line.account.ownerId ?? '');
      }
      lineValues.push(
        sql`(${transactionId}::text, ${line.account.kind}::text, ${line.account.ownerId ?? ''}::text, ${line.amount}::bigint, ${lineValues.length}::int, ${entry.kind}::text, ${entry.reference}::text, ${at}::timestamptz, ${balanceIds.get(line) ?? null}::text)`,
      );
    }
  }
  if (lineValues.length === 0) return { transactionIds, ctes: undefined };
  // Two lines of one wallet in one statement must add up before they update its row (an UPDATE
  // meets each row once); a payment's single line needs no grouping.
  const ctes: NamedCtes = (name) => {
    const lines = name('lines');
    const walletMoves = walletTwice
      ? sql`(SELECT account_id, sum(amount)::bigint AS amount FROM ${lines} WHERE kind = 'wallet' GROUP BY account_id)`
      : sql`(SELECT account_id, amount FROM ${lines} WHERE kind = 'wallet')`;
    return sql`
    ${lines} AS (
      SELECT a.id AS account_id, l.transaction_id, l.kind, l.amount, l.line, l.posting_kind, l.reference, l.at,
        l.balance_id
      FROM (VALUES ${sql.join(lineValues)})
        AS l(transaction_id, kind, owner_id, amount, line, posting_kind, reference, at, balance_id)
      -- One unique-index lookup per line. As a plain join, the prepared statement's generic plan
      -- hashed every account of the environment (every wallet) to match a handful of lines.
      LEFT JOIN LATERAL (
        SELECT id FROM ledger_accounts
        WHERE environment = ${environment} AND kind = l.kind AND owner_id = l.owner_id
        LIMIT 1
      ) a ON true
    ),
    ${name('posted')} AS (
      -- In the transfer's own order, whatever order the join's plan yields them in.
      INSERT INTO ledger_postings (transaction_id, account_id, amount, kind, reference, created_at)
      SELECT transaction_id, account_id, amount, posting_kind, reference, at
      FROM ${lines} ORDER BY line
    ),
    ${name('wallets')} AS (
      UPDATE ledger_accounts a SET balance = a.balance + moves.amount
      FROM ${walletMoves} AS moves WHERE a.id = moves.account_id
    ),
    ${name('pending')} AS (
      INSERT INTO ledger_pending_movements (account_id, amount, balance_transaction_id)
      SELECT account_id, amount, balance_id FROM ${lines} WHERE kind <> 'wallet' ORDER BY line
    )${
      balanceValues.length > 0
        ? sql`,
    ${name('balance')} AS (
      INSERT INTO balance_transactions (id, business_id, environment, type, amount, fee, net, source_reference,
        source_kind, detail, ledger_transaction_id, created_at, settled_by, seller_id)
      SELECT id, business_id, ${environment}, type, amount, fee, net, source_reference, source_kind, detail,
        ledger_transaction_id, created_at, settled_by, seller_id
      FROM (VALUES ${sql.join(balanceValues)}) AS b(id, business_id, type, amount, fee, net, source_reference,
        source_kind, detail, ledger_transaction_id, created_at, settled_by, seller_id)
    )`
        : sql``
    }`;
  };
  return { transactionIds, ctes };
}

/** A ledger transaction in a statement of its own. */
export function post(trx: Executor, entry: LedgerEntry): Promise<string> {
  return postTransfer(trx, transfer(entry));
}

/** A transfer (`transfer`) in a statement of its own. */
export async function postTransfer(trx: Executor, { transactionId, ctes }: LedgerTransfer): Promise<string> {
  // Data-modifying CTEs run whether or not the statement reads them.
  if (ctes) await sql`WITH ${ctes(namesUnder('ledger'))} SELECT 1`.execute(trx);
  return transactionId;
}

/** What an account holds: its balance and its pending movements. */
export async function accountBalance(db: Executor, environment: Environment, account: AccountRef): Promise<number> {
  const row = await sql<{ available: number }>`
    SELECT ${AVAILABLE} AS available FROM ledger_accounts a
    WHERE a.environment = ${environment} AND a.kind = ${account.kind} AND a.owner_id = ${account.ownerId ?? ''}`.execute(
    db,
  );
  return Number(row.rows[0]?.available ?? 0);
}

/**
 * What each of some accounts of one kind holds, in one statement (a page of sellers reads its
 * balances at once, not one query a row). An owner without an account holds 0.
 */
export async function accountBalances(
  db: Executor,
  environment: Environment,
  kind: AccountRef['kind'],
  ownerIds: readonly string[],
): Promise<Map<string, number>> {
  const balances = new Map(ownerIds.map((id) => [id, 0]));
  if (ownerIds.length === 0) return balances;
  const rows = await sql<{ owner_id: string; available: number }>`
    SELECT a.owner_id, ${AVAILABLE} AS available FROM ledger_accounts a
    WHERE a.environment = ${environment} AND a.kind = ${kind} AND a.owner_id IN (${sql.join([...ownerIds])})`.execute(
    db,
  );
  for (const row of rows.rows) balances.set(row.owner_id, Number(row.available));
  return balances;
}

/**
 * Worker task: folds pending movements into their accounts' rows, one account per statement.
 * The account row is locked first (as a debit does), then its committed movements are deleted
 * and added: movements committed later stay for the next run, so nothing is counted twice or
 * lost. Accounts another transaction holds are skipped this time. An account that cannot be
 * folded (its row would go below zero) does not stop the others: the run folds them and then
 * fails, naming it, so the worker records and logs it every run until someone looks.
 */
export async function foldPendingMovements(db: Kysely<DB>, maxAccounts = 100): Promise<number> {
  const accounts = await db
    .selectFrom('ledger_pending_movements')
    .select('account_id')
    .distinct()
    .limit(maxAccounts)
    .execute();
  let folded = 0;
  const failed: string[] = [];
  for (const { account_id: accountId } of accounts) {
    const result = await sql<{ folded: number }>`
      WITH account AS (
        SELECT id, balance FROM ledger_accounts WHERE id = ${accountId} FOR NO KEY UPDATE SKIP LOCKED
      ),
      moved AS (
        DELETE FROM ledger_pending_movements m USING account WHERE m.account_id = account.id
        RETURNING m.id, m.amount, m.balance_transaction_id
      ),
      -- A merchant's (or seller's) balance transactions learn the balance they left, in the order
      -- they are folded, and take their place in that order (applied_order, migration 053): a number
      -- drawn now, row after row in the fold's order. Folds of one account never overlap (its row
      -- is locked), so an account's numbers follow its balance_after chain whatever order the
      -- movements committed in.
      running AS (
        SELECT ordered.balance_transaction_id, ordered.after,
          nextval('balance_transactions_applied_order_seq') AS applied_order
        FROM (
          SELECT moved.id, moved.balance_transaction_id,
            account.balance + sum(moved.amount) OVER (ORDER BY moved.id) AS after
          FROM moved, account ORDER BY moved.id
        ) ordered
        WHERE ordered.balance_transaction_id IS NOT NULL
      ),
      settled AS (
        UPDATE balance_transactions b SET balance_after = running.after, applied_order = running.applied_order
        FROM running
        WHERE b.id = running.balance_transaction_id
      ),
      total AS (SELECT count(*)::int AS n, coalesce(sum(amount), 0)::bigint AS amount FROM moved)
      UPDATE ledger_accounts a SET balance = a.balance + total.amount
      FROM total, account WHERE a.id = account.id
      RETURNING total.n AS folded`
      .execute(db)
      .catch((error: unknown) => {
        failed.push(`${accountId} (${error instanceof Error ? error.message : String(error)})`);
        return undefined;
      });
    folded += result?.rows[0]?.folded ?? 0;
  }
  if (failed.length > 0) {
    const named = failed.slice(0, 5).join(', ') + (failed.length > 5 ? ', ...' : '');
    throw new Error(`ledger fold: folded ${folded} movements; could not fold ${failed.length} account(s): ${named}`);
  }
  return folded;
}

/**
 * The kinds allowed below zero (migration 045's CHECK says the same): `funding`, where money from
 * outside enters, and `seller`, which a refund may take below zero after the seller withdrew its
 * share (decision 080): the refund is never refused for it.
 */
const MAY_GO_NEGATIVE: ReadonlySet<string> = new Set<LedgerAccountKind>(['funding', 'seller']);

export interface LedgerCheck {
  ok: boolean;
  accounts: number;
  postings: number;
  problems: string[];
}

/**
 * The ledger's invariants: all postings sum to zero, every ledger transaction sums to zero, every
 * movement names an existing account, each account's balance plus its pending movements equals
 * the sum of its postings, no account but `funding` and `seller` holds less than zero, and every
 * seller has its account (migration 044's trigger makes it with the seller). An archived month's
 * postings count by the totals kept when it was detached (db/partition-archive.ts).
 */
export async function checkLedger(db: Kysely<DB>): Promise<LedgerCheck> {
  const problems: string[] = [];
  const total = await sql<{
    sum: string | null;
    n: string;
  }>`
    SELECT (coalesce(p.sum, 0) + coalesce(archived.sum, 0))::text AS sum, (p.n + coalesce(archived.n, 0))::text AS n
    FROM (SELECT sum(amount) AS sum, count(*) AS n FROM ledger_postings) p,
      (SELECT sum(total) AS sum, sum(rows) AS n FROM archived_month_totals WHERE table_name = 'ledger_postings') archived`.execute(
    db,
  );
  const sum = BigInt(total.rows[0]?.sum ?? '0');
  if (sum !== 0n) problems.push(`all postings sum to ${sum}, not 0`);
  const unbalanced = await sql<{ transaction_id: string; sum: string }>`
    SELECT transaction_id, sum(amount)::text AS sum FROM ledger_postings GROUP BY transaction_id HAVING sum(amount) <> 0`.execute(
    db,
  );
  for (const row of unbalanced.rows) problems.push(`transaction ${row.transaction_id} sums to ${row.sum}`);
  const accounts = await sql<{ id: string; kind: string; available: string; posted: string }>`
    SELECT a.id, a.kind, ${AVAILABLE}::text AS available,
      (coalesce((SELECT sum(p.amount) FROM ledger_postings p WHERE p.account_id = a.id), 0)
        + coalesce((SELECT sum(t.total) FROM archived_month_totals t
          WHERE t.table_name = 'ledger_postings' AND t.owner_id = a.id), 0))::text AS posted
    FROM ledger_accounts a`.execute(db);
  const orphans = await sql<{ account_id: string }>`
    SELECT DISTINCT account_id FROM (
      SELECT account_id FROM ledger_postings UNION ALL SELECT account_id FROM ledger_pending_movements
    ) AS moved
    WHERE NOT EXISTS (SELECT 1 FROM ledger_accounts a WHERE a.id = moved.account_id)`.execute(db);
  for (const row of orphans.rows) problems.push(`movements name account ${row.account_id}, which does not exist`);
  const sellersWithout = await sql<{ id: string }>`
    SELECT s.id FROM sellers s
    WHERE NOT EXISTS (SELECT 1 FROM ledger_accounts a
      WHERE a.environment = s.environment AND a.kind = 'seller' AND a.owner_id = s.id)`.execute(db);
  for (const row of sellersWithout.rows) problems.push(`seller ${row.id} has no ledger account`);
  problems.push(...(await dayTotalProblems(db)));
  for (const row of accounts.rows) {
    if (row.available !== row.posted)
      problems.push(`account ${row.id} holds ${row.available} but its postings sum to ${row.posted}`);
    if (!MAY_GO_NEGATIVE.has(row.kind) && BigInt(row.available) < 0n)
      problems.push(`${row.kind} account ${row.id} is negative: ${row.available}`);
  }
  return {
    ok: problems.length === 0,
    accounts: accounts.rows.length,
    postings: Number(total.rows[0]?.n ?? 0),
    problems,
  };
}
