import type { FastifyReply, FastifyRequest } from 'fastify';
import { addressSubject } from '../../http/client-address.js';
import { hitCustomerLimit, type RateLimiter } from '../../http/rate-limit.js';

/** Per minute: what one address may ask of the storefront API, and how often one wallet may try a PIN. */
export const STOREFRONT_PER_IP_PER_MINUTE = 120;
export const STOREFRONT_PER_WALLET_PER_MINUTE = 20;

/** The storefront's limits: per address (its API and its pages count together) and per wallet. */
export function storefrontLimits(rateLimiter: RateLimiter) {
  const limit = (reply: FastifyReply, key: string, perMinute: number) =>
    hitCustomerLimit(rateLimiter, reply, key, perMinute);
  return {
    byIp: (request: FastifyRequest, reply: FastifyReply) =>
      limit(reply, `storefront-ip:${addressSubject(request.ip)}`, STOREFRONT_PER_IP_PER_MINUTE),
    // One count per wallet across the checkout and the storefront: two channels never double the PIN guesses.
    byWallet: (reply: FastifyReply, phone: string) =>
      limit(reply, `checkout-wallet:${phone}`, STOREFRONT_PER_WALLET_PER_MINUTE),
  };
}
