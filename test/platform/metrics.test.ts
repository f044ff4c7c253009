import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { sql } from 'kysely';
import pg from 'pg';
import pino from 'pino';
import { startWorker, type Worker } from '../../src/worker/worker.js';
import { testDatabaseKind } from '../support/database.js';
import {
  ADMIN_TOKEN,
  expectError,
  expectStatus,
  sendRequest,
  startTestApp,
  type TestApp,
  type TestBusiness,
  type TestResponse,
} from '../support/harness.js';
import { startReceiver, type Receiver } from '../support/receiver.js';

const METRICS_TOKEN = 'metrics-token-0123456789';
const INTENTS = '/api/v1/dev/intents';
const ENDPOINTS = '/api/v1/dev/webhooks/endpoints';

/** One sample of the Prometheus text: `name{a="1",b="2"} value`, labels in any order. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found = new Map([...(match[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([key, value]) => found.get(key) === value)) return Number(match[3]);
  }
  return undefined;
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('GET /metrics (Prometheus)', () => {
  let t: TestApp;
  let business: TestBusiness;
  let worker: Worker | undefined;
  const receivers: Receiver[] = [];

  const scrape = (token = METRICS_TOKEN): Promise<TestResponse> =>
    t.request('GET', '/metrics', { headers: { authorization: `Bearer ${token}` } });

  beforeAll(async () => {
    t = await startTestApp({
      config: { METRICS_TOKEN, WEBHOOK_ALLOW_PRIVATE: 'true', RATE_LIMIT_LIVE_PER_MINUTE: '2' },
      configOverrides: { webhookTimeoutMs: 2000 },
    });
    business = await t.createBusiness();
  });
  afterAll(async () => {
    await worker?.stop();
    for (const receiver of receivers) await receiver.close();
    await t.close();
  });

  test('401 ADMIN_UNAUTHORIZED without a token or with a wrong one; the metrics token and the admin token both read', async () => {
    const missing = await t.request('GET', '/metrics');
    expectError(missing, 401, 'ADMIN_UNAUTHORIZED');
    // Both tokens read, so the message names both (issue 54, item 21).
    assert.match(missing.body.error.message, /METRICS_TOKEN/);
    assert.match(missing.body.error.message, /admin token/);
    expectError(await scrape('wrong-token-0123456789'), 401, 'ADMIN_UNAUTHORIZED');
    expectError(await t.request('GET', '/metrics', { key: business.keys.secretTest }), 401, 'ADMIN_UNAUTHORIZED');
    expectStatus(await scrape(ADMIN_TOKEN), 200);
    const response = await scrape();
    expectStatus(response, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  });

  test('requests by route, method and status with a latency histogram; rate-limit refusals', async () => {
    const sk = business.keys.secretTest;
    const created = await t.request('POST', INTENTS, { key: sk, idempotencyKey: true, body: { amount: 5000 } });
    expectStatus(created, 201);
    const reference = created.body.data.referenceNumber as string;
    expectStatus(await t.request('GET', `${INTENTS}/${reference}`, { key: sk }), 200);
    expectStatus(await t.request('GET', `${INTENTS}/${reference}`, { key: business.keys.publishableTest }), 200);
    expectError(await t.request('GET', `${INTENTS}/PI-NOPE`, { key: sk }), 404, 'INTENT_NOT_FOUND');
    expectError(await t.request('GET', '/api/v1/dev/no-such-thing', { key: sk }), 404, 'ENDPOINT_NOT_FOUND');
    // Two a minute for live keys: the third (or, across a minute boundary, a later one) is refused.
    let refused = 0;
    for (let i = 0; i < 6 && refused === 0; i++) {
      const response = await t.request('GET', INTENTS, { key: business.keys.secretLive });
      if (response.status === 429) refused += 1;
      else expectStatus(response, 200);
    }
    assert.equal(refused, 1);

    const text = (await scrape()).text;
    const byRoute = (method: string, route: string, status: string) =>
      sample(text, 'http_request_duration_seconds_count', { method, route, status_code: status });
    assert.equal(byRoute('POST', INTENTS, '201'), 1, text);
    assert.equal(byRoute('GET', `${INTENTS}/:referenceNumber`, '200'), 2);
    assert.equal(byRoute('GET', `${INTENTS}/:referenceNumber`, '404'), 1);
    assert.equal(byRoute('GET', 'unmatched', '404'), 1, 'a path without a route is one series, not one per path');
    assert.equal(byRoute('GET', INTENTS, '429'), 1);
    const labels = { method: 'POST', route: INTENTS, status_code: '201' };
    assert.equal(sample(text, 'http_request_duration_seconds_bucket', { ...labels, le: '+Inf' }), 1);
    assert.ok((sample(text, 'http_request_duration_seconds_sum', labels) ?? -1) > 0);
    assert.equal(sample(text, 'rate_limit_refusals_total', { route: INTENTS }), 1);
  });

  test('webhook attempts by outcome, the delivery backlog and lag, the outbox lag', async () => {
    const ok = await startReceiver();
    const failing = await startReceiver();
    failing.answer = () => ({ status: 500, body: 'down' });
    receivers.push(ok, failing);
    for (const receiver of [ok, failing]) {
      expectStatus(
        await t.request('POST', ENDPOINTS, {
          key: business.keys.secretTest,
          idempotencyKey: true,
          body: { url: receiver.url, events: ['payment.created'] },
        }),
        201,
      );
    }
    expectStatus(
      await t.request('POST', INTENTS, { key: business.keys.secretTest, idempotencyKey: true, body: { amount: 700 } }),
      201,
    );

    // No worker yet: both deliveries wait, unattempted.
    const waiting = (await scrape()).text;
    assert.equal(sample(waiting, 'webhook_deliveries_pending', { state: 'due' }), 2, waiting);
    assert.ok((sample(waiting, 'event_outbox_lag_seconds') ?? 0) > 0);
    assert.ok((sample(waiting, 'webhook_delivery_lag_seconds') ?? 0) > 0);
    assert.equal(sample(waiting, 'webhook_attempts_total', { outcome: 'succeeded' }), 0);

    worker = startWorker(t.runtime, pino({ level: 'silent' }), [], 60_000);
    const done = await until('both attempts recorded', async () => {
      const text = (await scrape()).text;
      const succeeded = sample(text, 'webhook_attempts_total', { outcome: 'succeeded' }) ?? 0;
      const failed = sample(text, 'webhook_attempts_total', { outcome: 'http_error' }) ?? 0;
      // The scrape reads the deliveries, then the attempts: one scrape can count an attempt whose
      // delivery it saw still in flight (its outcome committed between the two reads).
      const inFlight = sample(text, 'webhook_deliveries_pending', { state: 'in_flight' }) ?? 0;
      return succeeded >= 1 && failed >= 1 && inFlight === 0 ? text : undefined;
    });
    assert.equal(sample(done, 'webhook_attempts_total', { outcome: 'network_error' }), 0);
    // The failed one waits for its retry (30 s later): scheduled, not due; nothing is unattempted.
    assert.equal(sample(done, 'webhook_deliveries_pending', { state: 'scheduled' }), 1, done);
    assert.equal(sample(done, 'webhook_deliveries_pending', { state: 'due' }), 0);
    assert.equal(sample(done, 'event_outbox_lag_seconds'), 0);
    assert.equal(sample(done, 'webhook_delivery_lag_seconds'), 0);
  });

  test('database pool use and process metrics', async () => {
    const text = (await scrape()).text;
    assert.ok((sample(text, 'db_pool_connections', { state: 'max' }) ?? 0) >= 1, text);
    assert.notEqual(sample(text, 'db_pool_connections', { state: 'idle' }), undefined);
    assert.notEqual(sample(text, 'db_pool_connections', { state: 'in_use' }), undefined);
    assert.equal(sample(text, 'db_pool_waiting_queries'), 0);
    // No synchronous standby here: nothing waits for one.
    assert.equal(sample(text, 'db_commits_waiting_for_standby'), 0);
    assert.equal(sample(text, 'db_commit_standby_wait_seconds'), 0);
    for (const name of [
      'process_cpu_user_seconds_total',
      'process_resident_memory_bytes',
      'nodejs_eventloop_lag_seconds',
    ])
      assert.notEqual(sample(text, name), undefined, `${name} is missing`);
  });

  test('table growth: sizes, tuples and vacuum per table, partitions summed into their table', async () => {
    const text = (await scrape()).text;
    const intents = { table: 'payment_intents' };
    const total = sample(text, 'db_table_total_bytes', intents) ?? 0;
    const indexes = sample(text, 'db_table_index_bytes', intents) ?? 0;
    assert.ok(indexes > 0 && total > indexes, `${total} bytes, ${indexes} of them indexes`);
    for (const name of [
      'db_table_live_tuples',
      'db_table_dead_tuples',
      'db_table_dead_tuples_over_autovacuum_threshold',
    ]) {
      assert.ok((sample(text, name, intents) ?? -1) >= 0, `${name} is missing`);
    }
    assert.ok((sample(text, 'db_table_vacuum_age_seconds', intents) ?? -1) >= 0);
    assert.equal(sample(text, 'db_table_statistics_skipped_total'), 0);
    // The next test's partitioned table does not exist yet: no series for it.
    assert.equal(sample(text, 'db_default_partition_rows', { table: 'metrics_probe' }), undefined);
  });

  test('rows in a default partition: the alert that a month partition is missing', async () => {
    const db = t.runtime.db;
    await sql`CREATE TABLE metrics_probe (id int NOT NULL, at date NOT NULL, note text) PARTITION BY RANGE (at)`.execute(
      db,
    );
    try {
      // Autovacuum would race the dead-tuple figures below: off, with a zero threshold.
      await sql`CREATE TABLE metrics_probe_2026_01 PARTITION OF metrics_probe
        FOR VALUES FROM ('2026-01-01') TO ('2026-02-01')
        WITH (autovacuum_enabled = false, autovacuum_vacuum_threshold = 0, autovacuum_vacuum_scale_factor = 0)`.execute(
        db,
      );
      await sql`CREATE TABLE metrics_probe_default PARTITION OF metrics_probe DEFAULT`.execute(db);
      await sql`CREATE INDEX metrics_probe_at_idx ON metrics_probe (at)`.execute(db);
      await sql`INSERT INTO metrics_probe SELECT i, date '2026-01-01' + i % 31, repeat('x', 100)
        FROM generate_series(1, 200) AS i`.execute(db);

      const filed = (await scrape()).text;
      const probe = { table: 'metrics_probe' };
      assert.equal(sample(filed, 'db_default_partition_rows', probe), 0, filed);
      assert.ok((sample(filed, 'db_table_total_bytes', probe) ?? 0) > 8192);
      assert.ok((sample(filed, 'db_table_index_bytes', probe) ?? 0) > 0);
      for (const partition of ['metrics_probe_2026_01', 'metrics_probe_default']) {
        assert.equal(
          sample(filed, 'db_table_total_bytes', { table: partition }),
          undefined,
          `${partition} has a series`,
        );
      }

      // A row for a month without its partition lands in the default partition, and says so.
      await sql`INSERT INTO metrics_probe VALUES (201, date '2031-05-01', 'no partition yet')`.execute(db);
      assert.equal(sample((await scrape()).text, 'db_default_partition_rows', probe), 1);

      // Dead tuples past the (zero) threshold until a vacuum; then the vacuum is recent.
      await db.transaction().execute(async (trx) => {
        await sql`DELETE FROM metrics_probe WHERE at < date '2026-01-11'`.execute(trx);
        await sql`SELECT pg_stat_force_next_flush()`.execute(trx);
      });
      const deleted = await until('the dead tuples counted', async () => {
        const text = (await scrape()).text;
        return (sample(text, 'db_table_dead_tuples', probe) ?? 0) > 0 ? text : undefined;
      });
      const dead = sample(deleted, 'db_table_dead_tuples', probe);
      assert.equal(sample(deleted, 'db_table_dead_tuples_over_autovacuum_threshold', probe), dead);
      await sql`VACUUM metrics_probe`.execute(db);
      const vacuumed = (await scrape()).text;
      assert.equal(sample(vacuumed, 'db_table_dead_tuples', probe), 0);
      assert.ok((sample(vacuumed, 'db_table_vacuum_age_seconds', probe) ?? Infinity) < 60);
    } finally {
      await sql`DROP TABLE metrics_probe`.execute(db);
    }
  });

  test.skipIf(testDatabaseKind === 'postgres' ? false : 'PostgreSQL only: PGlite runs one session')(
    'a table held by DDL: the scrape answers at once with the previous table figures, and counts the skip',
    async () => {
      const before = (await scrape()).text;
      const intents = { table: 'payment_intents' };
      const bytes = sample(before, 'db_table_total_bytes', intents);
      assert.ok((bytes ?? 0) > 0);
      const holder = new pg.Client(t.testDatabase.url!);
      await holder.connect();
      try {
        // What VACUUM FULL or a migration rewriting the table holds for as long as it runs.
        await holder.query('BEGIN');
        await holder.query('LOCK TABLE payment_intents IN ACCESS EXCLUSIVE MODE');
        const started = Date.now();
        const held = await scrape();
        expectStatus(held, 200);
        assert.ok(Date.now() - started < 2000, `the scrape took ${Date.now() - started} ms`);
        assert.equal(sample(held.text, 'db_table_statistics_skipped_total'), 1);
        assert.equal(sample(held.text, 'db_table_total_bytes', intents), bytes);
      } finally {
        await holder.query('ROLLBACK');
        await holder.end();
      }
      const after = (await scrape()).text;
      assert.equal(sample(after, 'db_table_statistics_skipped_total'), 1);
      assert.ok((sample(after, 'db_table_total_bytes', intents) ?? 0) > 0);
    },
  );

  test('CORS: a refused publishable call still carries the headers; none outside the API', async () => {
    const refused = await t.request('GET', INTENTS, {
      key: 'pk_test_' + 'x'.repeat(40),
      headers: { origin: 'https://shop.example' },
    });
    expectError(refused, 401, 'INVALID_API_KEY');
    assert.equal(refused.headers.get('access-control-allow-origin'), '*');
    assert.match(refused.headers.get('access-control-expose-headers') ?? '', /X-Request-Id/);
    const preflight = await t.request('OPTIONS', '/metrics', {
      headers: { origin: 'https://shop.example', 'access-control-request-method': 'GET' },
    });
    expectError(preflight, 404, 'ENDPOINT_NOT_FOUND');
    assert.equal(preflight.headers.get('access-control-allow-origin'), null);
  });
});

describe('GET /ready', () => {
  test('503 NOT_READY when the database does not answer', async () => {
    const t = await startTestApp();
    try {
      const ready = await sendRequest(t.baseUrl, 'GET', '/ready');
      expectStatus(ready, 200);
      await t.runtime.database.close();
      expectError(await sendRequest(t.baseUrl, 'GET', '/ready'), 503, 'NOT_READY');
    } finally {
      await t.app.close();
      await t.testDatabase.drop().catch(() => {});
    }
  });
});
