import { sql, type Kysely, type Transaction } from 'kysely';
import type { DB, Environment, LedgerAccountKind } from '../../db/schema.js';
import type { Executor } from '../../db/transaction.js';
import { newId } from '../../lib/ids.js';

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

/** The account's id, created on first use. */
async function ensureAccount(trx: Executor, environment: Environment, account: AccountRef): Promise<string> {
  await trx
    .insertInto('ledger_accounts')
    .values({ id: newId('acct'), environment, kind: account.kind, owner_id: account.ownerId ?? '' })
    .onConflict((conflict) => conflict.columns(['environment', 'kind', 'owner_id']).doNothing())
    .execute();
  const row = await trx
    .selectFrom('ledger_accounts')
    .select('id')
    .where('environment', '=', environment)
    .where('kind', '=', account.kind)
    .where('owner_id', '=', account.ownerId ?? '')
    .executeTakeFirstOrThrow();
  return row.id;
}

/**
 * Locks the accounts a movement touches, always in id order (so two movements over the same
 * accounts queue instead of deadlocking), and returns their balances by `kind:owner`.
 */
export async function lockAccounts(
  trx: Transaction<DB>,
  environment: Environment,
  accounts: AccountRef[],
): Promise<Map<string, { id: string; balance: number }>> {
  const ids = new Map<string, string>();
  for (const account of accounts) ids.set(keyOf(account), await ensureAccount(trx, environment, account));
  const rows = await trx
    .selectFrom('ledger_accounts')
    .select(['id', 'balance'])
    .where('id', 'in', [...new Set(ids.values())])
    .orderBy('id')
    .forUpdate()
    .execute();
  const byId = new Map(rows.map((row) => [row.id, row]));
  return new Map([...ids].map(([key, id]) => [key, { id, balance: byId.get(id)!.balance }]));
}

export function balanceIn(locked: Map<string, { balance: number }>, account: AccountRef): number {
  return locked.get(keyOf(account))?.balance ?? 0;
}

/**
 * One ledger transaction: immutable postings that sum to zero, and the account balances they
 * move, in the caller's database transaction. A balance that would go below zero fails the
 * database check, so the whole change rolls back.
 */
export async function post(
  trx: Transaction<DB>,
  entry: {
    environment: Environment;
    kind: 'payment' | 'refund' | 'credit';
    reference: string;
    lines: PostingLine[];
    at?: Date;
  },
): Promise<string> {
  const lines = entry.lines.filter((line) => line.amount !== 0);
  const sum = lines.reduce((total, line) => total + line.amount, 0);
  if (sum !== 0) throw new Error(`unbalanced ledger transaction ${entry.reference}: sums to ${sum}`);
  const locked = await lockAccounts(
    trx,
    entry.environment,
    lines.map((line) => line.account),
  );
  const transactionId = newId('ltx');
  const at = entry.at ?? new Date();
  for (const line of lines) {
    const { id } = locked.get(keyOf(line.account))!;
    await trx
      .updateTable('ledger_accounts')
      .set({ balance: sql<number>`balance + ${line.amount}` })
      .where('id', '=', id)
      .execute();
  }
  if (lines.length > 0) {
    await trx
      .insertInto('ledger_postings')
      .values(
        lines.map((line) => ({
          transaction_id: transactionId,
          account_id: locked.get(keyOf(line.account))!.id,
          amount: line.amount,
          kind: entry.kind,
          reference: entry.reference,
          created_at: at,
        })),
      )
      .execute();
  }
  return transactionId;
}

export async function accountBalance(db: Executor, environment: Environment, account: AccountRef): Promise<number> {
  const row = await db
    .selectFrom('ledger_accounts')
    .select('balance')
    .where('environment', '=', environment)
    .where('kind', '=', account.kind)
    .where('owner_id', '=', account.ownerId ?? '')
    .executeTakeFirst();
  return row?.balance ?? 0;
}

export interface LedgerCheck {
  ok: boolean;
  accounts: number;
  postings: number;
  problems: string[];
}

/**
 * The ledger's invariants: all postings sum to zero, every ledger transaction sums to zero, each
 * balance equals the sum of its postings, and no account but `funding` is below zero.
 */
export async function checkLedger(db: Kysely<DB>): Promise<LedgerCheck> {
  const problems: string[] = [];
  const total = await sql<{
    sum: string | null;
    n: string;
  }>`SELECT sum(amount)::text AS sum, count(*)::text AS n FROM ledger_postings`.execute(db);
  const sum = BigInt(total.rows[0]?.sum ?? '0');
  if (sum !== 0n) problems.push(`all postings sum to ${sum}, not 0`);
  const unbalanced = await sql<{ transaction_id: string; sum: string }>`
    SELECT transaction_id, sum(amount)::text AS sum FROM ledger_postings GROUP BY transaction_id HAVING sum(amount) <> 0`.execute(
    db,
  );
  for (const row of unbalanced.rows) problems.push(`transaction ${row.transaction_id} sums to ${row.sum}`);
  const drift = await sql<{ id: string; balance: string; posted: string }>`
    SELECT a.id, a.balance::text AS balance, coalesce(sum(p.amount), 0)::text AS posted
    FROM ledger_accounts a LEFT JOIN ledger_postings p ON p.account_id = a.id
    GROUP BY a.id, a.balance HAVING a.balance <> coalesce(sum(p.amount), 0)`.execute(db);
  for (const row of drift.rows)
    problems.push(`account ${row.id} holds ${row.balance} but its postings sum to ${row.posted}`);
  const negative = await db
    .selectFrom('ledger_accounts')
    .select(['id', 'kind', 'balance'])
    .where('kind', '!=', 'funding')
    .where('balance', '<', 0)
    .execute();
  for (const row of negative) problems.push(`${row.kind} account ${row.id} is negative: ${row.balance}`);
  const accounts = await db
    .selectFrom('ledger_accounts')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return { ok: problems.length === 0, accounts: Number(accounts.n), postings: Number(total.rows[0]?.n ?? 0), problems };
}
