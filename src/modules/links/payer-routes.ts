import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Kysely } from 'kysely';
import { Type } from 'typebox';
import type { DB } from '../../db/schema.js';
import { ApiError } from '../../http/errors.js';
import { CUSTOMER_WRITE, hasIdempotencyKey, write } from '../../http/idempotency/plugin.js';
import { readWalletPhoneOfBody } from '../../http/validation.js';
import { E164_PATTERN } from '../../lib/phone.js';
import { customerLimits, keepCustomerAnswersPrivate } from '../checkout/limits.js';
import { authenticateWallet } from '../wallets/service.js';
import {
  linkBySlug,
  linkPayment,
  PAYER_NAME_MAX,
  PAYER_NOTE_MAX,
  payerRefusal,
  payThroughLink,
  type PayerLink,
} from './pay.js';
import { payerLinkView, SLUG_MAX } from './views.js';

const SlugParams = Type.Object({ slug: Type.String({ minLength: 1, maxLength: SLUG_MAX }) });

/** A link found by its slug, or PAYMENT_LINK_NOT_FOUND. */
export async function payerLinkOf(db: Kysely<DB>, slug: string): Promise<PayerLink> {
  const found = await linkBySlug(db, slug);
  if (!found) throw new ApiError('PAYMENT_LINK_NOT_FOUND', 'No payment link here.');
  return found;
}

/**
 * The payer's side of a link, as the checkout's: a small JSON API the page calls, with no API key
 * (the payer identifies with the wallet's phone and PIN), under the checkout's per-address and
 * per-wallet limits. Reading a link writes nothing; only a payment whose PIN checked out does.
 */
export const linkPayerRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db, rateLimiter, config } = app.services;
  const limits = customerLimits(rateLimiter);
  const { byIp } = limits;
  keepCustomerAnswersPrivate(app);

  app.get('/checkout/links/:slug', { schema: { hide: true, params: SlugParams } }, async (request, reply) => {
    await byIp(request, reply);
    return { success: true, data: payerLinkView(await payerLinkOf(db, request.params.slug)) };
  });

  app.post(
    '/checkout/links/:slug/pay',
    {
      config: { write: CUSTOMER_WRITE },
      preValidation: readWalletPhoneOfBody,
      schema: {
        hide: true,
        params: SlugParams,
        body: Type.Object(
          {
            phone: Type.String({ pattern: E164_PATTERN, description: 'E.164, or 8 Mauritanian digits read as +222' }),
            pin: Type.String({ pattern: '^[0-9]{4,6}$' }),
            amount: Type.Optional(Type.Integer({ description: 'centimes; OPEN links only' })),
            name: Type.Optional(Type.String({ maxLength: PAYER_NAME_MAX })),
            note: Type.Optional(Type.String({ maxLength: PAYER_NOTE_MAX })),
          },
          { additionalProperties: false },
        ),
      },
    },
    async (request, reply) => {
      await byIp(request, reply);
      await limits.byWallet(reply, request.body.phone);
      const found = await payerLinkOf(db, request.params.slug);
      // Before the PIN: a link that takes no payment, or a bad amount, costs no PIN attempt. Not
      // with the page's key, as the checkout: its retry of a payment that completed (or preceded the
      // switching off of) the link is answered with that payment's receipt, once the PIN checks out.
      const refusal = payerRefusal(found, new Date());
      if (refusal && !hasIdempotencyKey(request)) throw refusal;
      const payment = linkPayment(found.link, request.body, config.intentMaxAmount);
      const { environment, business_id: businessId } = found.link;
      // The PIN outside any transaction (its hash is slow); a wrong one writes nothing of the link's.
      const wallet = await authenticateWallet(db, environment, request.body.phone, request.body.pin);
      return write(
        request,
        reply,
        200,
        async (trx) => {
          if (refusal) throw refusal;
          return payThroughLink(trx, found, { ...payment, phone: wallet.phone });
        },
        { scope: { businessId, environment, who: wallet.phone } },
      );
    },
  );
};
