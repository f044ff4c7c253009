import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A webhook receiver for the many-process benches: counts each delivery id it accepted, so a
 * delivery accepted twice shows up as a duplicate, and the most attempts in flight at once per
 * path (one path per endpoint). With `failRate`, that share of attempts answers 500 at random,
 * but never more than `maxFailuresPerDelivery` times for one delivery (default 3, well below the
 * 8 attempts): otherwise one in 0.2^8 deliveries would end DEAD by chance (1 in 11 soaks of 37,000
 * deliveries), and a DEAD delivery could no longer tell a fault of ours from bad luck.
 */
export async function startReceiver(options: { failRate?: number; maxFailuresPerDelivery?: number } = {}) {
  const maxFailures = options.maxFailuresPerDelivery ?? 3;
  const failuresOf = new Map<string, number>();
  const accepted = new Set<string>();
  const inFlight = new Map<string, number>();
  const stats = { attempts: 0, failed: 0, duplicates: 0, maxInFlightPerPath: 0 };
  let waiter: { target: number; resolve: () => void } | undefined;
  const server = http.createServer((req, res) => {
    const path = req.url ?? '/';
    const now = (inFlight.get(path) ?? 0) + 1;
    inFlight.set(path, now);
    stats.maxInFlightPerPath = Math.max(stats.maxInFlightPerPath, now);
    req.resume();
    req.on('end', () => {
      inFlight.set(path, (inFlight.get(path) ?? 1) - 1);
      stats.attempts += 1;
      const delivery = String(req.headers['x-commerce-delivery'] ?? '');
      const failedBefore = failuresOf.get(delivery) ?? 0;
      if (options.failRate && failedBefore < maxFailures && Math.random() < options.failRate) {
        failuresOf.set(delivery, failedBefore + 1);
        stats.failed += 1;
        res.writeHead(500).end();
        return;
      }
      failuresOf.delete(delivery);
      if (accepted.has(delivery)) stats.duplicates += 1;
      else accepted.add(delivery);
      res.writeHead(204).end();
      if (waiter && accepted.size >= waiter.target) waiter.resolve();
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    accepted,
    stats,
    /** Resolves once `target` distinct deliveries were accepted in all. */
    waitFor(target: number, timeoutMs = 180_000): Promise<void> {
      if (accepted.size >= target) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`only ${accepted.size} of ${target} deliveries arrived`)),
          timeoutMs,
        );
        waiter = {
          target,
          resolve: () => {
            clearTimeout(timer);
            waiter = undefined;
            resolve();
          },
        };
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
