import type { FastifyPluginAsync } from 'fastify';
import type { Kysely } from 'kysely';
import Negotiator from 'negotiator';
import type { DB } from '../../db/schema.js';
import { PRODUCT_NAME } from '../../http/docs-page.js';
import { newNonce, pageCsp, renderView, templateFolder } from '../../http/views.js';
import { DEMO_BUSINESS_ID, DEMO_BUSINESS_NAME } from '../businesses/service.js';
import { DASHBOARD } from '../dashboard/context.js';

const VIEWS = templateFolder(import.meta.url);
/** Only this page's own style; nothing else loads, it has no form. */
const WELCOME_POLICY = { forms: 'none' } as const;

/** Where a newcomer goes from the server's root: every path here is one this server answers. */
export interface WelcomeLinks {
  dashboard: string;
  dashboardLogin: string;
  apiDocs: string;
  openapi: string;
  apiBase: string;
  /** A shop's storefront, `{shopId}` standing for the shop's id. */
  storefront: string;
  /** The demo business's sandbox storefront, when the server seeded one. */
  demoStorefront: string | null;
  health: string;
  ready: string;
}

/**
 * The sandbox shop of the demo business the first start seeds (SEED_DEMO): a storefront to open
 * at once on a fresh install. Found by the id only the seed gives, never by the name: a merchant
 * calling itself "Demo Shop" is not linked from the server's front page.
 */
async function demoShopId(db: Kysely<DB>): Promise<string | null> {
  const shop = await db
    .selectFrom('shops')
    .select('id')
    .where('business_id', '=', DEMO_BUSINESS_ID)
    .where('environment', '=', 'test')
    .executeTakeFirst();
  return shop?.id ?? null;
}

/**
 * `GET /`: what this server is and where to go (dashboard, API docs, storefronts, health checks),
 * as a small HTML page, or as JSON for a client asking for it (`Accept: application/json`), so
 * a first look at the root is not a JSON 404.
 */
export function welcomeRoutes(options: { apiBase: string; docs: string }): FastifyPluginAsync {
  return async (app) => {
    const { db, config } = app.services;
    app.get('/', { schema: { hide: true } }, async (request, reply) => {
      const links: WelcomeLinks = {
        dashboard: DASHBOARD,
        dashboardLogin: `${DASHBOARD}/login`,
        apiDocs: options.docs,
        openapi: `${options.apiBase}/openapi.json`,
        apiBase: options.apiBase,
        storefront: '/s/{shopId}',
        demoStorefront: null,
        health: '/health',
        ready: '/ready',
      };
      if (config.seedDemo) {
        const shopId = await demoShopId(db);
        if (shopId) links.demoStorefront = `/s/${encodeURIComponent(shopId)}`;
      }
      reply.header('Vary', 'Accept').header('Cache-Control', 'no-store').header('X-Content-Type-Options', 'nosniff');
      // HTML unless JSON is preferred: browsers, and curl's */*, get the page.
      const wanted = new Negotiator({ headers: { accept: request.headers.accept ?? '*/*' } }).mediaType([
        'text/html',
        'application/json',
      ]);
      if (wanted === 'application/json') {
        return reply
          .type('application/json; charset=utf-8')
          .send({ success: true, data: { name: PRODUCT_NAME, links } });
      }
      const nonce = newNonce();
      const html = renderView(`${VIEWS}/welcome`, {
        nonce,
        links,
        demoBusiness: DEMO_BUSINESS_NAME,
        product: PRODUCT_NAME,
      });
      return reply
        .type('text/html; charset=utf-8')
        .header('Content-Security-Policy', pageCsp(nonce, WELCOME_POLICY))
        .header('Referrer-Policy', 'same-origin')
        .header('X-Frame-Options', 'DENY')
        .send(html);
    });
  };
}
