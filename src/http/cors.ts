import type { FastifyCorsOptions, FastifyCorsOptionsDelegateCallback } from '@fastify/cors';
import type { FastifyRequest } from 'fastify';

const EXPOSED = ['X-Request-Id', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'Retry-After'];

/**
 * Browsers may call the Developer API's read endpoints with a publishable key: those routes (and
 * their error answers) allow any origin, and a preflight anywhere under the API base is answered.
 * Secret-key routes, the operator API and the pages send no CORS headers. Runs as an onRequest
 * hook before authentication, so a refused browser call can still read its error.
 */
export function publishableKeyCors(apiBase: string): { delegator: FastifyCorsOptionsDelegateCallback } {
  const preflight: FastifyCorsOptions = {
    origin: '*',
    methods: ['GET', 'OPTIONS'],
    allowedHeaders: ['Authorization', 'Content-Type', 'X-Request-Id'],
    maxAge: 600,
    strictPreflight: false,
  };
  const publishable: FastifyCorsOptions = { origin: '*', exposedHeaders: EXPOSED, preflight: false };
  const none: FastifyCorsOptions = { origin: false };
  return {
    delegator: (request: FastifyRequest, callback) => {
      if (request.method === 'OPTIONS') {
        return callback(null, request.url.startsWith(`${apiBase}/`) ? preflight : none);
      }
      return callback(null, request.routeOptions.config.auth === 'publishable' ? publishable : none);
    },
  };
}
