import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { addressSubject } from '../../http/client-address.js';
import { hitCustomerLimit, pageWithinLimit, type RateLimiter } from '../../http/rate-limit.js';

/**
 * Per minute: what one address may ask of the customer pages and their APIs (the checkout's and
 * the payment links'), and how often one wallet may try to pay. One budget per client address
 * (/64 for IPv6) and per wallet, whichever page is used.
 */
export const PER_IP_PER_MINUTE = 120;
export const PER_WALLET_PER_MINUTE = 20;

/** The customer limits, counted in the X-RateLimit headers; over one: 429 RATE_LIMITED. */
export function customerLimits(limiter: RateLimiter) {
  const byIp = (request: FastifyRequest, reply: FastifyReply) =>
    hitCustomerLimit(limiter, reply, `checkout-ip:${addressSubject(request.ip)}`, PER_IP_PER_MINUTE);
  return {
    byIp,
    byWallet: (reply: FastifyReply, phone: string) =>
      hitCustomerLimit(limiter, reply, `checkout-wallet:${phone}`, PER_WALLET_PER_MINUTE),
    /** A page's view of the per-address limit: false when the page must say "too many attempts". */
    pageAllowed: (request: FastifyRequest, reply: FastifyReply) => pageWithinLimit(reply, () => byIp(request, reply)),
  };
}

/** Customer answers (a receipt, a payment state) are never stored by a browser or a proxy, unless a route says otherwise. */
export function keepCustomerAnswersPrivate(app: FastifyInstance): void {
  app.addHook('onSend', async (_request, reply, payload) => {
    if (!reply.hasHeader('Cache-Control')) reply.header('Cache-Control', 'no-store');
    return payload;
  });
}
