import { sql, type Transaction } from 'kysely';
import type { DashboardRole, DB } from '../../db/schema.js';
import { ApiError } from '../../http/errors.js';
import { can } from '../team/permissions.js';
import { revokeSessionsOf } from './users.js';

/** Who asks for a change to the team: the signed-in member, as the session read them. */
export interface TeamActor {
  businessId: string;
  userId: string;
}

/** A member's change, as the audit log records it. */
export interface MemberChange {
  email: string;
  from: DashboardRole;
  to: DashboardRole | null;
}

/**
 * A change to a member of the team: a new role, or removed (disabled, every session ended, in this
 * transaction). The business's members are locked first (in id order, so two changes never wait
 * on each other crosswise) and the rules read under the lock: the actor must still hold
 * team.manage (a role changed meanwhile counts), only an owner makes, changes or removes an owner,
 * and the business keeps an active owner, so two owners demoting each other at once leave one.
 */
export async function changeMember(
  trx: Transaction<DB>,
  actor: TeamActor,
  userId: string,
  change: { role: DashboardRole } | { remove: true },
): Promise<MemberChange> {
  const members = await trx
    .selectFrom('dashboard_users')
    .select(['id', 'email', 'role', 'disabled_at'])
    .where('business_id', '=', actor.businessId)
    .orderBy('id')
    .forUpdate()
    .execute();
  const me = members.find((member) => member.id === actor.userId);
  if (!me || me.disabled_at !== null || !can(me.role, 'team.manage')) throw new ApiError('ROLE_NOT_ALLOWED');
  const target = members.find((member) => member.id === userId);
  if (!target || target.disabled_at !== null) throw new ApiError('NOT_FOUND', 'No such member in this business.');
  const role = 'role' in change ? change.role : null;
  if (me.role !== 'owner' && (target.role === 'owner' || role === 'owner')) throw new ApiError('OWNERS_ONLY');
  const ownersLeft = members.filter(
    (member) => member.disabled_at === null && (member.id === userId ? role === 'owner' : member.role === 'owner'),
  );
  if (ownersLeft.length === 0) throw new ApiError('LAST_OWNER');
  if (role === null) {
    await trx
      .updateTable('dashboard_users')
      .set({ disabled_at: sql<Date>`now()`, updated_at: sql<Date>`now()` })
      .where('id', '=', userId)
      .execute();
    await revokeSessionsOf(trx, userId);
  } else {
    await trx
      .updateTable('dashboard_users')
      .set({ role, updated_at: sql<Date>`now()` })
      .where('id', '=', userId)
      .execute();
  }
  // An invitation carries its inviter's say: it ends when they leave or may no longer invite.
  if (role === null || !can(role, 'team.manage')) {
    await trx
      .updateTable('dashboard_invitations')
      .set({ revoked_at: sql<Date>`now()` })
      .where('invited_by', '=', userId)
      .where('accepted_at', 'is', null)
      .where('revoked_at', 'is', null)
      .execute();
  }
  return { email: target.email, from: target.role, to: role };
}

/** Whether `actor` (a member holding team.manage) may invite someone as `role`: only owners invite owners. */
export function checkInviteRole(actorRole: DashboardRole, role: DashboardRole): void {
  if (actorRole !== 'owner' && role === 'owner') throw new ApiError('OWNERS_ONLY');
}
