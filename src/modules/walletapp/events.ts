import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { addressSubject } from '../../http/client-address.js';
import { cookiesOf, type CookieNames } from '../dashboard/cookies.js';
import { findWalletSession } from './sessions.js';
import { newestRequestId } from './store.js';
import { WALLET } from './pages.js';
import { streamHub } from './stream-hub.js';

/** A comment line this often keeps proxies from closing a quiet stream. */
const HEARTBEAT_MS = 15_000;

/** A refusal the page's EventSource reads as final (it does not reconnect after a non-200 answer). */
function refuse(reply: FastifyReply, status: 401 | 429) {
  return reply.code(status).type('text/plain; charset=utf-8').header('Cache-Control', 'no-store').send('');
}

/**
 * `GET /wallet/events`: server-sent events for the signed-in wallet. `request` when a new payment
 * request to it is created (the page then fetches its list again); nothing else. Push-driven: the
 * request's transaction notifies at its commit and the process's one listener (stream-hub.ts)
 * wakes this wallet's streams, which then read the newest pending request as before; a slow poll
 * (config.walletStream.pollMs) covers a lost listener. The stream checks its session now and then
 * without touching it, so a tab left open does not keep a session alive, and ends with it.
 */
export function walletEvents(names: CookieNames): FastifyPluginAsync {
  return async (app) => {
    const { db, database, config } = app.services;
    const { pollMs, sessionCheckMs } = config.walletStream;
    const hub = streamHub(database, app.log);
    const streams = new Set<() => void>();
    app.addHook('onClose', async () => {
      for (const end of streams) end();
      await hub.close();
    });

    app.get(`${WALLET}/events`, { schema: { hide: true } }, async (request, reply) => {
      const token = cookiesOf(request)[names.session] ?? '';
      const session = token && token.length <= 100 ? await findWalletSession(db, token, { touch: false }) : undefined;
      if (!session) return refuse(reply, 401);
      const taken = hub.take(session.tokenHash, addressSubject(request.ip));
      if (typeof taken === 'string') return refuse(reply, 429);
      const slot = taken;
      const owner = { walletId: session.walletId, phone: session.phone, environment: session.environment };
      let newest: string | null;
      try {
        // Listening before the first read: a request committed after it is notified, one before it is read.
        await hub.listening();
        newest = await newestRequestId(db, owner);
      } catch (error) {
        slot.release();
        throw error;
      }
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
      // A wake during a read that began before the request's commit must read again, or it waits for the poll.
      let again = false;
      let lastWrite = Date.now();
      // A read that was under way when the stream ended must not write to it.
      const send = (text: string) => {
        if (raw.writableEnded || raw.destroyed) return;
        raw.write(text);
        lastWrite = Date.now();
      };
      const look = async (): Promise<void> => {
        if (busy) {
          again = true;
          return;
        }
        busy = true;
        try {
          do {
            again = false;
            const latest = await newestRequestId(db, owner);
            if (latest !== null && latest !== newest) {
              newest = latest;
              send(`event: request\ndata: ${JSON.stringify({ id: latest })}\n\n`);
            }
          } while (again && !raw.writableEnded);
          if (Date.now() - lastWrite >= HEARTBEAT_MS) send(': still here\n\n');
        } catch {
          // A database that went away (the server stopping): the stream ends, the browser reconnects.
          end();
        } finally {
          busy = false;
        }
      };
      const checkSession = async () => {
        try {
          if (!(await findWalletSession(db, token, { touch: false }))) end();
        } catch {
          end();
        }
      };
      const poll = setInterval(() => void look(), pollMs);
      const check = setInterval(() => void checkSession(), sessionCheckMs);
      function end() {
        clearInterval(poll);
        clearInterval(check);
        slot.release();
        streams.delete(end);
        if (!raw.writableEnded) raw.end();
      }
      slot.watch(session.walletId, () => void look());
      // A request committed between the first read and the watch woke nobody: read once more.
      void look();
      streams.add(end);
      raw.on('close', end);
    });
  };
}
