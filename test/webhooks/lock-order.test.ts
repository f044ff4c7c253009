import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { sql } from 'kysely';
import pino from 'pino';
import { startWorker, type Worker } from '../../src/worker/worker.js';
import { testDatabaseKind } from '../support/database.js';
import { expectStatus, startTestApp, waitUntil, type TestApp } from '../support/harness.js';
import { createIntent } from '../intents/support.js';
import { ENDPOINTS, webhookHelpers } from './support.js';

const ROUNDS = 6;
const IN_FLIGHT = 16;

/**
 * Writes of several deliveries at once (a batch of outcomes, the end of a deleted endpoint's
 * backlog, the lease heartbeat) race here. Each must wait for the other or skip, never deadlock:
 * a deadlock fails a disable or a delete with a 500, and the worker only hides it by writing its
 * outcomes again one by one, so PostgreSQL's own count is what the test reads.
 */
describe.skipIf(testDatabaseKind !== 'postgres' ? 'transactions side by side need PostgreSQL' : false)(
  'racing writes of many deliveries never deadlock',
  () => {
    let t: TestApp;
    let worker: Worker;
    let hooks: ReturnType<typeof webhookHelpers>;
    beforeAll(async () => {
      t = await startTestApp({ config: { WEBHOOK_ALLOW_PRIVATE: 'true', RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
      hooks = webhookHelpers(t);
      // Short leases: the heartbeat renews them every 500 ms, in the middle of the races.
      worker = startWorker(t.runtime, pino({ level: 'silent' }), [], 60_000, {
        perEndpoint: IN_FLIGHT,
        leaseSeconds: 2,
      });
    });
    afterAll(async () => {
      await worker.stop();
      await hooks.closeAll();
      await t.close();
    });

    const deadlocks = async () =>
      (
        await sql<{ n: number }>`
          SELECT deadlocks::int AS n FROM pg_stat_database WHERE datname = current_database()`.execute(t.runtime.db)
      ).rows[0]!.n;

    test(`an endpoint deleted just as ${IN_FLIGHT} answers come back: each delivery ends once`, async () => {
      const before = await deadlocks();
      for (let round = 0; round < ROUNDS; round++) {
        const business = await t.createBusiness();
        const sk = business.keys.secretTest;
        const { receiver, endpoint } = await hooks.receiverWithEndpoint(sk, ['payment.created']);
        let answer!: () => void;
        const answered = new Promise<void>((resolve) => (answer = resolve));
        receiver.answer = () => ({ status: 200, after: answered });
        for (let i = 0; i < IN_FLIGHT; i++) await createIntent(t, sk, { amount: 100 + i });
        await receiver.waitFor(IN_FLIGHT);

        const deleting = t.request('DELETE', `${ENDPOINTS}/${endpoint.id}`, { key: sk, idempotencyKey: true });
        answer();
        expectStatus(await deleting, 200);
        const ended = await waitUntil(async () => {
          const rows = await hooks.deliveriesOfEndpoint(endpoint.id);
          return rows.every((d) => d.status !== 'PENDING' && d.locked_by === null) ? rows : undefined;
        }, 'every delivery ended');
        assert.equal(ended.length, IN_FLIGHT);
        for (const delivery of ended) {
          // Answered before the delete: SUCCEEDED; after it: DEAD, and the late answer did not
          // write over it.
          assert.ok(['SUCCEEDED', 'DEAD'].includes(delivery.status), delivery.status);
          assert.equal(delivery.last_error === 'endpoint deleted', delivery.status === 'DEAD');
        }
      }
      assert.equal(await deadlocks(), before, 'no deadlock');
    });

    test('the lease heartbeat renews the rest when one held delivery is locked, without waiting for it', async () => {
      const business = await t.createBusiness();
      const sk = business.keys.secretTest;
      const { receiver, endpoint } = await hooks.receiverWithEndpoint(sk, ['payment.created']);
      let answer!: () => void;
      const answered = new Promise<void>((resolve) => (answer = resolve));
      receiver.answer = () => ({ status: 200, after: answered });
      await createIntent(t, sk, { amount: 100 });
      await createIntent(t, sk, { amount: 101 });
      await receiver.waitFor(2);
      const [locked, other] = await hooks.deliveriesOfEndpoint(endpoint.id);
      await t.runtime.db.transaction().execute(async (trx) => {
        // As a batch of outcomes or the end of the endpoint's backlog holds it.
        await sql`SELECT id FROM webhook_deliveries WHERE id = ${locked!.id} FOR NO KEY UPDATE`.execute(trx);
        await waitUntil(async () => {
          const row = await t.runtime.db
            .selectFrom('webhook_deliveries')
            .select('locked_until')
            .where('id', '=', other!.id)
            .executeTakeFirstOrThrow();
          return row.locked_until!.getTime() > other!.locked_until!.getTime();
        }, 'the other lease renewed while one delivery is locked');
      });
      answer();
      await waitUntil(async () => {
        const rows = await hooks.deliveriesOfEndpoint(endpoint.id);
        return rows.every((d) => d.status === 'SUCCEEDED');
      }, 'both delivered');
    });
  },
);
