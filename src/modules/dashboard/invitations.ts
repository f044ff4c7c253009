import { randomBytes } from 'node:crypto';
import { sql, type Transaction } from 'kysely';
import type { DashboardRole, DB } from '../../db/schema.js';
import type { Executor } from '../../db/transaction.js';
import { ApiError, invalid } from '../../http/errors.js';
import { newId } from '../../lib/ids.js';
import { hashToken } from './sessions.js';
import { createUser, isEmail, listUsers, normalizeEmail, type UserView } from './users.js';

/**
 * Invitations to a business's team (issue 53, decision 083): a one-time link, valid 72 hours,
 * shown once to the inviter (no email is sent: passing it on is theirs); only its hash is kept.
 */
export const INVITATION_HOURS = 72;

/** The link's token as issued (32 random bytes, base64url): anything else is forged without a lookup. */
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

export interface InvitationView {
  id: string;
  email: string;
  role: DashboardRole;
  invitedBy: string | null;
  createdAt: string;
  expiresAt: string;
}

/** Why an invitation's link opens nothing: each drawn as its own message, nothing written. */
export type InvitationProblem = 'unknown' | 'used' | 'revoked' | 'expired';

export type InvitationLookup =
  | { ok: true; invitation: InvitationView & { businessId: string; businessName: string } }
  | { ok: false; problem: InvitationProblem };

/**
 * A new invitation and its token (to be shown once). Refused on the email field: not an email,
 * already a dashboard user (of any business: an email signs in to one), or already invited and
 * not yet answered.
 */
export async function createInvitation(
  trx: Transaction<DB>,
  input: { businessId: string; email: string; role: DashboardRole; invitedBy: string | null },
): Promise<{ invitation: InvitationView; token: string }> {
  const email = normalizeEmail(input.email);
  if (!isEmail(email)) throw invalid('body.email', 'is not an email address');
  // A member removed from this business may be invited back (accepting gives the account back);
  // an email in use anywhere else is refused: an email signs in to one business.
  const member = await trx
    .selectFrom('dashboard_users')
    .select(['business_id', 'disabled_at'])
    .where('email', '=', email)
    .executeTakeFirst();
  if (member && !(member.business_id === input.businessId && member.disabled_at !== null)) {
    throw invalid('body.email', 'is already a member');
  }
  const waiting = await trx
    .selectFrom('dashboard_invitations')
    .select('id')
    .where('business_id', '=', input.businessId)
    .where('email', '=', email)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', sql<Date>`now()`)
    .executeTakeFirst();
  if (waiting) throw invalid('body.email', 'has a pending invitation');
  const token = randomBytes(32).toString('base64url');
  const row = await trx
    .insertInto('dashboard_invitations')
    .values({
      id: newId('inv'),
      business_id: input.businessId,
      email,
      role: input.role,
      token_hash: hashToken(token),
      invited_by: input.invitedBy,
      expires_at: sql<Date>`now() + make_interval(hours => ${INVITATION_HOURS})`,
    })
    .returning(['id', 'email', 'role', 'created_at', 'expires_at'])
    .executeTakeFirstOrThrow();
  return {
    token,
    invitation: {
      id: row.id,
      email: row.email,
      role: row.role,
      invitedBy: null,
      createdAt: row.created_at.toISOString(),
      expiresAt: row.expires_at.toISOString(),
    },
  };
}

/** The business's invitations not yet accepted, revoked or expired, newest first, with who invited. */
export async function listPendingInvitations(db: Executor, businessId: string): Promise<InvitationView[]> {
  const rows = await db
    .selectFrom('dashboard_invitations as i')
    .leftJoin('dashboard_users as u', 'u.id', 'i.invited_by')
    .select(['i.id', 'i.email', 'i.role', 'u.email as invited_by', 'i.created_at', 'i.expires_at'])
    .where('i.business_id', '=', businessId)
    .where('i.accepted_at', 'is', null)
    .where('i.revoked_at', 'is', null)
    .where('i.expires_at', '>', sql<Date>`now()`)
    .orderBy('i.created_at', 'desc')
    .orderBy('i.id', 'desc')
    .execute();
  return rows.map((row) => ({
    id: row.id,
    email: row.email,
    role: row.role,
    invitedBy: row.invited_by,
    createdAt: row.created_at.toISOString(),
    expiresAt: row.expires_at.toISOString(),
  }));
}

