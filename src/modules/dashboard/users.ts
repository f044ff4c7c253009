import { sql } from 'kysely';
import type { DashboardRole } from '../../db/schema.js';
import type { Executor } from '../../db/transaction.js';
import { ApiError, invalid } from '../../http/errors.js';
import { newId } from '../../lib/ids.js';
import { decoyHash, hashPassword, passwordProblem, verifyPassword } from './password.js';

export interface UserView {
  id: string;
  businessId: string;
  email: string;
  role: DashboardRole;
  disabled: boolean;
  createdAt: string;
}

type UserRow = {
  id: string;
  business_id: string;
  email: string;
  role: DashboardRole;
  disabled_at: Date | null;
  created_at: Date;
};

const userColumns = ['id', 'business_id', 'email', 'role', 'disabled_at', 'created_at'] as const;

function toView(row: UserRow): UserView {
  return {
    id: row.id,
    businessId: row.business_id,
    email: row.email,
    role: row.role,
    disabled: row.disabled_at !== null,
    createdAt: row.created_at.toISOString(),
  };
}

const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,255}\.[^\s@]{1,63}$/;

export function isEmail(email: string): boolean {
  return EMAIL.test(email);
}

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

function checkPassword(password: string): void {
  const problem = passwordProblem(password);
  if (problem) throw invalid('body.password', problem);
}

/**
 * A new password, checked and hashed. Callers hash before their write's transaction: the hash
 * takes ~120 ms of CPU, which a transaction would hold its connection (on PGlite, the whole
 * database) for.
 */
export async function newPasswordHash(password: string, passwordCost: number): Promise<string> {
  checkPassword(password);
  return hashPassword(password, passwordCost);
}

export async function createUser(
  db: Executor,
  input: { businessId: string; email: string; passwordHash: string; role: DashboardRole },
): Promise<UserView> {
  const email = normalizeEmail(input.email);
  if (!EMAIL.test(email)) throw invalid('body.email', 'is not an email address');
  const business = await db.selectFrom('businesses').select('id').where('id', '=', input.businessId).executeTakeFirst();
  if (!business) throw new ApiError('NOT_FOUND', `No business ${input.businessId}.`);
  const row = await db
    .insertInto('dashboard_users')
    .values({
      id: newId('usr'),
      business_id: input.businessId,
      email,
      password_hash: input.passwordHash,
      role: input.role,
    })
    .onConflict((oc) => oc.column('email').doNothing())
    .returning(userColumns)
    .executeTakeFirst();
  if (!row) throw invalid('body.email', 'is already used by a dashboard user');
  return toView(row);
}

export async function listUsers(db: Executor, businessId: string): Promise<UserView[]> {
  const rows = await db
    .selectFrom('dashboard_users')
    .select(userColumns)
    .where('business_id', '=', businessId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map(toView);
}

/** Disables the user and revokes every session it has, in one transaction. */
export async function disableUser(db: Executor, userId: string): Promise<UserView> {
  const row = await db
    .updateTable('dashboard_users')
    .set({ disabled_at: sql<Date>`coalesce(disabled_at, now())`, updated_at: sql<Date>`now()` })
    .where('id', '=', userId)
    .returning(userColumns)
    .executeTakeFirst();
  if (!row) throw new ApiError('NOT_FOUND', `No dashboard user ${userId}.`);
  await revokeSessionsOf(db, userId);
  return toView(row);
}

/**
 * A new password (from `newPasswordHash`) signs the user out everywhere: whoever knew the old one
 * loses their session.
 */
export async function resetPassword(db: Executor, userId: string, passwordHash: string): Promise<UserView> {
  const row = await db
    .updateTable('dashboard_users')
    .set({ password_hash: passwordHash, updated_at: sql<Date>`now()` })
    .where('id', '=', userId)
    .returning(userColumns)
    .executeTakeFirst();
  if (!row) throw new ApiError('NOT_FOUND', `No dashboard user ${userId}.`);
  await revokeSessionsOf(db, userId);
  return toView(row);
}

export async function revokeSessionsOf(db: Executor, userId: string): Promise<void> {
  await db
    .updateTable('dashboard_sessions')
    .set({ revoked_at: sql<Date>`now()` })
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .execute();
}

/**
 * The user these credentials sign in, or (whichever part was wrong) the account the email names,
 * if any, for the audit log of its business. An unknown email is checked against a decoy hash so
 * that it costs the same time as a wrong password.
 */
export async function checkCredentials(
  db: Executor,
  email: string,
  password: string,
  passwordCost: number,
): Promise<{ ok: true; user: UserView } | { ok: false; account: UserView | undefined }> {
  const row = await db
    .selectFrom('dashboard_users')
    .select([...userColumns, 'password_hash'])
    .where('email', '=', normalizeEmail(email))
    .executeTakeFirst();
  const matches = await verifyPassword(password, row?.password_hash ?? (await decoyHash(passwordCost)));
  if (!row) return { ok: false, account: undefined };
  if (!matches || row.disabled_at !== null) return { ok: false, account: toView(row) };
  return { ok: true, user: toView(row) };
}

/** Whether `password` is the user's current one (a disabled or unknown user has none). */
export async function isCurrentPassword(db: Executor, userId: string, password: string): Promise<boolean> {
  const row = await db
    .selectFrom('dashboard_users')
    .select(['password_hash', 'disabled_at'])
    .where('id', '=', userId)
    .executeTakeFirst();
  if (!row || row.disabled_at !== null) return false;
  return verifyPassword(password, row.password_hash);
}

/**
 * A user's change of their own password (from `newPasswordHash`): every other session of theirs
 * ends, whoever knew the old password loses it; the one that changed it stays signed in.
 */
export async function changeOwnPassword(
  db: Executor,
  userId: string,
  passwordHash: string,
  keptTokenHash: string,
): Promise<void> {
  const row = await db
    .updateTable('dashboard_users')
    .set({ password_hash: passwordHash, updated_at: sql<Date>`now()` })
    .where('id', '=', userId)
    .where('disabled_at', 'is', null)
    .returning('id')
    .executeTakeFirst();
  if (!row) throw new ApiError('NOT_FOUND', `No dashboard user ${userId}.`);
  await db
    .updateTable('dashboard_sessions')
    .set({ revoked_at: sql<Date>`now()` })
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .where('token_hash', '<>', keptTokenHash)
    .execute();
}
