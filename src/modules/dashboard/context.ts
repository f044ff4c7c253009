import type { FastifyReply, FastifyRequest } from 'fastify';
import { errorCatalogue, type ErrorCode } from '../../http/errors.js';
import { BASE_STYLESHEET, newNonce, pageCsp, renderView, templateFolder } from '../../http/views.js';
import {
  formatPageAmount,
  formatAmountInput,
  formatBasisPoints,
  formatNumber,
  formatUtcDateTime,
  LANGS,
  LANGUAGE_NAMES,
  negotiateLang,
  textDirection,
  type Lang,
} from '../../lib/i18n.js';
import { secretBase62 } from '../../lib/ids.js';
import { allScopes } from '../keys/scopes.js';
import { can, isPermission, type Permission } from '../team/permissions.js';
import { dashboardAssets } from './assets.js';
import { DASHBOARD, dashboardLinks } from './source-links.js';
import type { DrawnPage, ViewName, Views } from './page-views.js';
import { dictionaries, errorText, type Dictionary } from './i18n.js';
import { badgeStatus, statusText, type StatusVocabulary } from './statuses.js';
import type { DashboardSession } from './sessions.js';

/**
 * What a dashboard route needs, declared by every route (the plugin refuses to start otherwise):
 * `public` (sign-in, an invitation's page), `session` (any signed-in member: sign-out, language,
 * their own password) or a permission of the team's table (src/modules/team/permissions.ts).
 */
export type DashboardAccess = 'public' | 'session' | Permission;

export function isDashboardAccess(value: unknown): value is DashboardAccess {
  return value === 'public' || value === 'session' || (typeof value === 'string' && isPermission(value));
}

/** Whether the session's role may do what `access` names (a page drawing a form asks the same). */
export function allows(session: DashboardSession | undefined, access: DashboardAccess): boolean {
  if (access === 'public') return true;
  if (!session) return false;
  return access === 'session' || can(session.role, access);
}

declare module 'fastify' {
  interface FastifyRequest {
    dashboard: DashboardSession | undefined;
  }
  interface FastifyContextConfig {
    dashboard?: DashboardAccess;
  }
}

export { DASHBOARD };

/** A route's path inside the dashboard plugin (mounted at DASHBOARD) from its full path. */
export function at(fullPath: string): string {
  return fullPath.slice(DASHBOARD.length) || '/';
}

export function requireSession(request: FastifyRequest): DashboardSession {
  if (!request.dashboard) throw new Error('dashboard route reached without a session: check its config.dashboard');
  return request.dashboard;
}

/** The caller the API's services expect, for the session's business and mode (an owner has every scope). */
export function callerOf(session: DashboardSession) {
  return { businessId: session.businessId, environment: session.environment, scopes: [...allScopes] };
}

/**
 * A page's `?lang=` (the shared parameter every page takes, page-query.ts) for that page; else the
 * session's language once signed in (the footer's form changes it); before, the sign-in form's
 * `lang` (the language of the page it was on), then Accept-Language: the core's negotiation.
 */
export function langOf(request: FastifyRequest): Lang {
  const query = (request.query ?? {}) as Record<string, unknown>;
  if (request.dashboard) {
    const asked = negotiateLang(query.lang, undefined);
    return asked.fromQuery ? asked.lang : request.dashboard.lang;
  }
  const body = (request.body ?? {}) as Record<string, unknown>;
  return negotiateLang(query.lang ?? body.lang, request.headers['accept-language']).lang;
}

/** The languages a reader may switch to, each named in itself and written in its own direction. */
export function languageChoices(current: Lang) {
  return LANGS.map((lang) => ({
    lang,
    name: LANGUAGE_NAMES[lang],
    dir: textDirection(lang),
    current: lang === current,
  }));
}

/** The dashboard's templates, as the shared view engine names them. */
const VIEWS = templateFolder(import.meta.url);

/**
 * A dashboard page's policy: scripts only add (an image's preview before its upload, drawn from a
 * blob: URL); pages work without them.
 */
