import type { FastifyPluginAsync } from 'fastify';
import { cookiesOf, type CookieNames } from '../dashboard/cookies.js';
import { findWalletSession } from './sessions.js';
import { newestRequestId } from './store.js';
import { WALLET } from './pages.js';

/** How often an open stream looks for a new request: the page shows one within a second. */
export const EVENTS_POLL_MS = 500;
/** A comment line this often keeps proxies from closing a quiet stream. */
const HEARTBEAT_MS = 15_000;
/** How often a stream checks that its session is still live (signed out, idle, too old: it ends). */
const SESSION_CHECK_MS = 60_000;

/**
 * `GET /wallet/events`: server-sent events for the signed-in wallet. `request` when a new payment
 * request to it is created (the page then fetches its list again); nothing else. Polls the
 * database per open stream, which works the same on PostgreSQL and PGlite.
 */
export function walletEvents(names: CookieNames): FastifyPluginAsync {
  return async (app) => {
    const { db } = app.services;
    const streams = new Set<() => void>();
    app.addHook('onClose', async () => {
      for (const end of streams) end();
    });

    app.get(`${WALLET}/events`, { schema: { hide: true } }, async (request, reply) => {
      const token = cookiesOf(request)[names.session] ?? '';
      const session = token && token.length <= 100 ? await findWalletSession(db, token) : undefined;
      if (!session)
        return reply.code(401).type('text/plain; charset=utf-8').header('Cache-Control', 'no-store').send('');
      const owner = { walletId: session.walletId, phone: session.phone, environment: session.environment };
      let newest = await newestRequestId(db, owner);
      reply.hijack();
      const raw = reply.raw;
      raw.writeHead(200, {
        'Content-Type': 'text/event-stream; charset=utf-8',
        'Cache-Control': 'no-store',
        'X-Content-Type-Options': 'nosniff',
        Connection: 'keep-alive',
      });
      raw.write('retry: 1000\n\n');
      let busy = false;
      let lastBeat = Date.now();
      let lastCheck = Date.now();
      const tick = async () => {
        if (busy) return;
        busy = true;
        try {
          const now = Date.now();
          if (now - lastCheck >= SESSION_CHECK_MS) {
            lastCheck = now;
            if (!(await findWalletSession(db, token))) return end();
          }
          const latest = await newestRequestId(db, owner);
          if (latest !== null && latest !== newest) {
            newest = latest;
            raw.write(`event: request\ndata: ${JSON.stringify({ id: latest })}\n\n`);
          } else if (now - lastBeat >= HEARTBEAT_MS) {
            lastBeat = now;
            raw.write(': still here\n\n');
          }
        } catch {
          // A database that went away (the server stopping): the stream ends, the browser reconnects.
          end();
        } finally {
          busy = false;
        }
      };
      const timer = setInterval(() => void tick(), EVENTS_POLL_MS);
      function end() {
        clearInterval(timer);
        streams.delete(end);
        if (!raw.writableEnded) raw.end();
      }
      streams.add(end);
      raw.on('close', end);
    });
  };
}
