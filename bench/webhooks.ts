import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { newId } from '../src/lib/ids.js';
import { type EventRecord } from '../src/modules/events/outbox.js';
import { unitOfWork } from '../src/modules/events/unit-of-work.js';
import { printLatencies, printThroughput } from './report.js';
import { createScratchDatabase } from './support/database.js';
import { runLoad, timeSamples } from './support/load.js';
import { startProcess } from './support/processes.js';

const DELIVERIES = Number(process.env.BENCH_WEBHOOK_DELIVERIES ?? 6000);
const LATENCY_EVENTS = 60;

/** A receiver that answers 204 at once and notes when each delivery first arrived. */
async function startReceiver() {
  const arrivals = new Map<string, { at: number; eventId: string }>();
  let count = 0;
  let waiter: { target: number; resolve: () => void } | undefined;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const at = Date.now();
      const delivery = String(req.headers['x-commerce-delivery'] ?? '');
      if (delivery && !arrivals.has(delivery)) {
        const body = Buffer.concat(chunks).toString();
        arrivals.set(delivery, { at, eventId: body ? (JSON.parse(body) as { id: string }).id : '' });
        count += 1;
        if (waiter && count >= waiter.target) waiter.resolve();
      }
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    arrivals,
    count: () => count,
    reset() {
      arrivals.clear();
      count = 0;
    },
    waitFor(target: number, timeoutMs = 120_000) {
      if (count >= target) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`only ${count} of ${target} deliveries arrived`)), timeoutMs);
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
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

export async function webhooksSuite(): Promise<void> {
  const scratch = await createScratchDatabase();
  const { db } = scratch.database;
  const receiver = await startReceiver();
  const startWorkerProcess = () =>
    startProcess(
      'src/server.ts',
      ['--worker'],
      {
        DATABASE_URL: scratch.url,
        WEBHOOK_ALLOW_PRIVATE: 'true',
        LOG_LEVEL: 'warn',
        SEED_DEMO: 'false',
        ADMIN_TOKEN: 'bench-admin-token-0123456789',
      },
      async () => (await db.selectFrom('periodic_tasks').select('name').execute()).length > 0,
    );
  const workers = [await startWorkerProcess()];
  console.log(
    `PostgreSQL scratch database; worker processes (64 attempts in flight each, 4 per endpoint over all workers), ` +
      `woken by NOTIFY at commit; a local receiver answering 204; ` +
      `${DELIVERIES} deliveries per throughput figure, ${LATENCY_EVENTS} events one at a time for latency`,
  );
  const body = JSON.stringify({ id: 'evt_baseline', event: 'payment.created', data: { amount: 100 } });
  try {
    const throughput = [];
    const latencies = [];
    const runs = [
      { endpointCount: 1, workerCount: 1 },
      { endpointCount: 5, workerCount: 1 },
      { endpointCount: 50, workerCount: 1 },
      { endpointCount: 50, workerCount: 2 },
    ];
    for (const { endpointCount, workerCount } of runs) {
      while (workers.length < workerCount) workers.push(await startWorkerProcess());
      const label = `${endpointCount} endpoint(s), ${workerCount} worker${workerCount > 1 ? 's' : ''}`;
      await sql`TRUNCATE webhook_attempts, webhook_deliveries, webhook_endpoints, events, businesses CASCADE`.execute(
        db,
      );
      const businesses: string[] = [];
      for (let i = 0; i < endpointCount; i++) {
        if (i % 5 === 0) {
          const id = newId('biz');
          await db
            .insertInto('businesses')
            .values({ id, name: `Bench ${i / 5}` })
            .execute();
          businesses.push(id);
        }
        await db
          .insertInto('webhook_endpoints')
          .values({
            id: newId('we'),
            business_id: businesses[businesses.length - 1]!,
            environment: 'test',
            url: receiver.url,
            events: ['payment.created'],
            secret: 'b'.repeat(64),
            previous_secret: null,
            previous_secret_expires_at: null,
            deleted_at: null,
          })
          .execute();
      }
      const perBusiness = Math.min(5, endpointCount);
      const event = (businessId: string): EventRecord => {
        const id = newId('evt');
        const createdAt = new Date();
        return {
          id,
          businessId,
          environment: 'test',
          event: 'payment.created',
          subject: id,
          body: JSON.stringify({
            id,
            event: 'payment.created',
            created_at: createdAt.toISOString(),
            sandbox: true,
            data: {},
          }),
          createdAt,
        };
      };

      // Throughput: a backlog committed at once, drained by the worker.
      receiver.reset();
      const events = Array.from({ length: DELIVERIES / perBusiness }, (_, i) =>
        event(businesses[i % businesses.length]!),
      );
      await db.transaction().execute((trx) => unitOfWork().events(events).run(trx));
      const started = Date.now();
      await receiver.waitFor(DELIVERIES);
      const seconds = (Date.now() - started) / 1000;
      const drained = {
        requests: DELIVERIES,
        sent: DELIVERIES,
        errors: 0,
        perSecond: DELIVERIES / seconds,
        p50Ms: Number.NaN,
        p99Ms: Number.NaN,
      };
      const raw = await runLoad(
        receiver.url.replace('/hook', ''),
        { concurrency: Math.min(64, 4 * endpointCount), durationMs: 3000, warmupMs: 500, expectStatus: 204 },
        (_c, n) => ({
          method: 'POST',
          path: '/hook',
          headers: { 'x-commerce-delivery': `raw-${endpointCount}-${workerCount}-${n}` },
          body,
        }),
      );
      throughput.push({ name: `${label}, backlog`, ours: drained, baseline: raw });

      // Latency: single events, each timed from its commit to its first attempt at every endpoint.
      receiver.reset();
      const committedAt = new Map<string, number>();
      for (let i = 0; i < LATENCY_EVENTS; i++) {
        const one = event(businesses[i % businesses.length]!);
        await db.transaction().execute((trx) => unitOfWork().events([one]).run(trx));
        committedAt.set(one.id, Date.now());
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await receiver.waitFor(LATENCY_EVENTS * perBusiness);
      const samples = [...receiver.arrivals.values()].map((arrival) => arrival.at - committedAt.get(arrival.eventId)!);
      const rawSamples: number[] = [];
      for (let i = 0; i < 200; i++) {
        const t0 = performance.now();
        await fetch(receiver.url, {
          method: 'POST',
          body,
          headers: { 'x-commerce-delivery': `lat-${endpointCount}-${workerCount}-${i}` },
        });
        rawSamples.push(performance.now() - t0);
      }
      const ours = timeSamples(samples);
      const base = timeSamples(rawSamples);
      latencies.push({
        name: label,
        p50Ms: ours.p50Ms,
        p99Ms: ours.p99Ms,
        baselineP50Ms: base.p50Ms,
        baselineP99Ms: base.p99Ms,
      });
    }
    printThroughput(
      'Deliveries per second, a committed backlog drained by the workers (baseline: bare POSTs to the same receiver)',
      throughput,
    );
    printLatencies('Commit to first attempt (woken by NOTIFY; the fallback poll is 1 s)', 'bare POST', latencies);
  } finally {
    for (const worker of workers) await worker.stop();
    await receiver.close();
    await scratch.drop();
  }
}
