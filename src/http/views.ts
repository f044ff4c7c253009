import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { Eta } from 'eta';
import {
  clientFormatting,
  fillParts,
  formatPageAmount,
  formatAmountInput,
  formatDateTime,
  formatNumber,
  isolatedPart,
  languageLinks,
  ltrPart,
  moneyPart,
  textDirection,
  type LangChoice,
  type TextPart,
} from '../lib/i18n.js';
import { NATIONAL_PHONE_EXAMPLE } from '../lib/phone.js';
import { ApiError } from './errors.js';

/**
 * The customer pages' rendering: eta templates beside their module (every value escaped; the only
 * unescaped output is a layout's body and an included partial, both drawn by eta), one shared
 * layout, and the pages' scripts and stylesheet served as files under their module's path, loaded
 * under the page's CSP nonce (no inline script or style at all).
 */

/** The compiled sources' root (src/ under tsx, dist/ once built): template names start there. */
const SOURCE_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * The server's one view engine: customer pages, the dashboard, the welcome page and printable
 * statements all render through it. Every value is escaped (business names, labels and
 * descriptions are other people's text); a template is named from the sources' root
 * (`/modules/dashboard/views/home`), and names inside a template resolve beside it.
 */
const views = new Eta({ views: SOURCE_ROOT, autoEscape: true, autoTrim: false, cache: true });

/** A template drawn with its data: `template` is its eta name from the sources' root. */
export function renderView(template: string, data: object): string {
  return views.render(template, data);
}

/** The shared layout, its partials and the assets every customer page loads. */
const SHARED_VIEWS = '/http/views';
export const SHARED_ASSETS_DIR = path.join(SOURCE_ROOT, 'http', 'views', 'assets');
/** The stylesheet every page loads before its area's own (base.css): every asset folder serves it. */
const BASE_ASSETS_DIR = path.join(SOURCE_ROOT, 'http', 'views', 'base');
export const BASE_STYLESHEET = 'base.css';

/** A module's folder of templates or assets, from that module's own `import.meta.url`. */
export function besideModule(moduleUrl: string, folder: 'views' | 'assets'): string {
  return path.join(path.dirname(fileURLToPath(moduleUrl)), folder);
}

/** A module's template folder as eta names it (`/modules/checkout/views`). */
export function templateFolder(moduleUrl: string): string {
  return `/${path.relative(SOURCE_ROOT, besideModule(moduleUrl, 'views')).split(path.sep).join('/')}`;
}

// ---------------------------------------------------------------------------------------------
// Assets

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};
const ASSET_NAME = /^[a-z0-9-]+\.(?:js|css)$/;
const A_YEAR = 365 * 24 * 3600;

interface Asset {
  body: Buffer;
  type: string;
  version: string;
}

/** A module's assets: where each is served (with its version, so a changed file has a new URL) and the route serving them. */
export interface AssetFolder {
  url(name: string): string;
  routes: FastifyPluginAsync;
}

/**
 * The `.js` and `.css` files of some folders (a module's own `assets/` and the shared ones) and
 * the base stylesheet, read once, served at `{prefix}/{name}`. A URL with the file's current version (`?v=`, what
 * `url()` writes) may be kept for a year; any other asks again each time (ETag).
 */
export function assetFolder(prefix: string, folders: readonly string[]): AssetFolder {
  const assets = new Map<string, Asset>();
  for (const folder of [BASE_ASSETS_DIR, ...folders]) {
    for (const name of readdirSync(folder)) {
      if (!ASSET_NAME.test(name)) continue;
      if (assets.has(name)) throw new Error(`two assets named ${name} under ${prefix}`);
      const body = readFileSync(path.join(folder, name));
      const version = createHash('sha256').update(body).digest('hex').slice(0, 16);
      assets.set(name, { body, type: CONTENT_TYPES[path.extname(name)]!, version });
    }
  }
  const routes: FastifyPluginAsync = async (app) => {
    app.get<{ Params: { name: string }; Querystring: { v?: unknown } }>(
      `${prefix}/:name`,
      { schema: { hide: true } },
      async (request, reply) => {
        const asset = ASSET_NAME.test(request.params.name) ? assets.get(request.params.name) : undefined;
        if (!asset) throw new ApiError('ENDPOINT_NOT_FOUND', `No file ${prefix}/${request.params.name}.`);
        const etag = `"${asset.version}"`;
        reply
          .header('Content-Type', asset.type)
          .header('ETag', etag)
          .header('X-Content-Type-Options', 'nosniff')
          .header(
            'Cache-Control',
            request.query.v === asset.version ? `public, max-age=${A_YEAR}, immutable` : 'public, no-cache',
          );
        if (request.headers['if-none-match'] === etag) return reply.code(304).send();
        return reply.send(asset.body);
      },
    );
  };
  return {
    url(name) {
      const asset = assets.get(name);
      if (!asset) throw new Error(`no asset ${name} under ${prefix}`);
      return `${prefix}/${name}?v=${asset.version}`;
    },
    routes,
  };
}

// ---------------------------------------------------------------------------------------------
// Pages

/** A fresh nonce for one response's Content-Security-Policy and the elements it lets load. */
export function newNonce(): string {
  return randomBytes(16).toString('base64');
}

