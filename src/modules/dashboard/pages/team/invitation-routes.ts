import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { sameToken } from '../../../../http/auth.js';
import { ApiError } from '../../../../http/errors.js';
import { recordAudit } from '../../../audit/record.js';
import { at, DASHBOARD, langOf, sendPage } from '../../context.js';
import { cookiesOf, newToken, setCookie, type CookieNames } from '../../cookies.js';
import { fieldChecks, formState, refusalOf, type FormFields } from '../../form-errors.js';
import { wordsFor } from '../../i18n.js';
import { acceptInvitation, findInvitation, type InvitationProblem } from '../../invitations.js';
import { passwordProblem } from '../../password.js';
import { passwordAttemptAllowed, RETRY_AFTER_SECONDS } from '../../password-attempts.js';
import { createSession } from '../../sessions.js';
import { newPasswordHash } from '../../users.js';
import { INVITATIONS } from './routes.js';
import { pageQuery } from '../../page-query.js';

const TokenParams = Type.Object({ token: Type.String({ minLength: 1, maxLength: 200 }) });
const LangQuery = pageQuery({});
const JoinForm = Type.Object(
  {
    _csrf: Type.Optional(Type.String({ maxLength: 200 })),
    lang: Type.Optional(Type.String({ maxLength: 8 })),
    password: Type.String({ maxLength: 1000 }),
    again: Type.String({ maxLength: 1000 }),
  },
  { additionalProperties: false },
);

const JOIN_FIELDS: FormFields<'team'> = {
  fields: [
    { pattern: /^password$/, text: 'fieldJoinPassword' },
    { pattern: /^again$/, text: 'fieldJoinAgain' },
  ],
  codes: { RATE_LIMITED: { field: 'password', text: 'fieldJoinAttempts' } },
};

const PROBLEM_WORDS = {
  unknown: 'invitationUnknown',
  used: 'invitationUsed',
  revoked: 'invitationRevoked',
  expired: 'invitationExpired',
} as const satisfies Record<InvitationProblem, string>;

/** A forged token is not found; a used, withdrawn or expired one is gone. */
const PROBLEM_STATUS: Record<InvitationProblem, number> = { unknown: 404, used: 410, revoked: 410, expired: 410 };

const LOGIN_TOKEN = /^[A-Za-z0-9_-]{43}$/;

/**
 * The invitation's page (public, decision 083): whoever holds the link chooses a password and
 * becomes a member with the invitation's role, signed in at once. A link forged, used, withdrawn
 * or expired draws its message and writes nothing. The form carries the sign-in form's
 * double-submit token, so another site cannot sign a browser in as a member of its choosing.
 */
export const invitationPages: FastifyPluginAsyncTypebox<{ names: CookieNames }> = async (app, { names }) => {
  const { db, config } = app.services;

  const refuse = (request: FastifyRequest, reply: FastifyReply, problem: InvitationProblem) =>
    sendPage(
      request,
      reply,
      'message',
      { title: wordsFor('team', langOf(request))[PROBLEM_WORDS[problem]], kind: `invitation-${problem}` },
      PROBLEM_STATUS[problem],
    );

  const drawJoin = async (request: FastifyRequest, reply: FastifyReply, token: string, refusal?: ApiError) => {
    const found = await findInvitation(db, token);
    if (!found.ok) return refuse(request, reply, found.problem);
    let loginToken = cookiesOf(request)[names.login];
    if (!loginToken || !LOGIN_TOKEN.test(loginToken)) {
      loginToken = newToken();
      setCookie(reply, names, names.login, loginToken);
    }
    const t = wordsFor('team', langOf(request));
    const { businessName, email, role } = found.invitation;
    return sendPage(
      request,
      reply,
      'invitation',
      {
        businessName,
        email,
        role,
        action: `${INVITATIONS}/${token}`,
        loginToken,
        ...formState(refusal ? refusalOf(refusal, t, JOIN_FIELDS) : undefined),
      },
      refusal?.status,
    );
  };

  app.get(
    at(`${INVITATIONS}/:token`),
    { config: { dashboard: 'public' }, schema: { hide: true, params: TokenParams, querystring: LangQuery } },
    // The link is a secret: like every dashboard page, this one is never cached (no-store) and its
    // address is never sent to another site (Referrer-Policy: same-origin).
    async (request, reply) => drawJoin(request, reply, request.params.token),
  );

  app.post(
    at(`${INVITATIONS}/:token`),
    { config: { dashboard: 'public' }, schema: { hide: true, params: TokenParams, body: JoinForm } },
    async (request, reply) => {
      const { token } = request.params;
      const { password, again } = request.body;
      if (!sameToken(request.body._csrf, cookiesOf(request)[names.login])) {
        const t = wordsFor('team', langOf(request));
        return sendPage(request, reply, 'message', { title: t.formExpired, kind: 'csrf' }, 403);
      }
      const found = await findInvitation(db, token);
      if (!found.ok) return refuse(request, reply, found.problem);
      // The password a new member chooses spends sign-in's budget (decision 072), like every other.
      if (!(await passwordAttemptAllowed(request, found.invitation.email))) {
        reply.header('Retry-After', RETRY_AFTER_SECONDS);
        return drawJoin(request, reply, token, new ApiError('RATE_LIMITED'));
      }
      const checks = fieldChecks();
      const problem = passwordProblem(password);
      if (problem) checks.refuse('password', problem);
      else if (again !== password) checks.refuse('again', 'is not the same as password');
      try {
        checks.finish();
      } catch (error) {
        if (error instanceof ApiError) return drawJoin(request, reply, token, error);
        throw error;
      }
      // Hashed before the transaction (the hash is slow); the invitation is checked again under its lock.
      const passwordHash = await newPasswordHash(password, config.dashboard.passwordCost);
      const lang = langOf(request);
      const joined = await db.transaction().execute(async (trx) => {
        const accepted = await acceptInvitation(trx, token, passwordHash);
        if (!accepted.ok) return accepted;
        await recordAudit(trx, {
          businessId: accepted.user.businessId,
          environment: null,
          action: 'user.joined',
          actor: {
            kind: 'user',
            id: accepted.user.id,
            label: accepted.user.email,
            ip: request.ip,
            userAgent: request.headers['user-agent']?.slice(0, 300) ?? null,
          },
          target: { kind: 'dashboard_user', id: accepted.user.id },
          details: { email: accepted.user.email, role: accepted.user.role },
        });
        const session = await createSession(trx, accepted.user.id, lang);
        return { ok: true as const, session };
      });
      if (!joined.ok) return refuse(request, reply, joined.problem);
      setCookie(reply, names, names.session, joined.session.token);
      return reply.redirect(DASHBOARD, 303);
    },
  );
};
