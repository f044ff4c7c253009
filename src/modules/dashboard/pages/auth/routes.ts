import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { at, DASHBOARD, langOf, requireSession, safeNext, sendPage } from '../../context.js';
import { isLang } from '../../../../lib/i18n.js';
import { wordsFor } from '../../i18n.js';
import { sameToken } from '../../../../http/auth.js';
import { cookiesOf, newToken, setCookie, type CookieNames } from '../../cookies.js';
import { createSession, revokeSession, setSessionPreferences } from '../../sessions.js';
import { passwordAttemptAllowed, RETRY_AFTER_SECONDS } from '../../password-attempts.js';
import { checkCredentials } from '../../users.js';
import { anonymousActorOf, recordAudit } from '../../../audit/record.js';
import { pageQuery } from '../../page-query.js';

const LoginForm = Type.Object(
  {
    email: Type.String({ maxLength: 320 }),
    password: Type.String({ maxLength: 1000 }),
    _csrf: Type.Optional(Type.String({ maxLength: 200 })),
    next: Type.Optional(Type.String({ maxLength: 2000 })),
    // The language of the page the form was on: the session keeps speaking it.
    lang: Type.Optional(Type.String({ maxLength: 8 })),
  },
  { additionalProperties: false },
);
const LoginQuery = pageQuery({
  next: Type.Optional(Type.String({ maxLength: 2000 })),
  notice: Type.Optional(Type.String({ maxLength: 20 })),
});
const TokenOnly = Type.Object(
  { _csrf: Type.Optional(Type.String({ maxLength: 200 })) },
  { additionalProperties: false },
);
const PreferencesForm = Type.Object(
  {
    _csrf: Type.Optional(Type.String({ maxLength: 200 })),
    environment: Type.Optional(Type.Union([Type.Literal('test'), Type.Literal('live')])),
    lang: Type.Optional(Type.String({ maxLength: 8 })),
    back: Type.Optional(Type.String({ maxLength: 2000 })),
  },
  { additionalProperties: false },
);

const LOGIN_TOKEN = /^[A-Za-z0-9_-]{43}$/;

/** Sign-in, sign-out, and the session's mode (test / live) and language. */
export const authRoutes: FastifyPluginAsyncTypebox<{ names: CookieNames }> = async (app, { names }) => {
  const { db, config } = app.services;

  /**
   * The sign-in form carries a token that must match its cookie (double submit): another site
   * cannot sign a browser into an account of its choosing.
   */
  function loginPage(
    request: FastifyRequest,
    reply: FastifyReply,
    status: number,
    data: { error?: string; notice?: string; email?: string; next: string },
  ) {
    let token = cookiesOf(request)[names.login];
    if (!token || !LOGIN_TOKEN.test(token)) {
      token = newToken();
      setCookie(reply, names, names.login, token);
    }
    return sendPage(request, reply, 'login', { loginToken: token, email: '', ...data }, status);
  }

  app.get(
    at(`${DASHBOARD}/login`),
    { config: { dashboard: 'public' }, schema: { hide: true, querystring: LoginQuery } },
    async (request, reply) => {
      const t = wordsFor('auth', langOf(request));
      return loginPage(request, reply, 200, {
        next: safeNext(request.query.next),
        ...(request.query.notice === 'ended' ? { notice: t.sessionEnded } : {}),
      });
    },
  );

  app.post(
    at(`${DASHBOARD}/login`),
    { config: { dashboard: 'public' }, schema: { hide: true, body: LoginForm } },
    async (request, reply) => {
      const lang = langOf(request);
      const t = wordsFor('auth', lang);
      const { email, password } = request.body;
      const next = safeNext(request.body.next);
      const shown = { email: email.slice(0, 320), next };
      if (!sameToken(request.body._csrf, cookiesOf(request)[names.login])) {
        return loginPage(request, reply, 403, { ...shown, error: t.formExpired });
      }
      if (!(await passwordAttemptAllowed(request, email))) {
        reply.header('Retry-After', RETRY_AFTER_SECONDS);
        return loginPage(request, reply, 429, { ...shown, error: t.tooManyAttempts });
      }
      const checked = await checkCredentials(db, email, password, config.dashboard.passwordCost);
      if (!checked.ok) {
        // Recorded in the business of the account the email names (an unknown email has none),
        // in a transaction of its own: nothing else is written.
        const { account } = checked;
        if (account) {
          await recordAudit(db, {
            businessId: account.businessId,
            environment: null,
            action: 'user.sign_in_failed',
            actor: anonymousActorOf(request, email.slice(0, 320)),
            target: { kind: 'dashboard_user', id: account.id },
          });
        }
        return loginPage(request, reply, 401, { ...shown, error: t.badCredentials });
      }
      const { user } = checked;
      const session = await db.transaction().execute(async (trx) => {
        await recordAudit(trx, {
          businessId: user.businessId,
          environment: null,
          action: 'user.signed_in',
          actor: { ...anonymousActorOf(request, user.email), id: user.id },
          target: { kind: 'dashboard_user', id: user.id },
        });
        return createSession(trx, user.id, lang);
      });
      setCookie(reply, names, names.session, session.token);
      return reply.redirect(next, 303);
    },
  );

  app.post(
    at(`${DASHBOARD}/logout`),
    { config: { dashboard: 'session' }, schema: { hide: true, body: TokenOnly } },
    async (request, reply) => {
      await revokeSession(db, requireSession(request).tokenHash);
      setCookie(reply, names, names.session, '', 0);
      return reply.redirect(`${DASHBOARD}/login`, 303);
    },
  );

  // A preference of this session only (what the user looks at), so viewers may switch too.
  app.post(
    at(`${DASHBOARD}/preferences`),
    { config: { dashboard: 'session' }, schema: { hide: true, body: PreferencesForm } },
    async (request, reply) => {
      const session = requireSession(request);
      const { environment, lang } = request.body;
      const back = safeNext(request.body.back);
      if (environment === 'live' && !session.liveApproved) {
        return reply.redirect(`${back}${back.includes('?') ? '&' : '?'}error=LIVE_ACCESS_NOT_APPROVED`, 303);
      }
      await setSessionPreferences(db, session.tokenHash, {
        ...(environment ? { environment } : {}),
        ...(isLang(lang) ? { lang } : {}),
      });
      // Another mode's pages show other data: a detail page of one mode means nothing in the other.
      return reply.redirect(environment ? DASHBOARD : back, 303);
    },
  );
};
