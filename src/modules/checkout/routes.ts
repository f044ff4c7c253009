import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ApiError } from '../../http/errors.js';
import { CUSTOMER_WRITE, hasIdempotencyKey, write } from '../../http/idempotency/plugin.js';
import { readWalletPhoneOfBody } from '../../http/validation.js';
import { E164_PATTERN } from '../../lib/phone.js';
import { keepLang, negotiateLang } from '../../lib/i18n.js';
import { sendCustomerPage } from '../../http/views.js';
import { customerLimits, keepCustomerAnswersPrivate } from './limits.js';
import { checkoutAssets, checkoutPage, payByCodePage, type CheckoutPageContent, type CodeProblem } from './pages.js';
import { authenticatePayer, payableIntent, payIntent, viewByCode, viewByShortCode } from './service.js';

const SHORT_CODE_MAX = 16;
const ShortCode = Type.Object({ shortCode: Type.String({ minLength: 1, maxLength: SHORT_CODE_MAX }) });
// Pages take any query: an unknown `lang` or `mode` is ignored rather than answered with a JSON error.
const PageQuery = Type.Object({
  lang: Type.Optional(Type.String()),
  mode: Type.Optional(Type.String()),
  code: Type.Optional(Type.String()),
});

/**
 * The customer side: the hosted checkout page, the pay-by-code page, and the small JSON API both
 * call. No API key: customers identify with their wallet phone and PIN.
 */
export const checkoutRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db, rateLimiter, config } = app.services;

  const limits = customerLimits(rateLimiter);
  const { byIp, pageAllowed } = limits;
  keepCustomerAnswersPrivate(app);

  await app.register(checkoutAssets.routes);

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
      config: { write: CUSTOMER_WRITE },
      preValidation: readWalletPhoneOfBody,
      schema: {
        hide: true,
        params: ShortCode,
        body: Type.Object(
          {
            phone: Type.String({ pattern: E164_PATTERN, description: 'E.164, or 8 Mauritanian digits read as +222' }),
            pin: Type.String({ pattern: '^[0-9]{4,6}$' }),
            amount: Type.Optional(Type.Integer({ description: 'centimes; OPEN intents only' })),
          },
          { additionalProperties: false },
        ),
      },
    },
    async (request, reply) => {
      await byIp(request, reply);
      await limits.byWallet(reply, request.body.phone);
      const payable = await payableIntent(db, request.params.shortCode, request.body, {
        maxAmount: config.intentMaxAmount,
        keyed: hasIdempotencyKey(request),
      });
      // The PIN first, outside any transaction: its hash is slow, and a wrong one locks nothing.
      const { environment, business_id: businessId } = payable.intent;
      const wallet = await authenticatePayer(db, payable, request.body);
      // A retried request with the page's key answers the first attempt again.
      return write(request, reply, 200, (trx) => payIntent(trx, payable, wallet.phone), {
        scope: { businessId, environment, who: wallet.phone },
      });
    },
  );

  const notFoundAsNull = (error: unknown): null => {
    if (error instanceof ApiError && error.code === 'INTENT_NOT_FOUND') return null;
    throw error;
  };

  app.get(
    '/p/:shortCode',
    { schema: { hide: true, params: Type.Object({ shortCode: Type.String() }), querystring: PageQuery } },
    async (request, reply) => {
      const choice = negotiateLang(request.query.lang, request.headers['accept-language']);
      const render = (status: number, content: CheckoutPageContent) =>
        sendCustomerPage(reply, checkoutPage({ choice, path: request.url }, status, content));
      // The same per-address limit as the checkout API: a page view is a short-code lookup too.
      if (!(await pageAllowed(request, reply))) return render(429, 'RATE_LIMITED');
      const { shortCode } = request.params;
      const view =
        shortCode.length > 0 && shortCode.length <= SHORT_CODE_MAX
          ? await viewByShortCode(db, shortCode).catch(notFoundAsNull)
          : null;
      return view ? render(200, view) : render(404, 'NOT_FOUND');
    },
  );

  app.get('/pay', { schema: { hide: true, querystring: PageQuery } }, async (request, reply) => {
    const choice = negotiateLang(request.query.lang, request.headers['accept-language']);
    const sandbox = request.query.mode === 'test';
    const { code } = request.query;
    const render = (status: number, problem?: CodeProblem) =>
      sendCustomerPage(reply, payByCodePage({ choice, path: request.url }, status, { sandbox, code, problem }));
    if (code === undefined) return render(200);
    if (!/^[0-9]{6}$/.test(code.trim())) return render(400, 'INVALID');
    if (!(await pageAllowed(request, reply))) return render(429, 'RATE_LIMITED');
    const view = await viewByCode(db, code.trim(), sandbox ? 'test' : 'live').catch(notFoundAsNull);
    if (!view) return render(404, 'NOT_FOUND');
    // The checkout page of the intent says everything else (its state included), in the language kept.
    return reply.redirect(keepLang(`/p/${encodeURIComponent(view.shortCode)}`, choice), 303);
  });
};
