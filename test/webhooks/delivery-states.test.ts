import assert from 'node:assert/strict';
import { afterAll, beforeAll, beforeEach, describe, test } from 'vitest';
import pino from 'pino';
import { listMigrations } from '../../src/db/migrate.js';
import { startWorker, type Worker } from '../../src/worker/worker.js';
import { expectError, expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { createIntent } from '../intents/support.js';
import { eventIdOf } from '../support/read-api.js';
import { DELIVERIES, ENDPOINTS, webhookHelpers } from './support.js';

const HOUR = 3_600_000;

/**
 * Issue 47 items 8 and 9: the delivery states of decisions.md ("Events and deliveries"). PENDING
 * has had no attempt, FAILED waits for its scheduled retry, SUCCEEDED, DEAD gets no further
 * attempt and says why; retry and recover bring DEAD ones back; a disabled endpoint gets nothing,
 * a test ping included. The retry schedule runs at its real pace (30 s after a first failure), so
 * a FAILED delivery stays FAILED while a test looks at it; a retry of a waiting delivery makes
 * its next attempt due at once, which is how a test walks a delivery through its 8 attempts.
 */
describe('delivery states, with reasons; a disabled endpoint gets no test ping (issue 47 items 8 and 9)', () => {
  let t: TestApp;
  let worker: Worker;
  let business: TestBusiness;
  let sk: string;
  let hooks: ReturnType<typeof webhookHelpers>;
  beforeAll(async () => {
    t = await startTestApp({ config: { WEBHOOK_ALLOW_PRIVATE: 'true', RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    hooks = webhookHelpers(t);
    worker = startWorker(t.runtime, pino({ level: 'silent' }), [], 60_000);
  });
  beforeEach(async () => {
    business = await t.createBusiness();
    sk = business.keys.secretTest;
  });
  afterAll(async () => {
    await worker?.stop();
    await hooks?.closeAll();
    await t?.close();
  });

  const patch = (endpointId: string, body: Record<string, unknown>) =>
    t.request('PATCH', `${ENDPOINTS}/${endpointId}`, { key: sk, idempotencyKey: true, body });
  const retry = (deliveryId: string) =>
    t.request('POST', `${DELIVERIES}/${deliveryId}/retry`, { key: sk, idempotencyKey: true });
  const listed = async (query: string) => {
    const response = await t.request('GET', `${DELIVERIES}?${query}`, { key: sk });
    expectStatus(response, 200);
    return response.body.data as { items: any[]; total: number };
  };

  /** An endpoint whose receiver answers 500, and its first delivery once that attempt failed. */
  async function failedDelivery() {
    const { receiver, endpoint } = await hooks.receiverWithEndpoint(sk, ['payment.created']);
    receiver.answer = () => ({ status: 500, body: 'down' });
    await createIntent(t, sk, { amount: 4700 });
    const [written] = await hooks.waitFor(
      async () => (await listed(`endpointId=${endpoint.id}`)).items,
      (items) => items.length === 1,
      'the delivery written',
    );
    const failed = await hooks.waitForDelivery(sk, written.id, (d) => d.status !== 'PENDING');
    return { receiver, endpoint, delivery: failed };
  }

  test('item 8: a test ping to a disabled endpoint is 409 ENDPOINT_INACTIVE and sends nothing', async () => {
    const { receiver, endpoint } = await hooks.receiverWithEndpoint(sk, ['payment.created']);
    expectStatus(await patch(endpoint.id, { active: false }), 200);
    expectError(
      await t.request('POST', `${ENDPOINTS}/${endpoint.id}/test`, { key: sk, idempotencyKey: true }),
      409,
      'ENDPOINT_INACTIVE',
    );
    // Nothing was written: no ping event, no delivery.
    const events = await t.request('GET', '/api/v1/dev/events?type=ping', { key: sk });
    expectStatus(events, 200);
    assert.equal(events.body.data.total, 0);
    assert.equal((await listed(`endpointId=${endpoint.id}`)).total, 0);

    // Active again, the ping is a new delivery, PENDING (no attempt yet), then delivered.
    expectStatus(await patch(endpoint.id, { active: true }), 200);
    const pinged = await t.request('POST', `${ENDPOINTS}/${endpoint.id}/test`, { key: sk, idempotencyKey: true });
    expectStatus(pinged, 200);
    assert.equal(pinged.body.data.status, 'PENDING');
    assert.equal(pinged.body.data.attemptCount, 0);
    assert.equal(pinged.body.data.deadReason, null);
    assert.ok(pinged.body.data.nextAttemptAt);
    await hooks.waitForDelivery(sk, pinged.body.data.id, (d) => d.status === 'SUCCEEDED');
    assert.equal(receiver.requests.length, 1);
  });

  test('item 9: FAILED while its retry is scheduled, DEAD (MAX_ATTEMPTS) after 8, and a retry starts afresh', async () => {
    const { receiver, delivery } = await failedDelivery();
    assert.equal(delivery.status, 'FAILED');
    assert.equal(delivery.attemptCount, 1);
    assert.equal(delivery.deadReason, null);
    assert.equal(delivery.completedAt, null);
    assert.ok(Date.parse(delivery.nextAttemptAt) > Date.now() + 20_000, 'the retry 30 s (±10 %) after the failure');
    assert.deepEqual(
      (await listed('status=FAILED')).items.map((d) => d.id),
      [delivery.id],
    );
    assert.equal((await listed('status=PENDING')).total, 0);

    // A retry of a waiting delivery makes its next attempt due now, on the same schedule.
    for (let attempt = 2; attempt <= 8; attempt++) {
      const hastened = await retry(delivery.id);
      expectStatus(hastened, 200);
      assert.equal(hastened.body.data.status, 'FAILED');
      // Its outcome written (an attempt is counted when claimed, its answer recorded after).
      await hooks.waitForDelivery(
        sk,
        delivery.id,
        (d) => d.attempts.at(-1)?.attempt === attempt && d.attempts.at(-1).statusCode === 500,
      );
    }
    const dead = await hooks.waitForDelivery(sk, delivery.id, (d) => d.status === 'DEAD');
    assert.equal(dead.deadReason, 'MAX_ATTEMPTS');
    assert.equal(dead.attemptCount, 8);
    assert.equal(dead.nextAttemptAt, null);
    assert.ok(dead.completedAt);
    assert.equal(receiver.requests.length, 8);
    assert.deepEqual(
      (await listed('status=DEAD')).items.map((d) => [d.id, d.deadReason]),
      [[delivery.id, 'MAX_ATTEMPTS']],
    );

    // A DEAD delivery retried starts a fresh 8-attempt schedule: PENDING, no reason.
    receiver.answer = () => ({ status: 200, body: 'ok' });
    const retried = await retry(delivery.id);
    expectStatus(retried, 200);
    assert.equal(retried.body.data.status, 'PENDING');
    assert.equal(retried.body.data.attemptCount, 0);
    assert.equal(retried.body.data.deadReason, null);
    assert.equal(retried.body.data.completedAt, null);
    const done = await hooks.waitForDelivery(sk, delivery.id, (d) => d.status === 'SUCCEEDED');
    assert.equal(done.attemptCount, 1);
    assert.equal(done.deadReason, null);
    assert.equal(done.nextAttemptAt, null);
  });

  test('item 9: disabling an endpoint by hand ends its waiting deliveries DEAD (ENDPOINT_DISABLED); recover brings them back', async () => {
    const { receiver, endpoint, delivery } = await failedDelivery();
    assert.equal(delivery.status, 'FAILED');
    expectStatus(await patch(endpoint.id, { active: false }), 200);
    const stopped = await hooks.getDelivery(sk, delivery.id);
    assert.equal(stopped.status, 'DEAD');
    assert.equal(stopped.deadReason, 'ENDPOINT_DISABLED');
    assert.equal(stopped.nextAttemptAt, null);
    assert.ok(stopped.completedAt);
    assert.equal((await listed('status=FAILED')).total, 0);

    // No attempt can follow while the endpoint is off: a retry is refused as a test ping is.
    expectError(await retry(delivery.id), 409, 'ENDPOINT_INACTIVE');
    assert.equal((await hooks.getDelivery(sk, delivery.id)).status, 'DEAD');

    receiver.answer = () => ({ status: 200, body: 'ok' });
    expectStatus(await patch(endpoint.id, { active: true }), 200);
    assert.equal((await hooks.getDelivery(sk, delivery.id)).status, 'DEAD', 're-enabling alone sends nothing old');
    const recovered = await t.request('POST', `${ENDPOINTS}/${endpoint.id}/recover`, {
      key: sk,
      idempotencyKey: true,
      body: { since: new Date(Date.now() - HOUR).toISOString() },
    });
    expectStatus(recovered, 200);
    assert.equal(recovered.body.data.recovered, 1);
    const done = await hooks.waitForDelivery(sk, delivery.id, (d) => d.status === 'SUCCEEDED');
    assert.equal(done.deadReason, null);
    assert.equal(done.attemptCount, 1, 'a fresh schedule');
  });

  test('item 9: deleting an endpoint ends its waiting deliveries DEAD (ENDPOINT_DELETED), still in the log', async () => {
    const { endpoint, delivery } = await failedDelivery();
    const pending = await t.request('POST', `${ENDPOINTS}/${endpoint.id}/test`, { key: sk, idempotencyKey: true });
    expectStatus(pending, 200);
    expectStatus(await t.request('DELETE', `${ENDPOINTS}/${endpoint.id}`, { key: sk, idempotencyKey: true }), 200);
    for (const id of [delivery.id, pending.body.data.id as string]) {
      const ended = await hooks.getDelivery(sk, id);
      assert.equal(ended.status, 'DEAD');
      assert.equal(ended.deadReason, 'ENDPOINT_DELETED');
      assert.equal(ended.nextAttemptAt, null);
    }
    expectError(await retry(delivery.id), 404, 'ENDPOINT_NOT_FOUND');
  });

  test('the status filter takes the four states and nothing else', async () => {
    for (const status of ['PENDING', 'FAILED', 'SUCCEEDED', 'DEAD']) {
      expectStatus(await t.request('GET', `${DELIVERIES}?status=${status}`, { key: sk }), 200);
    }
    expectError(await t.request('GET', `${DELIVERIES}?status=RETRYING`, { key: sk }), 400, 'VALIDATION_ERROR');
  });
});

describe('migration 034 rewrites deliveries of the old states into the new ones', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ config: { WEBHOOK_ALLOW_PRIVATE: 'true', RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
  });
  afterAll(() => t?.close());

  /** The schema as it was before migration 034 (its exact inverse). */
  const BEFORE_034 = `
    ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_dead_has_reason;
    ALTER TABLE webhook_deliveries DROP COLUMN dead_reason;
    DROP INDEX webhook_deliveries_due_idx;
    CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'PENDING';
    DROP INDEX webhook_deliveries_endpoint_waiting_idx;
    CREATE INDEX webhook_deliveries_endpoint_pending_idx ON webhook_deliveries (endpoint_id, next_attempt_at)
      WHERE status = 'PENDING';
    DROP INDEX webhook_deliveries_endpoint_dead_idx;
    CREATE INDEX webhook_deliveries_endpoint_failed_idx ON webhook_deliveries (endpoint_id, created_at, id)
      WHERE status IN ('FAILED', 'DEAD');`;

  test('waiting after a failure: FAILED; ended by a disable, or waiting on a disabled endpoint: DEAD with the reason', async () => {
    const business = await t.createBusiness();
    const sk = business.keys.secretTest;
    // The event first, so the fan-out writes no delivery of its own to these endpoints.
    const intent = await createIntent(t, sk, { amount: 3400 });
    const eventId = await eventIdOf(t, sk, intent.referenceNumber);
    const endpointAt = async (path: string) => {
      const response = await t.request('POST', ENDPOINTS, {
        key: sk,
        idempotencyKey: true,
        body: { url: `http://127.0.0.1:9/${path}`, events: ['payment.created'] },
      });
      expectStatus(response, 201);
      return response.body.data.id as string;
    };
    const active = await endpointAt('active');
    const off = await endpointAt('off');
    const gone = await endpointAt('gone');
    const edit = (id: string, method: 'PATCH' | 'DELETE', body?: unknown) =>
      t.request(method, `${ENDPOINTS}/${id}`, { key: sk, idempotencyKey: true, ...(body ? { body } : {}) });
    expectStatus(await edit(off, 'PATCH', { active: false }), 200);
    expectStatus(await edit(gone, 'DELETE'), 200);

    const migration = listMigrations().find((m) => m.version.startsWith('034_'));
    assert.ok(migration);
    const database = t.testDatabase.database;
    await database.inScriptTransaction(async (run) => {
      await run(BEFORE_034);
    });

    // Rows as the code before 034 wrote them.
    const later = new Date(Date.now() + HOUR);
    const now = new Date();
    const old = [
      { name: 'new', endpoint: active, status: 'PENDING', attempts: 0 },
      { name: 'waiting for its retry', endpoint: active, status: 'PENDING', attempts: 3, code: 500 },
      { name: 'in its first attempt', endpoint: active, status: 'PENDING', attempts: 1, locked: true },
      { name: 'in its fifth attempt', endpoint: active, status: 'PENDING', attempts: 5, locked: true, code: 500 },
      { name: 'exhausted', endpoint: active, status: 'DEAD', attempts: 8, code: 500, error: 'HTTP 500' },
      { name: 'ended by an auto-disable', endpoint: active, status: 'FAILED', attempts: 2, error: 'endpoint disabled' },
      { name: 'succeeded', endpoint: active, status: 'SUCCEEDED', attempts: 1, code: 200 },
      { name: 'waiting on an endpoint off by hand', endpoint: off, status: 'PENDING', attempts: 2, code: 500 },
      { name: 'ended by the delete', endpoint: gone, status: 'DEAD', attempts: 0, error: 'endpoint deleted' },
      { name: 'exhausted, then deleted', endpoint: gone, status: 'DEAD', attempts: 8, error: 'HTTP 502' },
    ] as const;
    const ids = old.map((_, i) => `dlv_migration_${i}_${business.id.slice(-8)}`);
    await t.runtime.db
      .insertInto('webhook_deliveries')
      .values(
        old.map((row, i) => ({
          id: ids[i]!,
          event_id: eventId,
          endpoint_id: row.endpoint,
          business_id: business.id,
          environment: 'test' as const,
          event: 'payment.created',
          status: row.status,
          attempt_count: row.attempts,
          attempts_total: row.attempts,
          next_attempt_at: later,
          locked_by: 'locked' in row ? 'a-worker' : null,
          locked_until: 'locked' in row ? later : null,
          last_status_code: 'code' in row ? row.code : null,
          last_error: 'error' in row ? row.error : null,
          completed_at: row.status === 'PENDING' ? null : now,
          created_at: now,
          updated_at: now,
        })),
      )
      .execute();
    await database.inScriptTransaction(async (run) => {
      await run(migration.sql);
    });

    const expected: Record<(typeof old)[number]['name'], [string, string | null, boolean]> = {
      new: ['PENDING', null, true],
      'waiting for its retry': ['FAILED', null, true],
      'in its first attempt': ['PENDING', null, true],
      'in its fifth attempt': ['FAILED', null, true],
      exhausted: ['DEAD', 'MAX_ATTEMPTS', false],
      'ended by an auto-disable': ['DEAD', 'ENDPOINT_DISABLED', false],
      succeeded: ['SUCCEEDED', null, false],
      'waiting on an endpoint off by hand': ['DEAD', 'ENDPOINT_DISABLED', false],
      'ended by the delete': ['DEAD', 'ENDPOINT_DELETED', false],
      'exhausted, then deleted': ['DEAD', 'MAX_ATTEMPTS', false],
    };
    for (const [i, row] of old.entries()) {
      const response = await t.request('GET', `${DELIVERIES}/${ids[i]}`, { key: sk });
      expectStatus(response, 200);
      const d = response.body.data;
      assert.deepEqual([d.status, d.deadReason, d.nextAttemptAt !== null], expected[row.name], row.name);
      if (d.status === 'DEAD') assert.ok(d.completedAt, row.name);
    }
    // The list counts moved with the rows (the totals of an unfiltered list come from them).
    const totals: Record<string, number> = {};
    for (const status of ['PENDING', 'FAILED', 'SUCCEEDED', 'DEAD']) {
      const response = await t.request('GET', `${DELIVERIES}?status=${status}`, { key: sk });
      expectStatus(response, 200);
      totals[status] = response.body.data.total;
    }
    assert.deepEqual(totals, { PENDING: 2, FAILED: 2, SUCCEEDED: 1, DEAD: 5 });
  });
});