/** Revokes a pending invitation of the business: its link opens nothing from now on. */
export async function revokeInvitation(
  trx: Transaction<DB>,
  businessId: string,
  id: string,
): Promise<{ email: string; role: DashboardRole }> {
  const row = await trx
    .updateTable('dashboard_invitations')
    .set({ revoked_at: sql<Date>`now()` })
    .where('id', '=', id)
    .where('business_id', '=', businessId)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .returning(['email', 'role'])
    .executeTakeFirst();
  if (!row) throw new ApiError('NOT_FOUND', 'No pending invitation with this id.');
  return row;
}

async function lookUp(db: Executor, token: string, lock: boolean): Promise<InvitationLookup> {
  if (!TOKEN_SHAPE.test(token)) return { ok: false, problem: 'unknown' };
  let query = db
    .selectFrom('dashboard_invitations as i')
    .innerJoin('businesses as b', 'b.id', 'i.business_id')
    .select([
      'i.id',
      'i.business_id',
      'b.name as business_name',
      'i.email',
      'i.role',
      'i.created_at',
      'i.expires_at',
      'i.accepted_at',
      'i.revoked_at',
      sql<boolean>`i.expires_at <= now()`.as('expired'),
    ])
    .where('i.token_hash', '=', hashToken(token));
  if (lock) query = query.forUpdate('i');
  const row = await query.executeTakeFirst();
  if (!row) return { ok: false, problem: 'unknown' };
  if (row.accepted_at) return { ok: false, problem: 'used' };
  if (row.revoked_at) return { ok: false, problem: 'revoked' };
  if (row.expired) return { ok: false, problem: 'expired' };
  return {
    ok: true,
    invitation: {
      id: row.id,
      businessId: row.business_id,
      businessName: row.business_name,
      email: row.email,
      role: row.role,
      invitedBy: null,
      createdAt: row.created_at.toISOString(),
      expiresAt: row.expires_at.toISOString(),
    },
  };
}

/** What a link's token opens (read only: the accept page's GET). */
export function findInvitation(db: Executor, token: string): Promise<InvitationLookup> {
  return lookUp(db, token, false);
}

/**
 * Accepts an invitation with a password hash (from `newPasswordHash`): the member is created with
 * the invitation's role and the invitation is used up, in one transaction; the row is locked so
 * two submits of one link make one member.
 */
export async function acceptInvitation(
  trx: Transaction<DB>,
  token: string,
  passwordHash: string,
): Promise<{ ok: true; user: UserView } | { ok: false; problem: InvitationProblem }> {
  const found = await lookUp(trx, token, true);
  if (!found.ok) return found;
  const { invitation } = found;
  const user =
    (await rejoin(trx, invitation.businessId, invitation.email, passwordHash, invitation.role)) ??
    (await createUser(trx, {
      businessId: invitation.businessId,
      email: invitation.email,
      passwordHash,
      role: invitation.role,
    }));
  await trx
    .updateTable('dashboard_invitations')
    .set({ accepted_at: sql<Date>`now()` })
    .where('id', '=', invitation.id)
    .execute();
  return { ok: true, user };
}

/** A removed member of the business invited back: their account again, with the new password and role. */
async function rejoin(
  trx: Transaction<DB>,
  businessId: string,
  email: string,
  passwordHash: string,
  role: DashboardRole,
): Promise<UserView | undefined> {
  const row = await trx
    .updateTable('dashboard_users')
    .set({ disabled_at: null, password_hash: passwordHash, role, updated_at: sql<Date>`now()` })
    .where('business_id', '=', businessId)
    .where('email', '=', email)
    .where('disabled_at', 'is not', null)
    .returning(['id'])
    .executeTakeFirst();
  return row ? (await listUsers(trx, businessId)).find((user) => user.id === row.id) : undefined;
}
