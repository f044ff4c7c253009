import { sql, type RawBuilder, type Selectable, type Transaction } from 'kysely';
import type { DB, Environment, WalletsTable } from '../../db/schema.js';

/** A payer's wallet with its account row, both locked (`lockPayer`, `lockIntentAndPayer`). */
export interface Payer {
  wallet: Selectable<WalletsTable>;
  /** What the wallet held when it was locked (a charge built since does not lower it). */
  available: number;
}

/**
 * A payer's wallet row with its account's balance, locked (the FROM item of both locks below).
 * The account is found by its primary key from a subquery on the owner: as a plain join, the
 * generic plan of the prepared statement read every wallet account of the environment with the
 * owner as a filter (1,115 rows read at 3,000 wallets without statistics).
 */
export const LOCKED_PAYER = (environment: RawBuilder<unknown>, phone: string, condition = sql`true`) => sql`
  SELECT w.*, a.balance AS available
  FROM wallets w
  JOIN ledger_accounts a ON a.id = (
    SELECT id FROM ledger_accounts WHERE environment = w.environment AND kind = 'wallet' AND owner_id = w.id)
  WHERE w.environment = ${environment} AND w.phone = ${phone} AND ${condition}
  FOR NO KEY UPDATE OF w, a`;

/**
 * The payer's wallet and its ledger account, locked in one statement: the PIN counters and the
 * balance are then read and changed by one transaction at a time.
 */
export async function lockPayer(
  trx: Transaction<DB>,
  environment: Environment,
  phone: string,
): Promise<Payer | undefined> {
  const result = await sql<Selectable<WalletsTable> & { available: number }>`${LOCKED_PAYER(
    sql`${environment}`,
    phone,
  )}`.execute(trx);
  const row = result.rows[0];
  if (!row) return undefined;
  const { available, ...wallet } = row;
  return { wallet, available: Number(available) };
}
