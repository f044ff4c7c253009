import { randomBytes, scrypt as scryptCallback, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { sql, type Kysely, type RawBuilder, type Selectable } from 'kysely';
import { deleteInBatches, type BatchBudget, type BatchedDeleteResult } from '../../db/batched-delete.js';
import type { DB, Environment, WalletsTable } from '../../db/schema.js';
import { inTransaction, type Executor } from '../../db/transaction.js';
import { ApiError } from '../../http/errors.js';
import { newId } from '../../lib/ids.js';
import { fundWallet } from '../payments/funding.js';
import { accountBalance } from '../payments/ledger.js';

export type WalletRow = Selectable<WalletsTable>;

export const MAX_PIN_ATTEMPTS = 5;
export const PIN_LOCK_MINUTES = 15;
const PIN_PATTERN = /^[0-9]{4,6}$/;
// scrypt with N = 2^14: tens of milliseconds per guess, so a stolen table resists brute force.
const SCRYPT = { N: 16_384, r: 8, p: 1, keyLength: 32 };

function scrypt(pin: string, salt: Buffer, options: ScryptOptions, keyLength: number): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scryptCallback(pin, salt, keyLength, options, (error, key) => (error ? reject(error) : resolve(key))),
  );
}

export async function hashPin(pin: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(pin, salt, { N: SCRYPT.N, r: SCRYPT.r, p: SCRYPT.p }, SCRYPT.keyLength);
  return `scrypt$${SCRYPT.N}$${salt.toString('base64')}$${key.toString('base64')}`;
}

