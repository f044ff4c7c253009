import { createHash, randomBytes } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { deleteInBatches, type BatchBudget, type BatchedDeleteResult } from '../../db/batched-delete.js';
import type { DashboardLang, DashboardRole, DB, Environment } from '../../db/schema.js';
import type { Executor } from '../../db/transaction.js';

/** Who is signed in, as the dashboard's pages and forms see it. */
export interface DashboardSession {
  tokenHash: string;
  csrfToken: string;
  userId: string;
  email: string;
  role: DashboardRole;
  businessId: string;
  businessName: string;
  liveApproved: boolean;
  environment: Environment;
  lang: DashboardLang;
}

/** last_seen_at is written at most this often: a page view should not always cost a write. */
const TOUCH_EVERY_SECONDS = 60;

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export async function createSession(
  db: Executor,
  userId: string,
  lang: DashboardLang,
): Promise<{ token: string; csrfToken: string }> {
  const token = randomBytes(32).toString('base64url');
  const csrfToken = randomBytes(32).toString('base64url');
  await db
    .insertInto('dashboard_sessions')
    .values({ token_hash: hashToken(token), user_id: userId, csrf_token: csrfToken, lang })
    .execute();
  return { token, csrfToken };
}

/**
 * The live session for this cookie, or undefined: unknown, revoked, idle for longer than
 * `idleMinutes`, or its user disabled. A live one is marked seen (at most once a minute).
 */
export async function findSession(
  db: Executor,
  token: string,
  idleMinutes: number,
): Promise<DashboardSession | undefined> {
  const tokenHash = hashToken(token);
  const row = await db
    .selectFrom('dashboard_sessions as s')
    .innerJoin('dashboard_users as u', 'u.id', 's.user_id')
    .innerJoin('businesses as b', 'b.id', 'u.business_id')
    .select([
      's.csrf_token',
      's.environment',
      's.lang',
      'u.id as user_id',
      'u.email',
      'u.role',
      'b.id as business_id',
      'b.name as business_name',
      'b.live_approved',
      sql<boolean>`s.last_seen_at < now() - make_interval(secs => ${TOUCH_EVERY_SECONDS})`.as('stale'),
    ])
    .where('s.token_hash', '=', tokenHash)
    .where('s.revoked_at', 'is', null)
    .where('u.disabled_at', 'is', null)
    .where(sql<boolean>`s.last_seen_at > now() - make_interval(mins => ${idleMinutes})`)
    .executeTakeFirst();
  if (!row) return undefined;
  if (row.stale) {
    await db
      .updateTable('dashboard_sessions')
      .set({ last_seen_at: sql<Date>`now()` })
      .where('token_hash', '=', tokenHash)
      .execute();
  }
  return {
    tokenHash,
    csrfToken: row.csrf_token,
    userId: row.user_id,
    email: row.email,
    role: row.role,
    businessId: row.business_id,
    businessName: row.business_name,
    liveApproved: row.live_approved,
    // A business whose live approval was withdrawn falls back to test mode.
    environment: row.live_approved ? row.environment : 'test',
    lang: row.lang,
  };
}

export async function revokeSession(db: Executor, tokenHash: string): Promise<void> {
  await db
    .updateTable('dashboard_sessions')
    .set({ revoked_at: sql<Date>`now()` })
    .where('token_hash', '=', tokenHash)
    .execute();
}

export async function setSessionPreferences(
  db: Executor,
  tokenHash: string,
  preferences: { environment?: Environment; lang?: DashboardLang },
): Promise<void> {
  await db.updateTable('dashboard_sessions').set(preferences).where('token_hash', '=', tokenHash).execute();
}

/**
 * Periodic (decision 093): sessions that ended (signed out, revoked, or idle past `idleMinutes`)
 * more than `days` ago. No index: a business's team signs in a few times a day, and the table
 * holds only the retention window's sessions.
 */
export function deleteEndedSessions(
  db: Kysely<DB>,
  options: { days: number; idleMinutes: number },
  budget: BatchBudget,
): Promise<BatchedDeleteResult> {
  return deleteInBatches(db, budget, async (trx, limit) => {
    const cutoff = new Date(Date.now() - options.days * 86_400_000);
    const idleSince = new Date(cutoff.getTime() - options.idleMinutes * 60_000);
    const result = await sql`DELETE FROM dashboard_sessions WHERE token_hash IN (
        SELECT token_hash FROM dashboard_sessions
        WHERE revoked_at < ${cutoff} OR last_seen_at < ${idleSince}
        LIMIT ${limit}
        FOR UPDATE SKIP LOCKED)`.execute(trx);
    return Number(result.numAffectedRows ?? 0n);
  });
}
