import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { sql } from 'kysely';
import pino from 'pino';
import { LISTENER_APPLICATION_NAME } from '../../src/db/connect.js';
import {
  RETRY_GAPS_SECONDS,
  RETRY_JITTER,
  retryDelaySeconds,
} from '../../src/modules/webhooks/delivery/retry-schedule.js';
import { startWorker, type Worker } from '../../src/worker/worker.js';
import { testDatabaseKind } from '../support/database.js';
import { startTestApp, waitUntil, type TestApp } from '../support/harness.js';
import { createIntent } from '../intents/support.js';
import { webhookHelpers } from './support.js';

const silent = pino({ level: 'silent' });
/** Far longer than any wait below: a delivery that arrives was claimed because of its commit. */
const NO_POLL = { pollMs: 600_000 };

describe('the worker wakes on commit (issue 14, item 3)', () => {
  let t: TestApp;
  let hooks: ReturnType<typeof webhookHelpers>;
  const workers: Worker[] = [];
  beforeAll(async () => {
    t = await startTestApp({ config: { WEBHOOK_ALLOW_PRIVATE: 'true', RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    hooks = webhookHelpers(t);
  });
  afterAll(async () => {
    await Promise.all(workers.map((worker) => worker.stop()));
    await hooks.closeAll();
    await t.close();
  });

  test('a committed delivery is attempted without waiting for the fallback poll', async () => {
    const business = await t.createBusiness();
    const sk = business.keys.secretTest;
    const { receiver } = await hooks.receiverWithEndpoint(sk, ['payment.created']);
    const worker = startWorker(t.runtime, silent, [], 60_000, NO_POLL);
    workers.push(worker);
    // Each commit after the worker started is only seen through its notification.
    for (let i = 1; i <= 3; i++) {
      await createIntent(t, sk, { amount: 100 + i });
      await receiver.waitFor(i, 15_000);
    }
    // A manual retry makes a delivery due again and wakes the worker too.
    const [first] = await hooks.deliveriesOfEndpoint(
      (
        await t.runtime.db
          .selectFrom('webhook_endpoints')
          .select('id')
          .where('business_id', '=', business.id)
          .executeTakeFirstOrThrow()
      ).id,
    );
    await hooks.waitFor(
      () => hooks.getDelivery(sk, first!.id),
      (delivery) => delivery.status === 'SUCCEEDED',
      'the first delivery to succeed',
    );
    const retried = await t.request('POST', `/api/v1/dev/webhooks/events/${first!.id}/retry`, {
      key: sk,
      idempotencyKey: true,
    });
    assert.ok(retried.status === 200 || retried.status === 202, `retry answered ${retried.status}`);
    await receiver.waitFor(4, 15_000);
    await worker.stop();
    workers.splice(workers.indexOf(worker), 1);
  });

  test.skipIf(testDatabaseKind !== 'postgres' ? 'LISTEN over a connection of its own is PostgreSQL only' : false)(
    'PostgreSQL: a lost listening connection is opened again, and what committed meanwhile is claimed',
    async () => {
      const business = await t.createBusiness();
      const sk = business.keys.secretTest;
      const { receiver } = await hooks.receiverWithEndpoint(sk, ['payment.created']);
      const worker = startWorker(t.runtime, silent, [], 60_000, NO_POLL);
      workers.push(worker);
      const listener = () =>
        sql<{ pid: number }>`
          SELECT pid FROM pg_stat_activity
          WHERE application_name = ${LISTENER_APPLICATION_NAME} AND datname = current_database()`.execute(t.runtime.db);
      const [before] = (await waitUntil(async () => {
        const rows = (await listener()).rows;
        return rows.length === 1 ? rows : undefined;
      }, 'the worker to listen'))!;
      await sql`SELECT pg_terminate_backend(${before!.pid})`.execute(t.runtime.db);
      // Committed while the worker may not be listening: the reconnect catches up on it.
      await createIntent(t, sk, { amount: 100 });
      await receiver.waitFor(1, 15_000);
      await waitUntil(async () => {
        const rows = (await listener()).rows;
        return rows.length === 1 && rows[0]!.pid !== before!.pid ? rows : undefined;
      }, 'a new listening connection');
      await createIntent(t, sk, { amount: 101 });
      await receiver.waitFor(2, 15_000);
      await worker.stop();
      workers.splice(workers.indexOf(worker), 1);
    },
  );

  test('two workers claiming in batches keep at most 4 attempts in flight to an endpoint, each sent once', async () => {
    const business = await t.createBusiness();
    const sk = business.keys.secretTest;
    const { receiver, endpoint } = await hooks.receiverWithEndpoint(sk, ['payment.created']);
    const other = await hooks.receiverWithEndpoint(sk, ['payment.created']);
    let maxInFlight = 0;
    receiver.answer = () => {
      maxInFlight = Math.max(maxInFlight, receiver.inFlight());
      return { status: 200, delayMs: 15 };
    };
    const count = 40;
    // The backlog is written before the workers start, so both find it at once.
    for (let i = 0; i < count; i++) await createIntent(t, sk, { amount: 100 + i });
    const pair = [startWorker(t.runtime, silent, [], 60_000), startWorker(t.runtime, silent, [], 60_000)];
    workers.push(...pair);
    await receiver.waitFor(count, 30_000);
    await other.receiver.waitFor(count, 30_000);
    await hooks.waitFor(
      () => hooks.deliveriesOfEndpoint(endpoint.id),
      (rows) => rows.every((row) => row.status === 'SUCCEEDED'),
      'every delivery to succeed',
    );
    assert.ok(maxInFlight <= 4, `${maxInFlight} attempts at once to one endpoint`);
    const ids = receiver.requests.map((request) => String(request.headers['x-commerce-delivery']));
    assert.equal(ids.length, count);
    assert.equal(new Set(ids).size, count, 'no delivery was sent twice');
    const rows = await hooks.deliveriesOfEndpoint(endpoint.id);
    assert.ok(rows.every((row) => row.attempt_count === 1));
    for (const worker of pair) {
      await worker.stop();
      workers.splice(workers.indexOf(worker), 1);
    }
  });

  test('a stopping worker gives back what it claimed ahead: only what was sent counts an attempt', async () => {
    const business = await t.createBusiness();
    const sk = business.keys.secretTest;
    const { receiver, endpoint } = await hooks.receiverWithEndpoint(sk, ['payment.created']);
    receiver.answer = () => ({ status: 200, delayMs: 10 });
    for (let i = 0; i < 40; i++) await createIntent(t, sk, { amount: 100 + i });
    const worker = startWorker(t.runtime, silent, [], 60_000, NO_POLL);
    await receiver.waitFor(12, 15_000);
    await worker.stop();
    const sent = new Set(receiver.requests.map((request) => String(request.headers['x-commerce-delivery'])));
    const rows = await hooks.deliveriesOfEndpoint(endpoint.id);
    const attempts = await t.runtime.db
      .selectFrom('webhook_attempts')
      .select('delivery_id')
      .where(
        'delivery_id',
        'in',
        rows.map((row) => row.id),
      )
      .execute();
    assert.equal(attempts.length, sent.size, 'one attempt logged per request sent');
    for (const row of rows) {
      assert.equal(row.locked_by, null);
      if (sent.has(row.id)) {
        assert.equal(row.status, 'SUCCEEDED');
        assert.equal(row.attempt_count, 1);
      } else {
        assert.equal(row.status, 'PENDING');
        assert.equal(row.attempt_count, 0, 'a delivery claimed but not sent has no attempt counted');
      }
    }
    assert.ok(sent.size < 40, 'the worker stopped with deliveries left');
  });

  test('retry delays: the gap give or take 10 %, not always the gap itself', async () => {
    for (const [index, gap] of RETRY_GAPS_SECONDS.entries()) {
      const draws = Array.from({ length: 2000 }, () => retryDelaySeconds(index + 1, 1));
      assert.ok(Math.min(...draws) >= gap * (1 - RETRY_JITTER));
      assert.ok(Math.max(...draws) <= gap * (1 + RETRY_JITTER));
      assert.ok(Math.min(...draws) < gap * 0.95 && Math.max(...draws) > gap * 1.05, `spread around ${gap} s`);
    }
    assert.equal(
      retryDelaySeconds(1, 0.001, () => 0),
      30 * 0.001 * 0.9,
    );
    assert.equal(
      retryDelaySeconds(1, 1, () => 1),
      30 * 1.1,
    );

    // As scheduled by the worker: each failed first attempt is due again 27 to 33 s later.
    const business = await t.createBusiness();
    const sk = business.keys.secretTest;
    const endpoints: string[] = [];
    for (let i = 0; i < 5; i++) {
      const made = await hooks.receiverWithEndpoint(sk, ['payment.created']);
      made.receiver.answer = () => ({ status: 503 });
      endpoints.push(made.endpoint.id);
    }
    for (let i = 0; i < 6; i++) await createIntent(t, sk, { amount: 100 + i });
    const worker = startWorker(t.runtime, silent, [], 60_000);
    workers.push(worker);
    const failed = await hooks.waitFor(
      () => t.runtime.db.selectFrom('webhook_deliveries').selectAll().where('endpoint_id', 'in', endpoints).execute(),
      (rows) => rows.length === 30 && rows.every((row) => row.attempt_count === 1 && row.locked_by === null),
      'every first attempt to fail',
    );
    const waits = failed.map((row) => (row.next_attempt_at.getTime() - row.updated_at.getTime()) / 1000);
    for (const wait of waits) assert.ok(wait >= 27 && wait <= 33, `due again after ${wait} s`);
    assert.ok(new Set(waits).size > 1, 'the waits differ');
    await worker.stop();
    workers.splice(workers.indexOf(worker), 1);
  });
});
