import type { FastifyRequest } from 'fastify';
import { addressSubject } from '../../http/client-address.js';
import { normalizeEmail } from './users.js';

/**
 * One budget of password guesses (decision 072): sign-in and the password-change form count
 * against the same minutes, per client address and per account. A session, stolen or left open,
 * then guesses its user's password no faster than sign-in lets anyone, and the two forms together
 * no faster than one. Every attempt counts, counted before it is checked (as wallet PINs are,
 * decision 009); a limiter outage lets it through rather than locking everyone out.
 */
export async function passwordAttemptAllowed(request: FastifyRequest, email: string): Promise<boolean> {
  const { rateLimiter, config } = request.server.services;
  const { ip: perIp, email: perEmail } = config.dashboard.loginPerMinute;
  const hit = async (subject: string, perMinute: number) => {
    try {
      return (await rateLimiter.hit(subject, perMinute)).allowed;
    } catch (error) {
      request.log.warn({ err: error }, 'rate limiter unavailable; password attempt let through');
      return true;
    }
  };
  const byIp = await hit(`dashboard-login-ip:${addressSubject(request.ip)}`, perIp);
  const byEmail = await hit(`dashboard-login-email:${normalizeEmail(email)}`, perEmail);
  return byIp && byEmail;
}

/** What a refused attempt tells the browser: when to try again (the limits count whole minutes). */
export const RETRY_AFTER_SECONDS = '60';