export async function pinMatches(pin: string, stored: string): Promise<boolean> {
  const [scheme, n, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !n || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64');
  const key = await scrypt(
    pin,
    Buffer.from(salt, 'base64'),
    { N: Number(n), r: SCRYPT.r, p: SCRYPT.p },
    expected.length,
  );
  return timingSafeEqual(key, expected);
}

export function checkPinFormat(pin: string, field = 'pin'): void {
  if (!PIN_PATTERN.test(pin)) {
    throw new ApiError('VALIDATION_ERROR', `${field} must be 4 to 6 digits.`, [
      { field, message: 'must be 4 to 6 digits' },
    ]);
  }
}

export async function findWallet(
  db: Executor,
  environment: Environment,
  phone: string,
): Promise<WalletRow | undefined> {
  return db
    .selectFrom('wallets')
    .selectAll()
    .where('environment', '=', environment)
    .where('phone', '=', phone)
    .executeTakeFirst();
}

export function lockedUntil(wallet: WalletRow, now = new Date()): Date | null {
  if (wallet.status === 'locked') return new Date(8.64e15);
  return wallet.locked_until && wallet.locked_until > now ? wallet.locked_until : null;
}

function lockedError(until: Date): ApiError {
  return new ApiError(
    'WALLET_LOCKED',
    until.getTime() >= 8.64e15
      ? 'This wallet is locked. Contact support.'
      : `This wallet is locked after too many wrong PINs, until ${until.toISOString()}.`,
  );
}

interface PinAttemptRow {
  /** Whether the phone has a wallet in the environment. */
  has_wallet: boolean;
  /** The wallet after its attempt was taken; null columns when none was (locked, or no wallet). */
  id: string | null;
  environment: Environment | null;
  phone: string | null;
  pin_hash: string | null;
  status: WalletRow['status'] | null;
  failed_pin_attempts: number | null;
  locked_until: Date | null;
  last_pin_attempt_at: Date | null;
  created_at: Date | null;
  /** A wallet refused an attempt: its status and lock as they were. */
  current_status: WalletRow['status'] | null;
  current_locked_until: Date | null;
  /** A phone without a wallet: whether its attempt was taken, the lock it now has, or the one it had. */
  unknown_taken: boolean;
  unknown_locked_until: Date | null;
  unknown_current_locked_until: Date | null;
}

/**
 * Takes one PIN attempt before the (slow) hash is computed, in one statement, whether the phone
 * has a wallet or not (so the number of statements does not tell them apart either): the attempt
 * is counted as wrong up front, and the fifth one in a window locks the wallet, or the phone in
 * `unknown_phone_pin_attempts`, for 15 minutes. One already locked is refused without evaluating
 * anything. However many guesses race, in one process or many, at most five are ever evaluated
 * per lock window; no row lock is held while hashing. An expired lock starts a new window (the
 * count restarts from zero), and so does a last attempt older than the window: wrong PINs decay.
 */
async function takePinAttempt(db: Kysely<DB>, environment: Environment, phone: string): Promise<PinAttemptRow> {
  const lockAfter = (attempts: RawBuilder<number>) => sql`CASE WHEN ${attempts} >= ${MAX_PIN_ATTEMPTS}
    THEN now() + make_interval(mins => ${PIN_LOCK_MINUTES}) ELSE NULL END`;
  const window = sql`make_interval(mins => ${PIN_LOCK_MINUTES})`;
  const walletAttempts = sql<number>`(CASE WHEN w.locked_until IS NOT NULL AND w.locked_until <= now() THEN 0
    WHEN w.last_pin_attempt_at IS NOT NULL AND w.last_pin_attempt_at <= now() - ${window} THEN 0
    ELSE w.failed_pin_attempts END) + 1`;
  const phoneAttempts = sql<number>`(CASE WHEN p.locked_until IS NOT NULL AND p.locked_until <= now() THEN 0
    WHEN p.last_attempt_at <= now() - ${window} THEN 0
    ELSE p.failed_pin_attempts END) + 1`;
  const result = await sql<PinAttemptRow>`
    WITH wallet AS (SELECT * FROM wallets WHERE environment = ${environment} AND phone = ${phone}),
    taken AS (
      UPDATE wallets w SET failed_pin_attempts = ${walletAttempts}, locked_until = ${lockAfter(walletAttempts)},
        last_pin_attempt_at = now()
      FROM wallet
      WHERE w.id = wallet.id AND w.status = 'active' AND (w.locked_until IS NULL OR w.locked_until <= now())
      RETURNING w.*
    ),
    unknown AS (
      INSERT INTO unknown_phone_pin_attempts AS p (environment, phone, failed_pin_attempts, locked_until)
      SELECT ${environment}, ${phone}, 1, ${lockAfter(sql<number>`1`)}
      WHERE NOT EXISTS (SELECT 1 FROM wallet)
      ON CONFLICT (environment, phone) DO UPDATE
      SET failed_pin_attempts = ${phoneAttempts}, locked_until = ${lockAfter(phoneAttempts)}, last_attempt_at = now()
      WHERE p.locked_until IS NULL OR p.locked_until <= now()
      RETURNING p.locked_until
    )
    SELECT EXISTS (SELECT 1 FROM wallet) AS has_wallet, t.id, t.environment, t.phone, t.pin_hash, t.status,
      t.failed_pin_attempts, t.locked_until, t.last_pin_attempt_at, t.created_at,
      (SELECT status FROM wallet) AS current_status, (SELECT locked_until FROM wallet) AS current_locked_until,
      EXISTS (SELECT 1 FROM unknown) AS unknown_taken, (SELECT locked_until FROM unknown) AS unknown_locked_until,
      (SELECT q.locked_until FROM unknown_phone_pin_attempts q
        WHERE q.environment = ${environment} AND q.phone = ${phone}) AS unknown_current_locked_until
    FROM (SELECT 1) AS one LEFT JOIN taken t ON true`.execute(db);
  return result.rows[0]!;
}

/**
 * Worker task: rows whose lock has expired, or whose last attempt is older than the lock window
 * (whatever their count), count as zero attempts; forget them.
 */
export function deleteExpiredUnknownPhoneAttempts(db: Kysely<DB>, budget: BatchBudget): Promise<BatchedDeleteResult> {
  return deleteInBatches(db, budget, async (trx, limit) => {
    const result = await sql`DELETE FROM unknown_phone_pin_attempts WHERE (environment, phone) IN (
        SELECT environment, phone FROM unknown_phone_pin_attempts
        WHERE locked_until <= now() OR last_attempt_at <= now() - make_interval(mins => ${PIN_LOCK_MINUTES})
        LIMIT ${limit} FOR UPDATE SKIP LOCKED)`.execute(trx);
    return Number(result.numAffectedRows ?? 0n);
  });
}

/** One answer for a phone without a wallet and a wrong PIN: the pay routes must not tell them apart. */
function wrongPhoneOrPin(): ApiError {
  return new ApiError('INVALID_PIN', 'Wrong phone number or PIN.');
}

let decoyHash: Promise<string> | undefined;

/**
 * The wallet for a phone, if its PIN is right. The attempt is taken (counted as wrong) before the
 * hash; a right PIN then clears the count and any lock its own attempt caused. A phone without a
 * wallet costs the same hash and gets the same answer as a wrong PIN.
 */
export async function authenticateWallet(
  db: Kysely<DB>,
  environment: Environment,
  phone: string,
  pin: string,
): Promise<WalletRow> {
  const attempt = await takePinAttempt(db, environment, phone);
  if (!attempt.has_wallet) {
    // Counted and locked like a wallet's wrong PINs, and hashed alike, so neither the answers
    // (the fifth is WALLET_LOCKED, then locked until the same time) nor their timing tell that
    // this phone has no wallet.
    if (!attempt.unknown_taken) {
      throw lockedError(attempt.unknown_current_locked_until ?? new Date(Date.now() + PIN_LOCK_MINUTES * 60_000));
    }
    decoyHash ??= hashPin('000000');
    await pinMatches(pin, await decoyHash);
    if (attempt.unknown_locked_until) throw lockedError(attempt.unknown_locked_until);
    throw wrongPhoneOrPin();
  }
  const { id, pin_hash: pinHash, status, created_at: createdAt } = attempt;
  if (id === null || pinHash === null || status === null || createdAt === null) {
    // Locked by an operator, or by wrong PINs until a time; a lock the statement found without
    // seeing it in its snapshot was taken meanwhile by a concurrent attempt: it ends in 15 minutes.
    const until =
      attempt.current_status === 'locked'
        ? new Date(8.64e15)
        : attempt.current_locked_until && attempt.current_locked_until > new Date()
          ? attempt.current_locked_until
          : new Date(Date.now() + PIN_LOCK_MINUTES * 60_000);
    throw lockedError(until);
  }
  const wallet: WalletRow = {
    id,
    environment,
    phone,
    pin_hash: pinHash,
    status,
    failed_pin_attempts: Number(attempt.failed_pin_attempts),
    locked_until: attempt.locked_until,
    last_pin_attempt_at: attempt.last_pin_attempt_at,
    created_at: createdAt,
  };
  if (await pinMatches(pin, wallet.pin_hash)) {
    // The right PIN forgives the attempts counted up to its own, not those counted since by
    // concurrent guesses: they stay counted, and a lock they reached on their own stays.
    const forgiven = wallet.failed_pin_attempts;
    const left = sql<number>`greatest(failed_pin_attempts - ${forgiven}, 0)`;
    await db
      .updateTable('wallets')
      .set({
        failed_pin_attempts: left,
        locked_until: sql`CASE WHEN ${left} >= ${MAX_PIN_ATTEMPTS} THEN locked_until END`,
      })
      .where('id', '=', wallet.id)
      .execute();
    return { ...wallet, failed_pin_attempts: 0, locked_until: null };
  }
  if (wallet.locked_until) throw lockedError(wallet.locked_until);
  throw wrongPhoneOrPin();
}

export async function createWallet(
  db: Executor,
  input: { phone: string; pin: string; balance: number; environment: Environment; locked?: boolean },
  /**
   * The PIN's hash when the caller has it already: the sandbox wallets share one, and a write
   * hashes before its transaction (the hash is slow).
   */
  hashed?: string | Promise<string>,
): Promise<WalletRow> {
  checkPinFormat(input.pin);
  const pinHash = await (hashed ?? hashPin(input.pin));
  return inTransaction(db, async (trx) => {
    const wallet = await trx
      .insertInto('wallets')
      .values({
        id: newId('wal'),
        environment: input.environment,
        phone: input.phone,
        pin_hash: pinHash,
        status: input.locked ? 'locked' : 'active',
        locked_until: null,
      })
      .onConflict((conflict) => conflict.columns(['environment', 'phone']).doNothing())
      .returningAll()
      .executeTakeFirst();
    if (!wallet)
      throw new ApiError('VALIDATION_ERROR', `A ${input.environment} wallet for ${input.phone} already exists.`, [
        { field: 'body.phone', message: 'already has a wallet in this environment' },
      ]);
    if (input.balance > 0) await fundWallet(trx, wallet, input.balance);
    return wallet;
  });
}

export async function creditWallet(db: Executor, input: { phone: string; amount: number; environment: Environment }) {
  return inTransaction(db, async (trx) => {
    const wallet = await findWallet(trx, input.environment, input.phone);
    if (!wallet) throw new ApiError('WALLET_NOT_FOUND');
    await fundWallet(trx, wallet, input.amount);
    return walletView(trx, wallet);
  });
}

export async function walletView(db: Executor, wallet: WalletRow) {
  const until = lockedUntil(wallet);
  return {
    id: wallet.id,
    phone: wallet.phone,
    environment: wallet.environment,
    balance: await accountBalance(db, wallet.environment, { kind: 'wallet', ownerId: wallet.id }),
    status: until ? ('locked' as const) : ('active' as const),
    lockedUntil: until && until.getTime() < 8.64e15 ? until.toISOString() : null,
  };
}
