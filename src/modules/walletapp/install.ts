import { createHash } from 'node:crypto';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { PNG } from 'pngjs';
import { negotiateLang } from '../../lib/i18n.js';
import { walletDictionaries } from './i18n.js';

/** The checkout's green: the wallet app's theme, its icon's background. */
export const THEME_COLOR = '#0a5c42';
const BACKGROUND = '#ffffff';
const ICON_SIZES = [192, 512] as const;
export const MANIFEST_PATH = '/wallet/manifest.webmanifest';
const A_DAY = 24 * 3600;

function rgb(hex: string): [number, number, number] {
  return [1, 3, 5].map((at) => parseInt(hex.slice(at, at + 2), 16)) as [number, number, number];
}

/** The icon: a white wallet (a card with its clasp) on the theme's green, square so any mask crops only green. */
function walletIcon(size: number): Buffer {
  const png = new PNG({ width: size, height: size });
  const green = rgb(THEME_COLOR);
  const white = rgb(BACKGROUND);
  const inside = (x: number, y: number, box: [number, number, number, number]) =>
    x >= box[0] * size && x < box[2] * size && y >= box[1] * size && y < box[3] * size;
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const card = inside(x, y, [0.22, 0.3, 0.78, 0.7]);
      const clasp = inside(x, y, [0.58, 0.44, 0.72, 0.56]);
      const [r, g, b] = card && !clasp ? white : green;
      const at = (y * size + x) * 4;
      png.data[at] = r;
      png.data[at + 1] = g;
      png.data[at + 2] = b;
      png.data[at + 3] = 255;
    }
  }
  return PNG.sync.write(png);
}

const SVG_ICON = Buffer.from(
  `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 100"><rect width="100" height="100" fill="${THEME_COLOR}"/>` +
    `<rect x="22" y="30" width="56" height="40" rx="4" fill="${BACKGROUND}"/><rect x="58" y="44" width="14" height="12" fill="${THEME_COLOR}"/></svg>`,
);

function sendImage(reply: FastifyReply, type: string, body: Buffer, etag: string, ifNoneMatch: string | undefined) {
  reply
    .type(type)
    .header('Cache-Control', `public, max-age=${A_DAY}`)
    .header('ETag', etag)
    .header('X-Content-Type-Options', 'nosniff')
    // An SVG opened on its own is a document: it may run or load nothing.
    .header('Content-Security-Policy', "default-src 'none'");
  return ifNoneMatch === etag ? reply.code(304).send() : reply.send(body);
}

/**
 * What makes the wallet app installable on a phone's home screen: its web manifest (named in the
 * reader's language, opening /wallet standalone, in the checkout's colours) and its icons.
 */
export const walletInstallRoutes: FastifyPluginAsync = async (app) => {
  const icons = new Map<string, { body: Buffer; etag: string }>();
  for (const size of ICON_SIZES) {
    const body = walletIcon(size);
    icons.set(`icon-${size}.png`, { body, etag: `"${createHash('sha256').update(body).digest('hex').slice(0, 16)}"` });
  }
  const svgEtag = `"${createHash('sha256').update(SVG_ICON).digest('hex').slice(0, 16)}"`;

  app.get<{ Querystring: { lang?: string } }>(MANIFEST_PATH, { schema: { hide: true } }, async (request, reply) => {
    const choice = negotiateLang(request.query.lang, request.headers['accept-language']);
    const t = walletDictionaries[choice.lang];
    return reply
      .type('application/manifest+json; charset=utf-8')
      .header('Cache-Control', 'no-cache')
      .header('Vary', 'Accept-Language')
      .send(
        JSON.stringify({
          name: t.appName,
          short_name: t.appName,
          lang: choice.lang,
          dir: choice.lang === 'ar' ? 'rtl' : 'ltr',
          start_url: choice.fromQuery ? `/wallet?lang=${choice.lang}` : '/wallet',
          scope: '/wallet',
          display: 'standalone',
          theme_color: THEME_COLOR,
          background_color: BACKGROUND,
          icons: [
            ...ICON_SIZES.map((size) => ({
              src: `/wallet/icon-${size}.png`,
              sizes: `${size}x${size}`,
              type: 'image/png',
            })),
            { src: '/wallet/icon.svg', sizes: 'any', type: 'image/svg+xml' },
          ],
        }),
      );
  });

  for (const [name, icon] of icons) {
    app.get(`/wallet/${name}`, { schema: { hide: true } }, async (request, reply) =>
      sendImage(reply, 'image/png', icon.body, icon.etag, request.headers['if-none-match']),
    );
  }
  app.get('/wallet/icon.svg', { schema: { hide: true } }, async (request, reply) =>
    sendImage(reply, 'image/svg+xml', SVG_ICON, svgEtag, request.headers['if-none-match']),
  );
};