/** What a page's policy lets in besides its own nonce-carrying style, which every page has. */
interface PagePolicy {
  /** Scripts carrying the nonce run (none otherwise). */
  scripts?: boolean;
  /** `fetch()` may reach this origin (none otherwise). */
  connect?: boolean;
  /**
   * Where images come from: none; this origin; this origin and any https host (a merchant's
   * image URLs); or this origin, data: and blob: URLs (an upload's preview drawn before it is sent).
   */
  images?: 'none' | 'self' | 'self-and-https' | 'self-data-blob';
  /** Where forms may post: this origin, or nowhere for a page with no form. */
  forms: 'self' | 'none';
  /** An installable page's web manifest comes from this origin (none otherwise). */
  manifest?: boolean;
}

const IMAGE_SOURCES = {
  self: "'self'",
  'self-and-https': "'self' https:",
  'self-data-blob': "'self' data: blob:",
} as const;

/**
 * Every HTML page's Content-Security-Policy: nothing loads by default, only the style (and, if
 * allowed, the scripts) carrying this response's nonce; no inline script or style runs, the base
 * URL cannot be moved and no site may frame the page.
 */
export function pageCsp(nonce: string, policy: PagePolicy): string {
  const images = policy.images ?? 'none';
  return [
    "default-src 'none'",
    `style-src 'nonce-${nonce}'`,
    ...(policy.scripts ? [`script-src 'nonce-${nonce}'`] : []),
    ...(policy.connect ? ["connect-src 'self'"] : []),
    ...(images === 'none' ? [] : [`img-src ${IMAGE_SOURCES[images]}`]),
    ...(policy.manifest ? ["manifest-src 'self'"] : []),
    `form-action '${policy.forms}'`,
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

export interface CustomerPage {
  status: number;
  /** The template's eta name, from the sources' root (`/modules/checkout/views/checkout`). */
  template: string;
  choice: LangChoice;
  /** The page's own path and query: the language links point at it in each language. */
  path: string;
  title: string;
  /** The module's assets: the shared stylesheet and script, and the page's own `scripts`. */
  assets: AssetFolder;
  scripts?: string[];
  /** What the template draws. */
  data: Record<string, unknown>;
  /** What the page's script reads (`data-page` on <body>, as JSON): its texts, never code. */
  pageData?: Record<string, unknown>;
  images?: 'self' | 'self-and-https';
  /** A page wide enough for a catalog beside a cart (a phone's width otherwise). */
  wide?: boolean;
  /** The page's own label for the language links (a <nav> is named in the page's language). */
  languagesLabel: string;
  /** An installable page (the wallet app): its web manifest, icon and theme colour. */
  install?: { manifest: string; icon: string; themeColor: string };
}

/** What every customer template may call: amounts, numbers and dates in the page's language, and texts as parts. */
function helpers(choice: LangChoice) {
  const { lang } = choice;
  return {
    // The one money formatter of every page: a signed amount's sign stays before its digits in Arabic.
    amount: (centimes: number, sign?: 'always') => formatPageAmount(centimes, lang, sign),
    amountInput: (centimes: number) => formatAmountInput(centimes, lang),
    number: (value: number) => formatNumber(value, lang),
    dateTime: (value: Date | string) => formatDateTime(typeof value === 'string' ? new Date(value) : value, lang),
    fill: (template: string, values: Readonly<Record<string, TextPart | readonly TextPart[]>> = {}) =>
      fillParts(template, values),
    money: (centimes: number) => moneyPart(centimes, lang),
    ltr: ltrPart,
    isolated: isolatedPart,
    phoneExample: NATIONAL_PHONE_EXAMPLE,
    /** The partial drawing `fill`'s parts, each value isolated (`<%~ include(it.textPartial, { parts }) %>`). */
    textPartial: `${SHARED_VIEWS}/text`,
  };
}

/** Renders a customer page through its template and the shared layout, with the headers every customer page carries. */
export function sendCustomerPage(reply: FastifyReply, page: CustomerPage): FastifyReply {
  const nonce = newNonce();
  const { lang } = page.choice;
  const html = views.render(page.template, {
    ...helpers(page.choice),
    ...page.data,
    layout: `${SHARED_VIEWS}/customer-layout`,
    lang,
    dir: textDirection(lang),
    nonce,
    title: page.title,
    wide: page.wide ?? false,
    languages: languageLinks(page.path, lang).map((link) => ({ ...link, dir: textDirection(link.lang) })),
    languagesLabel: page.languagesLabel,
    install: page.install ?? null,
    stylesheets: [page.assets.url(BASE_STYLESHEET), page.assets.url('customer.css')],
    // A page with nothing for a script to read runs none (pay-by-code, most receipts, every message).
    scripts: page.pageData
      ? [page.assets.url('customer.js'), ...(page.scripts ?? []).map((name) => page.assets.url(name))]
      : [],
    pageData: page.pageData ? JSON.stringify({ ...page.pageData, format: clientFormatting(lang) }) : null,
  });
  return reply
    .code(page.status)
    .type('text/html; charset=utf-8')
    .header('Cache-Control', 'no-store')
    .header('Vary', 'Accept-Language')
    .header(
      'Content-Security-Policy',
      pageCsp(nonce, {
        scripts: true,
        connect: true,
        images: page.images ?? 'self',
        forms: 'self',
        manifest: page.install !== undefined,
      }),
    )
    .header('X-Content-Type-Options', 'nosniff')
    .header('Referrer-Policy', 'no-referrer')
    .header('X-Frame-Options', 'DENY')
    .send(html);
}
