import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { patience } from './patience.js';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

/**
 * What the receiver does with the next request: answer with a status (and body), after a delay
 * or once `after` settles (the test decides when), or hang.
 */
export type ReceiverAnswer =
  | { status: number; body?: string; headers?: Record<string, string>; delayMs?: number; after?: Promise<unknown> }
  | 'hang';

/**
 * A real local HTTP server standing in for a merchant's webhook endpoint. It records every
 * request with its raw body, and its answer can be changed mid-test.
 */
export interface Receiver {
  url: string;
  requests: ReceivedRequest[];
  answer: (request: ReceivedRequest) => ReceiverAnswer;
  /** Resolves once `count` requests have arrived. */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  inFlight(): number;
  /** TCP connections opened to the receiver so far. */
  connections(): number;
  close(): Promise<void>;
}

export async function startReceiver(path = '/hook'): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  const hanging = new Set<http.ServerResponse>();
  let active = 0;
  let connections = 0;
  const receiver: Receiver = {
    url: '',
    requests,
    answer: () => ({ status: 200, body: 'ok' }),
    async waitFor(count, timeoutMs = 10_000) {
      const limitMs = patience(timeoutMs);
      if (requests.length >= count) return requests;
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`receiver got ${requests.length} of ${count} requests in ${limitMs} ms`)),
          limitMs,
        );
        waiters.push({
          count,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        });
      });
      return requests;
    },
    inFlight: () => active,
    connections: () => connections,
    async close() {
      for (const response of hanging) response.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    active += 1;
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const received: ReceivedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      };
      requests.push(received);
      for (const waiter of [...waiters]) {
        if (requests.length >= waiter.count) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve();
        }
      }
      const answer = receiver.answer(received);
      if (answer === 'hang') {
        hanging.add(res);
        res.on('close', () => {
          hanging.delete(res);
          active -= 1;
        });
        return;
      }
      const respond = () => {
        res.writeHead(answer.status, { 'content-type': 'text/plain', ...answer.headers });
        res.end(answer.body ?? '');
        active -= 1;
      };
      if (answer.after) void answer.after.then(respond);
      else setTimeout(respond, answer.delayMs ?? 0);
    });
  });
  server.on('connection', () => {
    connections += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
  return receiver;
}
