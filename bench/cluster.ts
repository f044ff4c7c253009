/**
 * `npm run bench -- cluster`: the production layout of the README on one PostgreSQL database and
 * one Redis: first one API process and one worker, then two of each (`start:api` / `start:worker`,
 * the compiled server). Create, GET and webhook-delivery throughput of two against one, in the
 * same run; then checks that no delivery was accepted twice by the receiver and that a key's
 * per-minute rate limit holds across both API processes.
 */
import { randomInt } from 'node:crypto';
import pg from 'pg';
import { newId, randomBase62 } from '../src/lib/ids.js';
import { type EventRecord } from '../src/modules/events/outbox.js';
import { unitOfWork } from '../src/modules/events/unit-of-work.js';
import { ADMIN_TOKEN, createBusiness, keyOf } from './intents.js';
import { printThroughput, type Throughput } from './report.js';
import { createScratchDatabase } from './support/database.js';
import { runLoad } from './support/load.js';
import { startProcess, startServer, type ServerProcess } from './support/processes.js';
import { startReceiver } from './support/receiver.js';

export const BENCH_REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const DELIVERIES = Number(process.env.BENCH_CLUSTER_DELIVERIES ?? 4000);
const ENDPOINTS = 50;
/** The sandbox keys' per-minute limit in this run; the live keys carry the load unlimited. */
const TEST_LIMIT = 300;

export function clusterEnv(databaseUrl: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    REDIS_URL: BENCH_REDIS_URL,
    ADMIN_TOKEN,
    SEED_DEMO: 'false',
    LOG_LEVEL: 'warn',
    WEBHOOK_ALLOW_PRIVATE: 'true',
    RATE_LIMIT_LIVE_PER_MINUTE: '1000000000',
    ...extra,
  };
}

/** A worker process (it serves no HTTP): running once it has stayed up for a second. */
export async function startWorker(env: Record<string, string>) {
  const started = Date.now();
  return startProcess('src/server.ts', ['--worker'], env, async () => Date.now() - started > 1000);
}

