import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { sql } from 'kysely';
import pino from 'pino';
import { RETENTION_BATCHES } from '../../src/config.js';
import { deleteOldRollups, LATENCY_BUCKETS_MS, latencyBucket, percentile } from '../../src/modules/webhooks/stats.js';
import { startWorker, type Worker } from '../../src/worker/worker.js';
import { expectError, expectStatus, startTestApp, type TestApp } from '../support/harness.js';
import { ENDPOINTS, webhookHelpers } from './support.js';

/** The upper edge of the latency bucket a duration is counted in (Infinity for the open last one). */
function upperBucketEdge(durationMs: number): number {
  return LATENCY_BUCKETS_MS[latencyBucket(durationMs)] ?? Number.POSITIVE_INFINITY;
}

describe('endpoint stats (issue 17, item 3)', () => {
  let t: TestApp;
  let worker: Worker;
  let hooks: ReturnType<typeof webhookHelpers>;
  beforeAll(async () => {
    // Retries on the real schedule: failed deliveries stay waiting (the backlog) during the test.
    t = await startTestApp({ config: { WEBHOOK_ALLOW_PRIVATE: 'true', RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    hooks = webhookHelpers(t);
    worker = startWorker(t.runtime, pino({ level: 'silent' }), [], 60_000);
  });
  afterAll(async () => {
    await worker.stop();
    await hooks.closeAll();
    await t.close();
  });

  const statsOf = async (key: string, id: string) => {
    const response = await t.request('GET', `${ENDPOINTS}/${id}/stats`, { key });
    expectStatus(response, 200);
    return response.body.data;
  };

  test('outcomes, success rate, latency, last error and backlog; read from the rollups, not the attempts', async () => {
    const business = await t.createBusiness();
    const sk = business.keys.secretTest;
    const { receiver, endpoint } = await hooks.receiverWithEndpoint(sk, ['payment.created']);
    const empty = await statsOf(sk, endpoint.id);
    assert.deepEqual(empty.last24h, {
      attempts: 0,
      succeeded: 0,
      failed: 0,
      successRate: null,
      latencyMs: null,
      byOutcome: Object.fromEntries(
        [
          'SUCCEEDED',
          'TIMEOUT',
          'CONNECTION_REFUSED',
          'TLS',
          'DNS',
          'NON_2XX',
          'REDIRECT_REFUSED',
          'ADDRESS_REFUSED',
          'CONNECTION_ERROR',
        ].map((name) => [name, 0]),
      ),
    });
    assert.equal(empty.lastError, null);
    assert.equal(empty.backlog, 0);

    receiver.answer = () => ({ status: 200, delayMs: 40 });
    const succeededDurations: number[] = [];
    for (let i = 0; i < 6; i++) {
      const id = await hooks.ping(sk, endpoint.id);
      const delivery = await hooks.waitForDelivery(sk, id, (d) => d.status === 'SUCCEEDED');
      succeededDurations.push(delivery.attempts[0].durationMs);
    }
    receiver.answer = () => ({ status: 500, body: 'nope' });
    const failed = [];
    for (let i = 0; i < 2; i++) {
      const id = await hooks.ping(sk, endpoint.id);
      failed.push(await hooks.waitForDelivery(sk, id, (d) => d.attempts[0]?.statusCode === 500));
    }
    receiver.answer = () => ({ status: 302, headers: { location: '/elsewhere' } });
    const redirected = await hooks.ping(sk, endpoint.id);
    await hooks.waitForDelivery(sk, redirected, (d) => d.attempts[0]?.statusCode === 302);

    const stats = await statsOf(sk, endpoint.id);
    assert.equal(stats.endpointId, endpoint.id);
    assert.equal(stats.last24h.attempts, 9);
    assert.equal(stats.last24h.succeeded, 6);
    assert.equal(stats.last24h.failed, 3);
    assert.equal(stats.last24h.successRate, 0.6667);
    assert.equal(stats.last24h.byOutcome.SUCCEEDED, 6);
    assert.equal(stats.last24h.byOutcome.NON_2XX, 2);
    assert.equal(stats.last24h.byOutcome.REDIRECT_REFUSED, 1);
    const { p50, p95 } = stats.last24h.latencyMs;
    // Percentiles come from latency buckets, so they are bounded by the bucket edges around the
    // recorded durations (not by a fixed time: a loaded machine answers later).
    const sorted = [...succeededDurations].sort((a, b) => a - b);
    assert.ok(p50 >= 20, `p50 ${p50} ms for answers after 40 ms`);
    assert.ok(p50 <= upperBucketEdge(sorted.at(-1)!), `p50 ${p50} ms within the bucket of the slowest of ${sorted}`);
    assert.ok(p95 >= p50, `p95 ${p95} >= p50 ${p50}`);
    assert.deepEqual(stats.last7d, stats.last24h);
    assert.equal(stats.lastError.errorClass, 'REDIRECT_REFUSED');
    assert.equal(stats.lastError.message, 'HTTP 302');
    assert.equal(stats.lastError.statusCode, 302);
    assert.ok(Date.now() - Date.parse(stats.lastError.at) < 60_000);
    assert.equal(stats.backlog, 3, 'the three failed pings wait for their retry');
    assert.ok(stats.failingSince);

    // The attempts themselves are not read: without them the stats do not change.
    await t.runtime.db
      .deleteFrom('webhook_attempts')
      .where('delivery_id', 'in', (eb) =>
        eb.selectFrom('webhook_deliveries').select('id').where('endpoint_id', '=', endpoint.id),
      )
      .execute();
    assert.deepEqual(await statsOf(sk, endpoint.id), stats);

    // Hours outside a window are left out of it; rollups past 30 days are deleted.
    const rollup = (hoursAgo: number, outcome: string, latencyBucket: number, attempts: number) => ({
      endpoint_id: endpoint.id,
      hour: sql<Date>`date_trunc('hour', now() - make_interval(hours => ${hoursAgo}), 'UTC')`,
      outcome,
      latency_bucket: latencyBucket,
      attempts,
      last_error: null,
      last_error_at: null,
      last_status_code: null,
    });
    await t.runtime.db
      .insertInto('webhook_attempt_rollups')
      .values([rollup(72, 'TIMEOUT', 22, 10), rollup(240, 'SUCCEEDED', 3, 100), rollup(31 * 24, 'SUCCEEDED', 3, 5)])
      .execute();
    const wider = await statsOf(sk, endpoint.id);
    assert.deepEqual(wider.last24h, stats.last24h);
    assert.equal(wider.last7d.attempts, 19);
    assert.equal(wider.last7d.byOutcome.TIMEOUT, 10);
    assert.equal(wider.last7d.successRate, 0.3158);
    assert.ok((await deleteOldRollups(t.runtime.db, RETENTION_BATCHES)).deleted >= 1);
    const kept = await t.runtime.db
      .selectFrom('webhook_attempt_rollups')
      .select('attempts')
      .where('endpoint_id', '=', endpoint.id)
      .where('hour', '<', sql<Date>`now() - interval '9 days'`)
      .execute();
    assert.deepEqual(
      kept.map((row) => row.attempts),
      [100],
    );
  });

  test('errors: unknown or foreign endpoint, scope and key kind', async () => {
    const business = await t.createBusiness();
    const sk = business.keys.secretTest;
    const endpoint = await hooks.createEndpoint(sk, { url: 'https://93.184.216.34/hook', events: ['payment.created'] });
    const other = await t.createBusiness({ name: 'Other' });
    const get = (key: string | undefined, id = endpoint.id) =>
      t.request('GET', `${ENDPOINTS}/${id}/stats`, key === undefined ? {} : { key });
    expectError(await get(other.keys.secretTest), 404, 'ENDPOINT_NOT_FOUND');
    expectError(await get(sk, 'we_unknown'), 404, 'ENDPOINT_NOT_FOUND');
    expectError(await get(business.keys.secretLive), 403, 'SANDBOX_MISMATCH');
    expectError(await get(business.keys.publishableTest), 403, 'SECRET_KEY_REQUIRED');
    expectError(await get(undefined), 401, 'MISSING_CREDENTIALS');
    const writeOnly = await t.admin('POST', '/keys', {
      businessId: business.id,
      kind: 'secret',
      environment: 'test',
      scopes: ['webhooks:write'],
    });
    expectError(await get(writeOnly.body.data.key), 403, 'SCOPE_REQUIRED');
    expectStatus(await t.request('DELETE', `${ENDPOINTS}/${endpoint.id}`, { key: sk, idempotencyKey: true }), 200);
    expectError(await get(sk), 404, 'ENDPOINT_NOT_FOUND');
  });
});

describe('latency percentiles from buckets', () => {
  test('buckets and interpolation', () => {
    assert.equal(latencyBucket(0), 0);
    assert.equal(latencyBucket(4), 0);
    assert.equal(latencyBucket(5), 1);
    assert.equal(latencyBucket(29_999), LATENCY_BUCKETS_MS.length - 1);
    assert.equal(latencyBucket(30_000), LATENCY_BUCKETS_MS.length);
    const counts = new Array<number>(LATENCY_BUCKETS_MS.length + 1).fill(0);
    counts[latencyBucket(60)] = 90; // [50, 75)
    counts[latencyBucket(1200)] = 10; // [1000, 1500)
    assert.equal(percentile(counts, 0.5), 50 + Math.round((25 * 50) / 90));
    assert.equal(percentile(counts, 0.95), 1250);
    const open = new Array<number>(LATENCY_BUCKETS_MS.length + 1).fill(0);
    open[LATENCY_BUCKETS_MS.length] = 3;
    assert.equal(percentile(open, 0.95), 30_000, 'the open bucket reports its lower bound');
  });
});
