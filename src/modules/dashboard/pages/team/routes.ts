import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { DASHBOARD_ROLES, type DashboardRole } from '../../../../db/schema.js';
import type { Executor } from '../../../../db/transaction.js';
import type { ApiError } from '../../../../http/errors.js';
import { FORM_WRITE } from '../../../../http/idempotency/plugin.js';
import { literalUnion } from '../../../../http/schemas.js';
import { actorOf, recordAudit } from '../../../audit/record.js';
import { at, DASHBOARD, langOf, requireSession, sendPage } from '../../context.js';
import { formState, isAboutForm, refusalOf, type FormFields } from '../../form-errors.js';
import { wordsFor } from '../../i18n.js';
import { createInvitation, listPendingInvitations, revokeInvitation } from '../../invitations.js';
import { changeMember, checkInviteRole } from '../../team.js';
import { listUsers } from '../../users.js';
import type { DashboardSession } from '../../sessions.js';
import { dashboardWrite, Flash, Token } from '../../write.js';
import { pageQuery } from '../../page-query.js';

const TEAM = `${DASHBOARD}/team`;
export const INVITATIONS = `${DASHBOARD}/invitations`;

const Role = literalUnion(DASHBOARD_ROLES);
const FlashQuery = pageQuery(Flash);
const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
const TokenForm = Type.Object(Token, { additionalProperties: false });
const RoleForm = Type.Object({ ...Token, role: Role }, { additionalProperties: false });
const InviteForm = Type.Object(
  { ...Token, email: Type.String({ maxLength: 320 }), role: Role },
  { additionalProperties: false },
);

const INVITE_FIELDS: FormFields<'team'> = { fields: [{ pattern: /^email$/, text: 'fieldInviteEmail' }] };

/** The roles a member may give, change or take away: an owner every one, anyone else all but owner. */
export function rolesGivenBy(role: DashboardRole): readonly DashboardRole[] {
  return role === 'owner' ? DASHBOARD_ROLES : DASHBOARD_ROLES.filter((candidate) => candidate !== 'owner');
}

/** The link an invitation is opened at: the server's public address when it has one. */
function invitationLink(request: FastifyRequest, token: string): string {
  const base = request.server.services.config.publicUrl ?? `${request.protocol}://${request.host}`;
  return `${base}${INVITATIONS}/${token}`;
}

/** The Team page's lists and the roles its forms offer; a write reads them in its own transaction, its act included. */
async function teamLists(db: Executor, session: DashboardSession) {
  const [users, invitations] = await Promise.all([
    listUsers(db, session.businessId),
    listPendingInvitations(db, session.businessId),
  ]);
  return { members: users.filter((user) => !user.disabled), invitations, roles: rolesGivenBy(session.role) };
}

/**
 * The Team page (permission team.manage, decision 083): the members and their roles, the pending
 * invitations, and the invitation form whose answer shows the new link once. Every change is
 * recorded in the audit log in its own transaction.
 */
export const teamPages: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app.services;
  const manage = { dashboard: 'team.manage', write: FORM_WRITE } as const;

  const drawTeam = async (
    request: FastifyRequest,
    reply: FastifyReply,
    refusal?: ApiError,
    invite: { email: string; role: DashboardRole } = { email: '', role: 'viewer' },
  ) => {
    const t = wordsFor('team', langOf(request));
    return sendPage(
      request,
      reply,
      'team',
      {
        ...(await teamLists(db, requireSession(request))),
        invite,
        ...formState(refusal ? refusalOf(refusal, t, INVITE_FIELDS) : undefined),
      },
      refusal?.status,
    );
  };

  app.get(
    at(TEAM),
    { config: { dashboard: 'team.manage' }, schema: { hide: true, querystring: FlashQuery } },
    (request, reply) => drawTeam(request, reply),
  );

  // The link is drawn in this answer only: a repeat of the form goes to the team page without it.
  app.post(
    at(`${TEAM}/invitations`),
    { config: manage, schema: { hide: true, body: InviteForm } },
    async (request, reply) => {
      const { email, role } = request.body;
      return dashboardWrite(
        request,
        reply,
        TEAM,
        async (trx, session) => {
          checkInviteRole(session.role, role);
          const { invitation, token } = await createInvitation(trx, {
            businessId: session.businessId,
            email,
            role,
            invitedBy: session.userId,
          });
          await recordAudit(trx, {
            businessId: session.businessId,
            environment: null,
            action: 'user.invited',
            actor: actorOf(request),
            target: { kind: 'dashboard_invitation', id: invitation.id },
            details: { email: invitation.email, role },
          });
          return {
            redirect: TEAM,
            page: {
              template: 'team',
              data: {
                ...(await teamLists(trx, session)),
                invite: { email: '', role: 'viewer' },
                created: { email: invitation.email, link: invitationLink(request, token) },
                ...formState(),
              },
            },
          };
        },
        (error) => (isAboutForm(error, INVITE_FIELDS) ? drawTeam(request, reply, error, { email, role }) : undefined),
      );
    },
  );

  app.post(
    at(`${TEAM}/invitations/:id/revoke`),
    { config: manage, schema: { hide: true, params: IdParams, body: TokenForm } },
    async (request, reply) =>
      dashboardWrite(request, reply, TEAM, async (trx, session) => {
        const revoked = await revokeInvitation(trx, session.businessId, request.params.id);
        checkInviteRole(session.role, revoked.role);
        await recordAudit(trx, {
          businessId: session.businessId,
          environment: null,
          action: 'user.invitation_revoked',
          actor: actorOf(request),
          target: { kind: 'dashboard_invitation', id: request.params.id },
          details: { email: revoked.email, role: revoked.role },
        });
        return { redirect: TEAM };
      }),
  );

  app.post(
    at(`${TEAM}/members/:id/role`),
    { config: manage, schema: { hide: true, params: IdParams, body: RoleForm } },
    async (request, reply) =>
      dashboardWrite(request, reply, TEAM, async (trx, session) => {
        const change = await changeMember(trx, session, request.params.id, { role: request.body.role });
        await recordAudit(trx, {
          businessId: session.businessId,
          environment: null,
          action: 'user.role_changed',
          actor: actorOf(request),
          target: { kind: 'dashboard_user', id: request.params.id },
          details: { email: change.email, from: change.from, to: request.body.role },
        });
        return { redirect: TEAM };
      }),
  );

  app.post(
    at(`${TEAM}/members/:id/remove`),
    { config: manage, schema: { hide: true, params: IdParams, body: TokenForm } },
    async (request, reply) =>
      dashboardWrite(request, reply, TEAM, async (trx, session) => {
        const change = await changeMember(trx, session, request.params.id, { remove: true });
        await recordAudit(trx, {
          businessId: session.businessId,
          environment: null,
          action: 'user.removed',
          actor: actorOf(request),
          target: { kind: 'dashboard_user', id: request.params.id },
          details: { email: change.email, role: change.from },
        });
        return { redirect: TEAM };
      }),
  );
};
