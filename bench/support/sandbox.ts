import type pg from 'pg';
import { randomBase62 } from '../../src/lib/ids.js';
import { sandboxPinHash } from '../../src/modules/sandbox/sandbox.js';

/** What the wallet fill needs of a connection: a pg client, or PGlite for the embedded runs. */
export interface Queryable {
  query(text: string, params?: unknown[]): Promise<{ rows: unknown[] }>;
}

/**
 * `count` sandbox wallets in test (`wal_bench_0`, ...; phones +2225000000, ...), with the sandbox
 * PIN's one hash (hashing is not what is measured), each funded from the test funding account:
 * the postings, the funding account's movement left pending, the wallets' balances. Answers the
 * wallets' phones and their ledger accounts.
 */
export async function fundBenchWallets(
  client: Queryable,
  count: number,
): Promise<{ phones: string[]; walletAccounts: string[] }> {
  const pinHash = await sandboxPinHash();
  const phones = Array.from({ length: count }, (_, i) => `+2225${String(i).padStart(7, '0')}`);
  await client.query(
    `INSERT INTO wallets (id, environment, phone, pin_hash)
     SELECT 'wal_bench_' || i, 'test', ($1::text[])[i + 1], $2 FROM generate_series(0, $3::int - 1) i`,
    [phones, pinHash, count],
  );
  await client.query(
    `WITH funded AS (
       SELECT a.id, 1000000000000::bigint AS amount FROM ledger_accounts a
       JOIN wallets w ON a.kind = 'wallet' AND a.owner_id = w.id WHERE w.id LIKE 'wal_bench_%'),
     postings AS (
       INSERT INTO ledger_postings (transaction_id, account_id, amount, kind, reference, created_at)
       SELECT 'ltx_fund_' || id, id, amount, 'credit', 'bench', now() FROM funded
       UNION ALL
       SELECT 'ltx_fund_' || id, (SELECT id FROM ledger_accounts WHERE environment = 'test' AND kind = 'funding'),
         -amount, 'credit', 'bench', now() FROM funded),
     pending AS (
       INSERT INTO ledger_pending_movements (account_id, amount)
       SELECT (SELECT id FROM ledger_accounts WHERE environment = 'test' AND kind = 'funding'), -sum(amount)
       FROM funded)
     UPDATE ledger_accounts a SET balance = a.balance + f.amount FROM funded f WHERE a.id = f.id`,
  );
  const { rows } = await client.query(
    `SELECT a.id FROM ledger_accounts a JOIN wallets w ON a.kind = 'wallet' AND a.owner_id = w.id
     WHERE w.id LIKE 'wal_bench_%'`,
  );
  const walletAccounts = (rows as { id: string }[]).map((row) => row.id);
  return { phones, walletAccounts };
}

/** A split for the intents of a run: each merchant's three sellers and who bears the fee. */
export interface BenchSplit {
  /** `sellers[m]`: merchant m's three sellers, whose shares are 30 %, 25 % and 20 % of each amount. */
  sellers: [string, string, string][];
  feeBearer: 'BUSINESS' | 'PROPORTIONAL';
}

/**
 * `count` payable (PENDING, FIXED, test) intents, inserted straight into payment_intents, intent
 * `g` to merchant `g mod merchantIds.length`; of `amount` each, or 100 + g mod 1000 without one.
 * With `split`, each is split by amounts between its merchant's three sellers, as the create
 * stores a split (decision 080: `{ fee_bearer, lines }`); the shares, 30/25/20 % rounded down, are
 * at least 20 centimes and fit whatever the fee. Answers each intent's reference and its
 * merchant's index in `merchantIds`.
 */
export async function insertPayableIntents(
  client: pg.Client,
  merchantIds: string[],
  count: number,
  amount?: number,
  split?: BenchSplit,
): Promise<{ reference: string; merchant: number }[]> {
  const run = randomBase62(5);
  // The sellers flat, three per merchant: merchant m's are at 3m + 1, 3m + 2, 3m + 3.
  const sellers = split ? split.sellers.flat() : null;
  const rows = await client.query<{ reference_number: string; m: number }>(
    `INSERT INTO payment_intents (reference_number, short_code, business_id, environment, amount_type, amount,
       status, expires_at, created_at, updated_at, split)
     SELECT 'PI-7' || lpad(g::text, 12, '0') || $3, $3 || '-' || g, ($1::text[])[g % $2 + 1], 'test', 'FIXED',
       i.amount, 'PENDING', now() + interval '1 day', now(), now(),
       CASE WHEN $6::text[] IS NOT NULL THEN jsonb_build_object('fee_bearer', $7::text, 'lines', jsonb_build_array(
         jsonb_build_object('seller', ($6::text[])[3 * (g % $2) + 1], 'amount', i.amount * 30 / 100),
         jsonb_build_object('seller', ($6::text[])[3 * (g % $2) + 2], 'amount', i.amount * 25 / 100),
         jsonb_build_object('seller', ($6::text[])[3 * (g % $2) + 3], 'amount', i.amount * 20 / 100))) END
     FROM generate_series(0, $4::int - 1) g, LATERAL (SELECT coalesce($5::bigint, 100 + g % 1000) AS amount) i
     RETURNING reference_number, (substring(reference_number from 4 for 13)::bigint % $2)::int AS m`,
    [merchantIds, merchantIds.length, run, count, amount ?? null, sellers, split?.feeBearer ?? null],
  );
  return rows.rows.map((row) => ({ reference: row.reference_number, merchant: row.m }));
}
