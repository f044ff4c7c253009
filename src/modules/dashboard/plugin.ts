import formbody from '@fastify/formbody';
import multipart from '@fastify/multipart';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { toApiError } from '../../http/error-handler.js';
import { dashboardAssets } from './assets.js';
import { activityPages } from './pages/activity/routes.js';
import { authRoutes } from './pages/auth/routes.js';
import { balancePages } from './pages/balance/routes.js';
import { allows, DASHBOARD, isDashboardAccess, langOf, sendPage, type DashboardAccess } from './context.js';
import { sameToken } from '../../http/auth.js';
import { cookieNames, cookiesOf, setCookie } from './cookies.js';
import { developerPages } from './pages/developers/routes.js';
import { errorText, sharedWords } from './i18n.js';
import { homePages } from './pages/home/routes.js';
import { linkPages } from './pages/links/routes.js';
import { paymentPages } from './pages/payments/routes.js';
import { payoutPages } from './pages/payouts/routes.js';
import { orderPages } from './pages/orders/routes.js';
import { productPages } from './pages/products/routes.js';
import { sellerPages } from './pages/sellers/routes.js';
import { settingsPages } from './pages/settings/routes.js';
import { invitationPages } from './pages/team/invitation-routes.js';
import { teamPages } from './pages/team/routes.js';
import { findSession } from './sessions.js';

const FORM_BYTES = 64 * 1024;

/**
 * Every dashboard route's access by `METHOD /path` (the same for every app built: its routes are
 * fixed), as the plugin checked it at startup: what the permission matrix test walks.
 */
export const dashboardAccess = new Map<string, DashboardAccess>();

/** The startup check of a dashboard route: its access declared, then kept in `dashboardAccess`. */
export function recordDashboardRoute(route: Pick<RouteOptions, 'method' | 'url' | 'config'>): void {
  const access: unknown = route.config?.dashboard;
  if (!isDashboardAccess(access)) {
    throw new Error(`${String(route.method)} ${route.url}: a dashboard route declares its config.dashboard access`);
  }
  for (const method of [route.method].flat()) dashboardAccess.set(`${method} ${route.url}`, access);
}

function refuseRole(request: FastifyRequest, reply: FastifyReply) {
  return sendPage(request, reply, 'message', { title: sharedWords(langOf(request)).notAllowed, kind: 'role' }, 403);
}

/**
 * The merchant dashboard at /dashboard: server-drawn HTML pages (the server's one eta engine, every
 * value escaped) over the same services as the API. Every route declares what it needs
 * (`config.dashboard`, checked at startup); everything but the public pages needs a session, every
 * POST the session's CSRF token, and a page or form its permission (the role's, decision 083).
 */
const dashboardApp: FastifyPluginAsyncTypebox = async (app) => {
  const { db, config } = app.services;
  const names = cookieNames(config.publicUrl);

  await app.register(formbody, { bodyLimit: FORM_BYTES });
  // Multipart forms (uploads) are read whole before the CSRF check below, so it sees their
  // hidden fields like any other form's; the file arrives as a Buffer in `body.file`. No file
  // is accepted unless the route raises these limits (config.multipartOptions): a multipart body
  // sent anywhere else, the sign-in page included, is refused at its first file part.
  await app.register(multipart, {
    attachFieldsToBody: 'keyValues',
    limits: { files: 0, fields: 20, fieldSize: FORM_BYTES, parts: 20 },
  });
  app.decorateRequest('dashboard', undefined);

  // Like the API's write policies: a route that forgot to say who may use it does not start.
  app.addHook('onRoute', recordDashboardRoute);

  app.addHook('onRequest', async (request, reply) => {
    // The not-found page has no route config: 'session', so a signed-out visitor is sent to sign
    // in (an unknown address tells them nothing) and any signed-in member sees it.
    const access = request.routeOptions.config.dashboard ?? 'session';
    if (access === 'public') return;
    const token = cookiesOf(request)[names.session];
    const session = token ? await findSession(db, token, config.dashboard.sessionIdleMinutes) : undefined;
    if (!session) {
      if (token) setCookie(reply, names, names.session, '', 0);
      const next = request.method === 'GET' ? request.url : DASHBOARD;
      return reply.redirect(`${DASHBOARD}/login?next=${encodeURIComponent(next)}&notice=ended`, 303);
    }
    request.dashboard = session;
    // A page the role may not open: its message, before anything is read (a POST is refused
    // after its CSRF check below, so a forged form learns nothing either way).
    if (request.method !== 'POST' && !allows(session, access)) return refuseRole(request, reply);
  });

  // The body is parsed, not yet validated: a forged or forbidden form learns nothing about its fields.
  app.addHook('preValidation', async (request, reply) => {
    const session = request.dashboard;
    if (!session || request.method !== 'POST') return;
    const body = (request.body ?? {}) as Record<string, unknown>;
    if (!sameToken(body._csrf, session.csrfToken)) {
      return sendPage(request, reply, 'message', { title: sharedWords(session.lang).formExpired, kind: 'csrf' }, 403);
    }
    if (!allows(session, request.routeOptions.config.dashboard ?? 'session')) return refuseRole(request, reply);
  });

  app.setErrorHandler(async (error, request, reply) => {
    const apiError = toApiError(error as Error, request);
    const lang = langOf(request);
    // The code's own words in the page's language: the API's message is English, for developers.
    const title = apiError.status >= 500 ? sharedWords(lang).somethingWrong : errorText(apiError.code, lang);
    return sendPage(request, reply, 'message', { title, kind: apiError.code }, apiError.status);
  });
  app.setNotFoundHandler(async (request, reply) =>
    sendPage(request, reply, 'message', { title: sharedWords(langOf(request)).notFound, kind: 'not-found' }, 404),
  );

  await app.register(authRoutes, { names });
  await app.register(homePages);
  await app.register(paymentPages);
  await app.register(linkPages);
  await app.register(orderPages);
  await app.register(balancePages);
  await app.register(payoutPages);
  await app.register(productPages);
  await app.register(sellerPages);
  await app.register(developerPages);
  await app.register(settingsPages);
  await app.register(activityPages);
  await app.register(teamPages);
  await app.register(invitationPages, { names });
};

/** Mounted with its own prefix, so its not-found and error pages stay inside /dashboard. */
export const dashboardRoutes: FastifyPluginAsyncTypebox = async (app) => {
  await app.register(dashboardApp, { prefix: DASHBOARD });
  // Outside the app above: a stylesheet needs no session.
  await app.register(dashboardAssets.routes);
};
