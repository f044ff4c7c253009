import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { ApiError } from '../../http/errors.js';
import { newNonce, pageCsp, sendCustomerPage } from '../../http/views.js';
import { negotiateLang } from '../../lib/i18n.js';
import { customerLimits } from '../checkout/limits.js';
import { payBaseUrl } from '../intents/routes.js';
import { linkAssets, linkPage, posterHtml, type LinkPageContent, type PageContext } from './pages.js';
import { linkBySlug } from './pay.js';
import { QR_CONTENT_TYPES, qrImage, type QrFormat } from './qr.js';
import { linkUrl, payerLinkView, SLUG_MAX } from './views.js';

// Any slug and any query: a page answers a bad one with its 404 page, not a JSON error.
const PageParams = Type.Object({ slug: Type.String() });
const PageQuery = Type.Object({ lang: Type.Optional(Type.String()) });
/** A day: a link's QR code changes only if the pay host does. */
const QR_MAX_AGE = 24 * 3600;

/**
 * A payment link's public side: its page, its QR code (SVG and PNG) and its printable poster, each
 * found by the link's slug. No API key, and nothing written: a view reads one row, under the
 * checkout's per-address limit (a link posted publicly is looked up by anyone).
 */
export const linkPageRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db, rateLimiter } = app.services;
  const { byIp, pageAllowed } = customerLimits(rateLimiter);
  const found = async (slug: string) => (slug.length <= SLUG_MAX ? await linkBySlug(db, slug) : undefined);
  const contextOf = (request: FastifyRequest, lang: string | undefined): PageContext => ({
    choice: negotiateLang(lang, request.headers['accept-language']),
    path: request.url,
  });

  await app.register(linkAssets.routes);

  const pageSchema = { hide: true, params: PageParams, querystring: PageQuery };

  app.get('/l/:slug', { schema: pageSchema }, async (request, reply) => {
    const context = contextOf(request, request.query.lang);
    const render = (status: number, content: LinkPageContent) =>
      sendCustomerPage(reply, linkPage(context, status, content));
    if (!(await pageAllowed(request, reply))) return render(429, 'RATE_LIMITED');
    const link = await found(request.params.slug);
    return link ? render(200, { slug: link.link.slug, view: payerLinkView(link) }) : render(404, 'NOT_FOUND');
  });

  app.get('/l/:slug/poster', { schema: pageSchema }, async (request, reply) => {
    const context = contextOf(request, request.query.lang);
    if (!(await pageAllowed(request, reply))) return sendCustomerPage(reply, linkPage(context, 429, 'RATE_LIMITED'));
    const link = await found(request.params.slug);
    if (!link) return sendCustomerPage(reply, linkPage(context, 404, 'NOT_FOUND'));
    const { slug } = link.link;
    const nonce = newNonce();
    const html = posterHtml(
      context,
      { slug, url: linkUrl(slug, payBaseUrl(request)), view: payerLinkView(link) },
      nonce,
    );
    return reply
      .type('text/html; charset=utf-8')
      .header('Cache-Control', 'no-store')
      .header('Vary', 'Accept-Language')
      .header('Content-Security-Policy', pageCsp(nonce, { images: 'self', forms: 'none' }))
      .header('X-Content-Type-Options', 'nosniff')
      .header('Referrer-Policy', 'no-referrer')
      .header('X-Frame-Options', 'DENY')
      .send(html);
  });

  for (const format of ['svg', 'png'] as const satisfies readonly QrFormat[]) {
    app.get(`/l/:slug/qr.${format}`, { schema: { hide: true, params: PageParams } }, async (request, reply) => {
      await byIp(request, reply);
      const link = await found(request.params.slug);
      if (!link) throw new ApiError('PAYMENT_LINK_NOT_FOUND', 'No payment link here.');
      const { slug } = link.link;
      const { body, etag } = qrImage(linkUrl(slug, payBaseUrl(request)), format);
      reply
        .type(QR_CONTENT_TYPES[format])
        .header('Cache-Control', `public, max-age=${QR_MAX_AGE}`)
        .header('ETag', etag)
        .header('Content-Disposition', `inline; filename="payment-link-${slug}.${format}"`)
        .header('X-Content-Type-Options', 'nosniff')
        // An SVG opened on its own is a document: it may run or load nothing.
        .header('Content-Security-Policy', "default-src 'none'");
      if (request.headers['if-none-match'] === etag) return reply.code(304).send();
      return reply.send(body);
    });
  }
};
