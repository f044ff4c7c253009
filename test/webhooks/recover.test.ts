import assert from 'node:assert/strict';
import { afterAll, beforeAll, beforeEach, describe, test } from 'vitest';
import pino from 'pino';
import { startWorker, type Worker } from '../../src/worker/worker.js';
import { expectError, expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { createIntent } from '../intents/support.js';
import { checkBulkRecover } from './recover-bulk.js';
import { ENDPOINTS, webhookHelpers } from './support.js';

const MINUTE = 60_000;
/** The recover limit in this file (the API's is 10,000, run at full size in the slow tier). */
const BATCH = 20;

describe('recover a window of failed deliveries (issue 17, item 2)', () => {
  let t: TestApp;
  let worker: Worker;
  let business: TestBusiness;
  let sk: string;
  let hooks: ReturnType<typeof webhookHelpers>;
  beforeAll(async () => {
    t = await startTestApp({
      config: { WEBHOOK_ALLOW_PRIVATE: 'true', RATE_LIMIT_TEST_PER_MINUTE: '100000' },
      configOverrides: { webhookRecoverBatch: BATCH },
    });
    hooks = webhookHelpers(t);
    worker = startWorker(t.runtime, pino({ level: 'silent' }), [], 60_000);
  });
  beforeEach(async () => {
    business = await t.createBusiness();
    sk = business.keys.secretTest;
  });
  afterAll(async () => {
    await worker.stop();
    await hooks.closeAll();
    await t.close();
  });

  const recover = (endpointId: string, body: unknown, options: { key?: string; idempotencyKey?: string | true } = {}) =>
    t.request('POST', `${ENDPOINTS}/${endpointId}/recover`, {
      key: options.key ?? sk,
      idempotencyKey: options.idempotencyKey ?? true,
      body,
    });
  const ago = (ms: number) => new Date(Date.now() - ms).toISOString();

  /**
   * An endpoint with `states.length` delivered events, then set (as a fixture) to the given
   * states, created the given minutes ago, oldest first.
   */
  async function endpointWithHistory(
    states: { status: 'DEAD' | 'SUCCEEDED'; reason?: 'MAX_ATTEMPTS' | 'ENDPOINT_DISABLED'; minutesAgo: number }[],
  ) {
    const { receiver, endpoint } = await hooks.receiverWithEndpoint(sk, ['payment.created']);
    for (let i = 0; i < states.length; i++) await createIntent(t, sk, { amount: 100 + i });
    await receiver.waitFor(states.length);
    const rows = await hooks.waitFor(
      () => hooks.deliveriesOfEndpoint(endpoint.id),
      (found) => found.length === states.length && found.every((d) => d.status === 'SUCCEEDED'),
      'deliveries settled',
    );
    for (const [i, row] of rows.entries()) {
      const state = states[i]!;
      await t.runtime.db
        .updateTable('webhook_deliveries')
        .set({
          status: state.status,
          dead_reason: state.status === 'DEAD' ? (state.reason ?? 'MAX_ATTEMPTS') : null,
          attempt_count: state.status === 'DEAD' && state.reason !== 'ENDPOINT_DISABLED' ? 8 : 1,
          created_at: new Date(Date.now() - state.minutesAgo * MINUTE),
        })
        .where('id', '=', row.id)
        .execute();
    }
    receiver.requests.length = 0;
    return { receiver, endpoint, ids: rows.map((row) => row.id) };
  }

  test('DEAD deliveries of the window, whatever their reason, go out again, once each, on a fresh schedule', async () => {
    const { receiver, endpoint, ids } = await endpointWithHistory([
      { status: 'DEAD', reason: 'ENDPOINT_DISABLED', minutesAgo: 180 },
      { status: 'DEAD', reason: 'ENDPOINT_DISABLED', minutesAgo: 120 },
      { status: 'DEAD', minutesAgo: 90 },
      { status: 'SUCCEEDED', minutesAgo: 60 },
      { status: 'DEAD', minutesAgo: 30 },
    ]);
    const idempotencyKey = `recover-${Date.now()}`;
    const window = { since: ago(150 * MINUTE), until: ago(45 * MINUTE) };
    const response = await recover(endpoint.id, window, { idempotencyKey });
    expectStatus(response, 200);
    assert.deepEqual(Object.keys(response.body.data).sort(), [
      'endpointId',
      'recovered',
      'remaining',
      'since',
      'until',
    ]);
    assert.equal(response.body.data.endpointId, endpoint.id);
    assert.equal(response.body.data.recovered, 2);
    assert.equal(response.body.data.remaining, 0);
    await receiver.waitFor(2);
    assert.deepEqual(receiver.requests.map((r) => r.headers['x-commerce-delivery']).sort(), [ids[1], ids[2]].sort());
    for (const id of [ids[1]!, ids[2]!]) {
      const delivery = await hooks.waitForDelivery(sk, id, (d) => d.status === 'SUCCEEDED');
      assert.equal(delivery.attemptCount, 1, 'a fresh schedule');
      assert.equal(delivery.attempts.length, 2, 'the log keeps the earlier attempt');
    }

    // The same key replays the answer; a new key finds nothing left in that window.
    const replay = await recover(endpoint.id, window, { idempotencyKey });
    expectStatus(replay, 200);
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(replay.body.data, response.body.data);
    const again = await recover(endpoint.id, window);
    assert.equal(again.body.data.recovered, 0);

    // Without `until`: up to now. The delivery that had succeeded is not sent again.
    const rest = await recover(endpoint.id, { since: ago(240 * MINUTE) });
    expectStatus(rest, 200);
    assert.equal(rest.body.data.recovered, 2);
    assert.ok(Math.abs(Date.parse(rest.body.data.until) - Date.now()) < MINUTE);
    await receiver.waitFor(4);
    assert.deepEqual(
      receiver.requests
        .slice(2)
        .map((r) => r.headers['x-commerce-delivery'])
        .sort(),
      [ids[0], ids[4]].sort(),
    );
  });

  test('two recovers at once queue each delivery once', async () => {
    const { receiver, endpoint, ids } = await endpointWithHistory(
      Array.from({ length: 6 }, (_, i) => ({ status: 'DEAD' as const, minutesAgo: 10 + i })),
    );
    const before = await t.runtime.db
      .selectFrom('webhook_deliveries')
      .select(['id', 'attempts_total'])
      .where('id', 'in', ids)
      .execute();
    const [a, b] = await Promise.all([
      recover(endpoint.id, { since: ago(60 * MINUTE) }),
      recover(endpoint.id, { since: ago(60 * MINUTE) }),
    ]);
    expectStatus(a, 200);
    expectStatus(b, 200);
    assert.equal(a.body.data.recovered + b.body.data.recovered, 6);
    assert.deepEqual([a.body.data.remaining, b.body.data.remaining], [0, 0]);
    await receiver.waitFor(6);
    for (const id of ids) await hooks.waitForDelivery(sk, id, (d) => d.status === 'SUCCEEDED');
    const afterwards = await t.runtime.db
      .selectFrom('webhook_deliveries')
      .select(['id', 'attempts_total'])
      .where('id', 'in', ids)
      .execute();
    for (const row of afterwards) {
      const previous = before.find((r) => r.id === row.id)!;
      assert.equal(row.attempts_total, previous.attempts_total + 1, `${row.id} was attempted once more`);
    }
    assert.equal(new Set(receiver.requests.map((r) => r.headers['x-commerce-delivery'])).size, 6);
    assert.equal(receiver.requests.length, 6);
  });

  test('at most a batch per call, the rest counted; a rate-limited endpoint gets them spread at its rate', async () => {
    // The API's 10,000 narrowed to a few dozen rows: the same checks (the full size: recover-at-scale.test.ts).
    await checkBulkRecover(t, business, BATCH);
  });

  test('errors: unknown or foreign endpoint, disabled endpoint, bad window, missing key, scope, key kind', async () => {
    const { endpoint } = await hooks.receiverWithEndpoint(sk, ['payment.created']);
    const since = ago(60 * MINUTE);
    const other = await t.createBusiness({ name: 'Other' });
    expectError(await recover(endpoint.id, { since }, { key: other.keys.secretTest }), 404, 'ENDPOINT_NOT_FOUND');
    expectError(await recover('we_unknown', { since }), 404, 'ENDPOINT_NOT_FOUND');
    for (const body of [
      {},
      { since: 'yesterday' },
      { since: '2026-02-30' },
      { since, until: ago(120 * MINUTE) },
      { since, extra: true },
    ]) {
      expectError(await recover(endpoint.id, body), 400, 'VALIDATION_ERROR');
    }
    const plainDays = await recover(endpoint.id, { since: '2026-01-01', until: '2026-01-01' });
    expectStatus(plainDays, 200);
    assert.equal(plainDays.body.data.since, '2026-01-01T00:00:00.000Z');
    assert.equal(plainDays.body.data.until, '2026-01-01T23:59:59.999Z');
    expectError(
      await t.request('POST', `${ENDPOINTS}/${endpoint.id}/recover`, { key: sk, body: { since } }),
      400,
      'IDEMPOTENCY_KEY_REQUIRED',
    );
    const readOnly = await t.admin('POST', '/keys', {
      businessId: business.id,
      kind: 'secret',
      environment: 'test',
      scopes: ['webhooks:read'],
    });
    expectStatus(readOnly, 201);
    expectError(await recover(endpoint.id, { since }, { key: readOnly.body.data.key }), 403, 'SCOPE_REQUIRED');
    expectError(
      await recover(endpoint.id, { since }, { key: business.keys.publishableTest }),
      403,
      'SECRET_KEY_REQUIRED',
    );
    expectError(
      await t.request('POST', `${ENDPOINTS}/${endpoint.id}/recover`, { body: { since }, idempotencyKey: true }),
      401,
      'MISSING_CREDENTIALS',
    );

    expectStatus(
      await t.request('PATCH', `${ENDPOINTS}/${endpoint.id}`, {
        key: sk,
        idempotencyKey: true,
        body: { active: false },
      }),
      200,
    );
    expectError(await recover(endpoint.id, { since }), 409, 'ENDPOINT_INACTIVE');
  });
});