const DASHBOARD_POLICY = { scripts: true, images: 'self-data-blob', forms: 'self' } as const;

/** A `?notice=` or `?error=` shown on the page: only known words and error codes are displayed. */
function flash(request: FastifyRequest, t: Dictionary, lang: Lang): { notice?: string; error?: string } {
  const query = (request.query ?? {}) as Record<string, unknown>;
  const out: { notice?: string; error?: string } = {};
  if (query.notice === 'done') out.notice = t.done;
  if (query.notice === 'already') out.notice = t.alreadyDone;
  const code = query.error;
  if (typeof code === 'string' && Object.hasOwn(errorCatalogue, code)) {
    out.error = errorText(code as ErrorCode, lang);
  }
  return out;
}

/**
 * Renders a dashboard page through the view engine with what every page shows, and the headers
 * every page carries: `data` is the page's view model, checked against the template's (Views).
 */
export function sendPage<K extends ViewName>(
  request: FastifyRequest,
  reply: FastifyReply,
  template: K,
  data: Views[K],
  status = 200,
): Promise<FastifyReply> {
  return drawPage(request, reply, { template, data } as DrawnPage, status);
}

/** A page already paired with its data (a write's page shown once): sendPage's own path. */
export async function drawPage(
  request: FastifyRequest,
  reply: FastifyReply,
  { template, data }: DrawnPage,
  status = 200,
): Promise<FastifyReply> {
  const nonce = newNonce();
  const lang = langOf(request);
  const t = dictionaries[lang];
  const session = request.dashboard;
  const html = renderView(`${VIEWS}/${template}`, {
    t,
    lang,
    dir: textDirection(lang),
    languages: languageChoices(lang),
    nonce,
    stylesheets: [BASE_STYLESHEET, 'dashboard.css', 'phone.css'].map((name) => dashboardAssets.url(name)),
    // A page's own script (served as a file, loaded under the nonce): `<script src="<%= it.asset('x.js') %>">`.
    asset: (name: string) => dashboardAssets.url(name),
    session,
    // What the signed-in member's role may do: a page draws a form or a link only when it may.
    allowed: (permission: Permission) => allows(session, permission),
    path: request.url.split('?')[0],
    // The one money formatter of every page: a negative amount's minus stays before its digits in Arabic.
    mru: (centimes: number, sign?: 'always') => formatPageAmount(centimes, lang, sign),
    amountInput: (centimes: number) => formatAmountInput(centimes, lang),
    percent: (bps: number) => formatBasisPoints(bps, lang),
    number: (value: number) => formatNumber(value, lang),
    date: (value: Date | string | null) =>
      value === null ? '' : formatUtcDateTime(typeof value === 'string' ? new Date(value) : value, lang),
    statusText: (vocabulary: StatusVocabulary, status: string) => statusText(t, vocabulary, status),
    // Every link to a payment, order, payout, batch or seller page: `it.links.source(b.source)`.
    links: dashboardLinks,
    badgeStatus,
    // A fresh idempotency token per form drawn: a double submit of one form carries the same one.
    formToken: () => secretBase62(24),
    ...flash(request, t, lang),
    ...data,
  });
  return reply
    .code(status)
    .type('text/html; charset=utf-8')
    .header('Cache-Control', 'no-store')
    .header('Content-Security-Policy', pageCsp(nonce, DASHBOARD_POLICY))
    .header('X-Content-Type-Options', 'nosniff')
    .header('Referrer-Policy', 'same-origin')
    .header('X-Frame-Options', 'DENY')
    .send(html);
}

/** A path of this dashboard to go back to after sign-in; anything else becomes the home page. */
export function safeNext(value: unknown): string {
  return typeof value === 'string' && /^\/dashboard(\/[A-Za-z0-9._~/-]*)?(\?[A-Za-z0-9._~=&%-]*)?$/.test(value)
    ? value
    : DASHBOARD;
}
