import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { ApiError } from '../../http/errors.js';
import { E164_PATTERN } from '../../lib/phone.js';
import { pickLang } from './i18n.js';
import { checkoutPage, pageCsp, payByCodePage } from './pages.js';
import { payIntent, viewByCode, viewByShortCode } from './service.js';

/** Per minute: what one address may ask of the checkout API, and how often one wallet may try to pay. */
const PER_IP_PER_MINUTE = 120;
const PER_WALLET_PER_MINUTE = 20;

const ShortCode = Type.Object({ shortCode: Type.String({ minLength: 1, maxLength: 16 }) });
const LangQuery = Type.Object({ lang: Type.Optional(Type.String({ maxLength: 8 })) });

/**
 * The customer side: the hosted checkout page, the pay-by-code page, and the small JSON API both
 * call. No API key: customers identify with their wallet phone and PIN.
 */
export const checkoutRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db, rateLimiter, config } = app.services;

  /**
   * Counts one hit and says so in the X-RateLimit headers, whatever the answer (a 404 or a wrong
   * PIN included). With two limits on one request, the headers show the one closer to its end.
   */
  async function limit(reply: FastifyReply, key: string, perMinute: number): Promise<void> {
    const decision = await rateLimiter.hit(key, perMinute).catch(() => undefined);
    const shown = reply.getHeader('X-RateLimit-Remaining');
    if (decision && (shown === undefined || decision.remaining < Number(shown))) {
      reply.header('X-RateLimit-Limit', String(decision.limit));
      reply.header('X-RateLimit-Remaining', String(decision.remaining));
      reply.header('X-RateLimit-Reset', String(decision.resetSeconds));
    }
    if (decision && !decision.allowed) {
      throw new ApiError('RATE_LIMITED', 'Too many attempts. Wait a moment and try again.', undefined, {
        'Retry-After': String(decision.resetSeconds),
      });
    }
  }
  const byIp = (request: FastifyRequest, reply: FastifyReply) =>
    limit(reply, `checkout-ip:${request.ip}`, PER_IP_PER_MINUTE);

  // Customer answers (a receipt, a payment state) are never stored by a browser or a proxy.
  app.addHook('onSend', async (_request, reply, payload) => {
    if (!reply.hasHeader('Cache-Control')) reply.header('Cache-Control', 'no-store');
    return payload;
  });

  /** An HTML page with a fresh script nonce and the headers every customer page carries. */
  function sendPage(reply: FastifyReply, status: number, render: (nonce: string) => string): FastifyReply {
    const nonce = randomBytes(16).toString('base64');
    return reply
      .code(status)
      .type('text/html; charset=utf-8')
      .header('Cache-Control', 'no-store')
      .header('Content-Security-Policy', pageCsp(nonce))
      .header('X-Content-Type-Options', 'nosniff')
      .header('Referrer-Policy', 'no-referrer')
      .header('X-Frame-Options', 'DENY')
      .send(render(nonce));
  }

  app.get('/checkout/intents/:shortCode', { schema: { hide: true, params: ShortCode } }, async (request, reply) => {
    await byIp(request, reply);
    return { success: true, data: await viewByShortCode(db, request.params.shortCode) };
  });

  app.get(
    '/checkout/codes/:code',
    {
      schema: {
        hide: true,
        params: Type.Object({ code: Type.String({ pattern: '^[0-9]{6}$' }) }),
        querystring: Type.Object({ mode: Type.Optional(Type.Union([Type.Literal('test'), Type.Literal('live')])) }),
      },
    },
    async (request, reply) => {
      await byIp(request, reply);
      return {
        success: true,
        data: await viewByCode(db, request.params.code, request.query.mode === 'test' ? 'test' : 'live'),
      };
    },
  );

  app.post(
    '/checkout/intents/:shortCode/pay',
    {
      schema: {
        hide: true,
        params: ShortCode,
        body: Type.Object(
          {
            phone: Type.String({ pattern: E164_PATTERN, description: 'E.164' }),
            pin: Type.String({ pattern: '^[0-9]{4,6}$' }),
            amount: Type.Optional(Type.Integer({ description: 'centimes; OPEN intents only' })),
          },
          { additionalProperties: false },
        ),
      },
    },
    async (request, reply) => {
      await byIp(request, reply);
      await limit(reply, `checkout-wallet:${request.body.phone}`, PER_WALLET_PER_MINUTE);
      return {
        success: true,
        data: await payIntent(db, request.params.shortCode, request.body, config.intentMaxAmount),
      };
    },
  );

  app.get(
    '/p/:shortCode',
    { schema: { hide: true, params: ShortCode, querystring: LangQuery } },
    async (request, reply) => {
      // The same per-address limit as the checkout API: a page view is a short-code lookup too.
      await byIp(request, reply);
      const lang = pickLang(request.query.lang, request.headers['accept-language']);
      const view = await viewByShortCode(db, request.params.shortCode).catch((error: unknown) => {
        if (error instanceof ApiError && error.code === 'INTENT_NOT_FOUND') return null;
        throw error;
      });
      return sendPage(reply, view ? 200 : 404, (nonce) => checkoutPage(lang, view, nonce));
    },
  );

  app.get(
    '/pay',
    {
      schema: {
        hide: true,
        querystring: Type.Object({
          lang: Type.Optional(Type.String({ maxLength: 8 })),
          mode: Type.Optional(Type.Union([Type.Literal('test'), Type.Literal('live')])),
        }),
      },
    },
    async (request, reply) =>
      sendPage(reply, 200, (nonce) =>
        payByCodePage(
          pickLang(request.query.lang, request.headers['accept-language']),
          request.query.mode === 'test',
          nonce,
        ),
      ),
  );
};
