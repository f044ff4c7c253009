import { sql, type RawBuilder, type Selectable, type Transaction } from 'kysely';
import type { DB, Environment, WalletsTable } from '../../db/schema.js';
import { ApiError } from '../../http/errors.js';
import type { LockedIntent } from '../intents/repo.js';
import { createWallet, hashPin } from '../wallets/service.js';

/** The sandbox payer used when a simulation names none (the rich test wallet of the README). */
export const SANDBOX_DEFAULT_PAYER = '+22220000001';

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
const LOCKED_PAYER = (environment: RawBuilder<unknown>, phone: string, condition = sql`true`) => sql`
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

type IntentAndPayerRow = LockedIntent & {
  [Column in keyof Selectable<WalletsTable> as `wallet_${Column}`]: Selectable<WalletsTable>[Column] | null;
} & { wallet_available: number | null };

/**
 * What `lockPayer` after `repo.lockIntent` does, in one statement and in that lock order: the
 * intent found by `where` is locked by its subquery before the lateral subquery that depends on
 * it locks the payer's wallet in the intent's environment (only when the intent is `owner`'s, if
 * given). `payer` is undefined when the phone has no wallet there.
 */
export async function lockIntentAndPayer(
  trx: Transaction<DB>,
  where: { referenceNumber: string } | { id: number },
  payer: { phone: string; owner?: { businessId: string; environment: Environment } },
): Promise<{ intent: LockedIntent; payer: Payer | undefined } | undefined> {
  const found = 'referenceNumber' in where ? sql`reference_number = ${where.referenceNumber}` : sql`id = ${where.id}`;
  const result = await sql<IntentAndPayerRow>`
    SELECT i.*, f.provider_bps AS plan_provider_bps, f.payer_fee AS plan_payer_fee, f.tof_bps AS plan_tof_bps,
      f.tte_bps AS plan_tte_bps, p.id AS wallet_id, p.environment AS wallet_environment, p.phone AS wallet_phone,
      p.pin_hash AS wallet_pin_hash, p.status AS wallet_status, p.failed_pin_attempts AS wallet_failed_pin_attempts,
      p.locked_until AS wallet_locked_until, p.last_pin_attempt_at AS wallet_last_pin_attempt_at,
      p.created_at AS wallet_created_at, p.available AS wallet_available
    FROM (SELECT * FROM payment_intents WHERE ${found} FOR UPDATE) i
    LEFT JOIN fee_plans f ON f.business_id = i.business_id
    LEFT JOIN LATERAL (${LOCKED_PAYER(
      sql`i.environment`,
      payer.phone,
      payer.owner === undefined
        ? sql`true`
        : sql`i.business_id = ${payer.owner.businessId} AND i.environment = ${payer.owner.environment}`,
    )}) p ON true`.execute(trx);
  const row = result.rows[0];
  if (!row) return undefined;
  const {
    wallet_id: id,
    wallet_environment: environment,
    wallet_phone: phone,
    wallet_pin_hash: pinHash,
    wallet_status: status,
    wallet_failed_pin_attempts: failedPinAttempts,
    wallet_locked_until: lockedUntil,
    wallet_last_pin_attempt_at: lastPinAttemptAt,
    wallet_created_at: createdAt,
    wallet_available: available,
    ...intent
  } = row;
  return {
    intent,
    payer:
      id === null || environment === null || phone === null || pinHash === null || status === null
        ? undefined
        : {
            wallet: {
              id,
              environment,
              phone,
              pin_hash: pinHash,
              status,
              failed_pin_attempts: Number(failedPinAttempts),
              locked_until: lockedUntil,
              last_pin_attempt_at: lastPinAttemptAt,
              created_at: createdAt!,
            },
            available: Number(available),
          },
  };
}

/** decisions.md: any E.164 phone may pay in the sandbox; one without a wallet gets a funded one. */
export const SANDBOX_NEW_WALLET_BALANCE = 100_000_000;
export const SANDBOX_NEW_WALLET_PIN = '1234';

// Every new sandbox wallet has the same documented PIN, so a salt of its own would hide nothing:
// one hash per process. Only a process's first new phone still pays for the slow scrypt inside its
// payment's transaction, its intent locked; every later one reuses that hash.
let sandboxPinHash: Promise<string> | undefined;

/** The sandbox wallet of a phone, locked; a phone with none gets a funded one first. */
export async function sandboxPayer(trx: Transaction<DB>, phone: string): Promise<Payer> {
  const payer = await lockPayer(trx, 'test', phone);
  if (payer) return payer;
  sandboxPinHash ??= hashPin(SANDBOX_NEW_WALLET_PIN).catch((error: unknown) => {
    sandboxPinHash = undefined;
    throw error;
  });
  try {
    await createWallet(
      trx,
      { phone, pin: SANDBOX_NEW_WALLET_PIN, balance: SANDBOX_NEW_WALLET_BALANCE, environment: 'test' },
      sandboxPinHash,
    );
  } catch (error) {
    // A concurrent payment from the same new phone made the wallet first: pay from that one.
    if (!(error instanceof ApiError)) throw error;
  }
  const created = await lockPayer(trx, 'test', phone);
  if (!created) throw new Error(`sandbox wallet ${phone} was not created`);
  return created;
}
