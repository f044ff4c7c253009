import type { FastifyInstance } from 'fastify';

const EXPOSED = 'X-Request-Id, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After';

/** What a browser's preflight anywhere under the API base is answered. */
const PREFLIGHT = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Allow-Methods': 'GET, OPTIONS',
  'Access-Control-Allow-Headers': 'Authorization, Content-Type, X-Request-Id',
  'Access-Control-Max-Age': '600',
  'Content-Length': '0',
};

/**
 * Browsers may call the Developer API's read endpoints with a publishable key: those routes (and
 * their error answers) allow any origin, and a preflight anywhere under the API base is answered.
 * Secret-key routes, the operator API and the pages send no CORS headers. Runs as an onRequest
 * hook before authentication, so a refused browser call can still read its error. The policy is
 * one origin (`*`) and fixed header lists, so it is written here: in place of @fastify/cors
 * choosing its options per request (a delegator), this hook took 9.5 % off a GET's CPU, the
 * plugin with static options per route 6 % (see docs/decisions/017-http-headers.md).
 */
export function registerCors(app: FastifyInstance, apiBase: string): void {
  const underApi = `${apiBase}/`;
  app.addHook('onRequest', (request, reply, done) => {
    if (request.method === 'OPTIONS') {
      if (!request.url.startsWith(underApi)) return done();
      // A preflight is answered here, before authentication: the browser sends it without the key.
      void reply.code(204).headers(PREFLIGHT).send();
      return;
    }
    if (request.routeOptions.config.auth === 'publishable') {
      reply.header('Access-Control-Allow-Origin', '*').header('Access-Control-Expose-Headers', EXPOSED);
    }
    done();
  });
  // OPTIONS anywhere reaches the hook above; outside the API base it is not found.
  app.options('*', { schema: { hide: true } }, (_request, reply) => reply.callNotFound());
}
