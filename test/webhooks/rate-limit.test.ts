import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { sql } from 'kysely';
import pino from 'pino';
import { startWorker, type Worker } from '../../src/worker/worker.js';
import { expectError, expectStatus, startTestApp, type TestApp } from '../support/harness.js';
import { act, createIntent } from '../intents/support.js';
import { ENDPOINTS, webhookHelpers } from './support.js';

describe('per-endpoint maxPerSecond (issue 17, item 6)', () => {
  let t: TestApp;
  let workers: Worker[] = [];
  let hooks: ReturnType<typeof webhookHelpers>;
  beforeAll(async () => {
    t = await startTestApp({ config: { WEBHOOK_ALLOW_PRIVATE: 'true', RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    hooks = webhookHelpers(t);
  });
  afterAll(async () => {
    await Promise.all(workers.map((worker) => worker.stop()));
    await hooks.closeAll();
    await t.close();
  });

  test('set on create, changed or removed by PATCH, bounded 1..1000', async () => {
    const business = await t.createBusiness();
    const sk = business.keys.secretTest;
    const url = 'https://93.184.216.34/hook';
    const endpoint = await hooks.createEndpoint(sk, { url, events: ['payment.created'], maxPerSecond: 20 });
    assert.equal(endpoint.maxPerSecond, 20);
    const plain = await hooks.createEndpoint(sk, { url, events: ['payment.created'] });
    assert.equal(plain.maxPerSecond, null);
    for (const maxPerSecond of [null, 7]) {
      const patched = await t.request('PATCH', `${ENDPOINTS}/${endpoint.id}`, {
        key: sk,
        idempotencyKey: true,
        body: { maxPerSecond },
      });
      expectStatus(patched, 200);
      assert.equal(patched.body.data.maxPerSecond, maxPerSecond);
    }
    for (const maxPerSecond of [0, 1001, 2.5, '5', -1]) {
      expectError(
        await t.request('POST', ENDPOINTS, {
          key: sk,
          idempotencyKey: true,
          body: { url, events: ['payment.created'], maxPerSecond },
        }),
        400,
        'VALIDATION_ERROR',
      );
      expectError(
        await t.request('PATCH', `${ENDPOINTS}/${endpoint.id}`, {
          key: sk,
          idempotencyKey: true,
          body: { maxPerSecond },
        }),
        400,
        'VALIDATION_ERROR',
      );
    }
  });

  test('three workers share one budget per second; other endpoints are not held back', async () => {
    const business = await t.createBusiness();
    const sk = business.keys.secretTest;
    const limited = await hooks.receiverWithEndpoint(sk, ['payment.created'], { maxPerSecond: 4 });
    const free = await hooks.receiverWithEndpoint(sk, ['payment.cancelled']);
    const intents = [];
    for (let i = 0; i < 16; i++) intents.push(await createIntent(t, sk, { amount: 100 + i }));

    // Everything is due before the workers start: the free endpoint's five are claimed with the
    // limited one's first four, and go out at once, while the limited backlog takes four seconds.
    for (const intent of intents.slice(0, 5)) expectStatus(await act(t, sk, intent.referenceNumber, 'cancel'), 200);
    workers = Array.from({ length: 3 }, () => startWorker(t.runtime, pino({ level: 'silent' }), [], 60_000));
    await free.receiver.waitFor(5);
    await limited.receiver.waitFor(16, 20_000);
    const perSecond = await sql<{ second: Date; n: number }>`
      SELECT date_trunc('second', a.started_at) AS second, count(*)::int AS n
      FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
      WHERE d.endpoint_id = ${limited.endpoint.id}
      GROUP BY 1 ORDER BY 1`.execute(t.runtime.db);
    assert.equal(
      perSecond.rows.reduce((sum, row) => sum + row.n, 0),
      16,
    );
    for (const row of perSecond.rows) assert.ok(row.n <= 4, `${row.n} attempts started in ${row.second.toISOString()}`);
    assert.ok(perSecond.rows.length >= 4, 'sixteen attempts at four a second take four seconds at least');
    const lastStarted = await sql<{ endpoint_id: string; last: Date }>`
      SELECT d.endpoint_id, max(a.started_at) AS last
      FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
      WHERE d.endpoint_id IN (${limited.endpoint.id}, ${free.endpoint.id})
      GROUP BY 1`.execute(t.runtime.db);
    const last = new Map(lastStarted.rows.map((row) => [row.endpoint_id, new Date(row.last).getTime()]));
    assert.ok(
      last.get(free.endpoint.id)! < last.get(limited.endpoint.id)!,
      'the free endpoint got its events while the limited one still had a backlog',
    );
    const ids = limited.receiver.requests.map((request) => String(request.headers['x-commerce-delivery']));
    assert.equal(new Set(ids).size, 16, 'each delivery was sent once');
  });

  test('a limited endpoint with a backlog beyond the claim window does not hold back the others', async () => {
    const business = await t.createBusiness();
    const sk = business.keys.secretTest;
    const limited = await hooks.receiverWithEndpoint(sk, ['payment.created'], { maxPerSecond: 1 });
    const free = await hooks.receiverWithEndpoint(sk, ['payment.cancelled']);
    const intent = await createIntent(t, sk, { amount: 100 });
    await limited.receiver.waitFor(1);
    const [seed] = await hooks.deliveriesOfEndpoint(limited.endpoint.id);
    // 1,500 deliveries due now, more than the 1,000 due deliveries one claim looks at.
    await sql`
      INSERT INTO webhook_deliveries (id, event_id, endpoint_id, business_id, environment, event, status,
        next_attempt_at, created_at, updated_at)
      SELECT 'dlv_backlog_' || n, ${seed!.event_id}, ${limited.endpoint.id}, ${business.id}, 'test', 'payment.created',
        'PENDING', now() - interval '1 minute', now(), now()
      FROM generate_series(1, 1500) AS n`.execute(t.runtime.db);
    expectStatus(await act(t, sk, intent.referenceNumber, 'cancel'), 200);
    await free.receiver.waitFor(1);
    const waiting = await t.runtime.db
      .selectFrom('webhook_deliveries')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('endpoint_id', '=', limited.endpoint.id)
      .where('status', '=', 'PENDING')
      .executeTakeFirstOrThrow();
    assert.ok(Number(waiting.n) > 1400, `${waiting.n} still waiting at the limited endpoint`);
    expectStatus(
      await t.request('DELETE', `${ENDPOINTS}/${limited.endpoint.id}`, { key: sk, idempotencyKey: true }),
      200,
    );
  });
});