export async function clusterSuite(): Promise<void> {
  const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 32);
  const durationMs = Number(process.env.BENCH_DURATION_MS ?? 8000);
  const warmupMs = 2000;
  const scratch = await createScratchDatabase();
  const { db } = scratch.database;
  const client = new pg.Client({ connectionString: scratch.url });
  await client.connect();
  const receiver = await startReceiver();
  const env = clusterEnv(scratch.url, { RATE_LIMIT_TEST_PER_MINUTE: String(TEST_LIMIT) });
  const apis: ServerProcess[] = [await startServer('src/server.ts', ['--api'], env, '/ready')];
  const workers = [await startWorker(env)];
  try {
    const shop = await createBusiness(apis[0]!.url, 'Cluster shop');
    const secret = `Bearer ${keyOf(shop.keys, 'secret', 'live')}`;
    const publishable = `Bearer ${keyOf(shop.keys, 'publishable', 'live')}`;

    // 50 endpoints of 10 businesses (5 each, the most a business may have), one receiver path each.
    const hookBusinesses: string[] = [];
    for (let i = 0; i < ENDPOINTS; i++) {
      if (i % 5 === 0) {
        const id = newId('biz');
        await db
          .insertInto('businesses')
          .values({ id, name: `Hooks ${i / 5}` })
          .execute();
        hookBusinesses.push(id);
      }
      await db
        .insertInto('webhook_endpoints')
        .values({
          id: newId('we'),
          business_id: hookBusinesses[hookBusinesses.length - 1]!,
          environment: 'test',
          url: `${receiver.url}/hook/${i}`,
          events: ['payment.created'],
          secret: 'b'.repeat(64),
          previous_secret: null,
          previous_secret_expires_at: null,
          deleted_at: null,
        })
        .execute();
    }
    const event = (businessId: string): EventRecord => {
      const id = newId('evt');
      const createdAt = new Date();
      const body = { id, event: 'payment.created', created_at: createdAt.toISOString(), sandbox: true, data: {} };
      return {
        id,
        businessId,
        environment: 'test',
        event: 'payment.created',
        subject: id,
        body: JSON.stringify(body),
        createdAt,
      };
    };

    const run = randomBase62(6);
    const measure = async (label: string) => {
      const urls = apis.map((api) => api.url);
      const load = (status: number, next: Parameters<typeof runLoad>[2]) =>
        runLoad(urls, { concurrency, durationMs, warmupMs, expectStatus: status }, next);
      const body = JSON.stringify({ amount: 12_500, label: 'Cluster order' });
      const create = await load(201, (_c, n) => ({
        method: 'POST',
        path: '/api/v1/dev/intents',
        headers: { authorization: secret, 'x-idempotency-key': `cluster-${run}-${label}-${n}` },
        body,
      }));
      const refs = (
        await client.query<{ reference_number: string }>(
          'SELECT reference_number FROM payment_intents WHERE business_id = $1 LIMIT 5000',
          [shop.id],
        )
      ).rows.map((row) => row.reference_number);
      const get = await load(200, () => ({
        method: 'GET',
        path: `/api/v1/dev/intents/${refs[randomInt(refs.length)]}`,
        headers: { authorization: publishable },
      }));
      // Deliveries: a backlog committed at once (5 endpoints per event), drained by the workers.
      const before = receiver.accepted.size;
      const events = Array.from({ length: DELIVERIES / 5 }, (_, i) =>
        event(hookBusinesses[i % hookBusinesses.length]!),
      );
      await db.transaction().execute((trx) => unitOfWork().events(events).run(trx));
      const started = Date.now();
      await receiver.waitFor(before + DELIVERIES);
      const seconds = (Date.now() - started) / 1000;
      const deliveries: Throughput = {
        requests: DELIVERIES,
        sent: DELIVERIES,
        errors: 0,
        perSecond: DELIVERIES / seconds,
        p50Ms: Number.NaN,
        p99Ms: Number.NaN,
      };
      return { create, get, deliveries };
    };

    console.log(
      `PostgreSQL scratch database and Redis (${BENCH_REDIS_URL}); compiled server processes; ${concurrency} clients ` +
        `spread over the API processes, ${warmupMs / 1000} s warm-up then ${durationMs / 1000} s per figure; ` +
        `${DELIVERIES} deliveries over ${ENDPOINTS} endpoints per delivery figure; load, servers and database share the machine's cores`,
    );
    const one = await measure('one');
    apis.push(await startServer('src/server.ts', ['--api'], env, '/ready'));
    workers.push(await startWorker(env));
    const two = await measure('two');
    printThroughput('2 API processes + 2 workers (baseline: 1 API process + 1 worker, same database and run)', [
      { name: 'create intent', ours: two.create, baseline: one.create },
      { name: 'get intent', ours: two.get, baseline: one.get },
      { name: 'webhook deliveries (drain)', ours: two.deliveries, baseline: one.deliveries },
    ]);

    // Nothing delivered twice: every delivery the receiver accepted once, and the database agrees
    // once the workers have written the last outcomes (they write them in batches, behind the sends).
    const countSucceeded = async () =>
      Number((await client.query(`SELECT count(*) FROM webhook_deliveries WHERE status = 'SUCCEEDED'`)).rows[0].count);
    let succeeded = await countSucceeded();
    for (const deadline = Date.now() + 10_000; succeeded < receiver.accepted.size && Date.now() < deadline;) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      succeeded = await countSucceeded();
    }
    const duplicatesOk = receiver.stats.duplicates === 0 && succeeded === receiver.accepted.size;
    console.log(
      `\ndeliveries: ${receiver.accepted.size} accepted by the receiver, ${succeeded} SUCCEEDED in the database, ` +
        `${receiver.stats.duplicates} accepted twice; most attempts in flight at once to one endpoint: ` +
        `${receiver.stats.maxInFlightPerPath} -> ${duplicatesOk ? 'ok' : 'FAILED'}`,
    );

    // The rate limit across processes: a sandbox key allowed TEST_LIMIT requests a minute, sent
    // 2 x TEST_LIMIT requests spread over both API processes within one window.
    const limitOk = await checkRateLimit(
      apis.map((api) => api.url),
      `Bearer ${keyOf(shop.keys, 'secret', 'test')}`,
    );
    if (!duplicatesOk || !limitOk) process.exitCode = 1;
  } finally {
    for (const worker of workers) await worker.stop();
    for (const api of apis) await api.stop();
    await receiver.close();
    await client.end();
    await scratch.drop();
  }
}

async function checkRateLimit(urls: string[], key: string): Promise<boolean> {
  for (let attempt = 0; attempt < 3; attempt++) {
    // Start early in a minute window, so the burst stays in one window.
    const intoWindow = Date.now() % 60_000;
    if (intoWindow > 30_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - intoWindow + 200));
    const window = Math.floor(Date.now() / 60_000);
    const statuses = await Promise.all(
      Array.from({ length: 2 * TEST_LIMIT }, async (_, i) => {
        const response = await fetch(`${urls[i % urls.length]}/api/v1/dev/intents?limit=1`, {
          headers: { authorization: key },
        });
        await response.arrayBuffer();
        return response.status;
      }),
    );
    if (Math.floor(Date.now() / 60_000) !== window) continue;
    const allowed = statuses.filter((status) => status === 200).length;
    const limited = statuses.filter((status) => status === 429).length;
    const ok = allowed === TEST_LIMIT && limited === TEST_LIMIT;
    console.log(
      `rate limit ${TEST_LIMIT}/min for one key over ${urls.length} API processes: ${2 * TEST_LIMIT} requests in one ` +
        `window, ${allowed} answered 200, ${limited} answered 429 -> ${ok ? 'ok' : 'FAILED'}`,
    );
    return ok;
  }
  console.log('rate limit: every burst straddled a minute boundary -> FAILED');
  return false;
}
