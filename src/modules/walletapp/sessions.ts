import { sql, type Kysely } from 'kysely';
import { deleteInBatches, type BatchBudget, type BatchedDeleteResult } from '../../db/batched-delete.js';
import type { DB, Environment } from '../../db/schema.js';
import type { Executor } from '../../db/transaction.js';
import { hashToken } from '../dashboard/sessions.js';
import { newToken } from '../dashboard/cookies.js';

/** A session ends after this long without a request, and after MAX_HOURS whatever happens. */
export const WALLET_SESSION = { idleMinutes: 30, maxHours: 12 } as const;
/** last_seen_at is written at most this often: a page view should not always cost a write. */
const TOUCH_EVERY_SECONDS = 60;

/** Who is signed in to the wallet app. */
export interface WalletSession {
  tokenHash: string;
  csrfToken: string;
  walletId: string;
  phone: string;
  environment: Environment;
}

export async function createWalletSession(db: Executor, walletId: string): Promise<string> {
  const token = newToken();
  await sql`INSERT INTO wallet_sessions (token_hash, wallet_id, csrf_token)
    VALUES (${hashToken(token)}, ${walletId}, ${newToken()})`.execute(db);
  return token;
}

/**
 * The live session of this cookie, or undefined: unknown, signed out, idle too long or too old.
 * A page or a form the payer asked for keeps the session alive (`touch`); the live stream checks
 * without touching, so that a tab left open does not hold a session past its idle time.
 */
export async function findWalletSession(
  db: Executor,
  token: string,
  { touch }: { touch: boolean } = { touch: true },
): Promise<WalletSession | undefined> {
  const tokenHash = hashToken(token);
  const result = await sql<{
    csrf_token: string;
    wallet_id: string;
    phone: string;
    environment: Environment;
    stale: boolean;
  }>`SELECT s.csrf_token, w.id AS wallet_id, w.phone, w.environment,
      s.last_seen_at < now() - make_interval(secs => ${TOUCH_EVERY_SECONDS}) AS stale
    FROM wallet_sessions s JOIN wallets w ON w.id = s.wallet_id
    WHERE s.token_hash = ${tokenHash} AND s.revoked_at IS NULL
      AND s.last_seen_at > now() - make_interval(mins => ${WALLET_SESSION.idleMinutes})
      AND s.created_at > now() - make_interval(hours => ${WALLET_SESSION.maxHours})`.execute(db);
  const row = result.rows[0];
  if (!row) return undefined;
  if (touch && row.stale) {
    await sql`UPDATE wallet_sessions SET last_seen_at = now() WHERE token_hash = ${tokenHash}`.execute(db);
  }
  return {
    tokenHash,
    csrfToken: row.csrf_token,
    walletId: row.wallet_id,
    phone: row.phone,
    environment: row.environment,
  };
}

export async function revokeWalletSession(db: Executor, tokenHash: string): Promise<void> {
  await sql`UPDATE wallet_sessions SET revoked_at = now() WHERE token_hash = ${tokenHash}`.execute(db);
}

/**
 * Periodic (decision 093): sessions ended more than `days` ago. Every session has ended by
 * `maxHours` after it was made (earlier if signed out or idle), so the task deletes by creation
 * time alone, which migration 057 indexes: a payer's ended session may stay up to 12 hours longer.
 */
export function deleteEndedWalletSessions(
  db: Kysely<DB>,
  days: number,
  budget: BatchBudget,
): Promise<BatchedDeleteResult> {
  return deleteInBatches(db, budget, async (trx, limit) => {
    const madeBefore = new Date(Date.now() - days * 86_400_000 - WALLET_SESSION.maxHours * 3_600_000);
    const result = await sql`DELETE FROM wallet_sessions WHERE token_hash IN (
        SELECT token_hash FROM wallet_sessions WHERE created_at < ${madeBefore}
        ORDER BY created_at LIMIT ${limit} FOR UPDATE SKIP LOCKED)`.execute(trx);
    return Number(result.numAffectedRows ?? 0n);
  });
}
