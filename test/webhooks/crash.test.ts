import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, test } from 'vitest';
import pino from 'pino';
import { startWorker } from '../../src/worker/worker.js';
import { testDatabaseKind } from '../support/database.js';
import { ADMIN_TOKEN, expectStatus, startTestApp, waitUntil, type TestApp } from '../support/harness.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { createIntent } from '../intents/support.js';
import { nodeEntry } from '../support/node-entry.js';

const skip =
  testDatabaseKind !== 'postgres' ? 'needs PostgreSQL: a second process cannot open the PGlite database' : false;

describe.skipIf(skip)('a worker killed mid-delivery loses nothing', () => {
  let t: TestApp;
  let receiver: Receiver;
  beforeAll(async () => {
    t = await startTestApp({ config: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver.close();
    await t.close();
  });

  test('SIGKILL during an attempt: the lease lapses and another worker delivers it', async () => {
    const business = await t.createBusiness();
    const endpoint = await t.request('POST', '/api/v1/dev/webhooks/endpoints', {
      key: business.keys.secretTest,
      idempotencyKey: true,
      body: { url: receiver.url, events: ['payment.created'] },
    });
    expectStatus(endpoint, 201);
    receiver.answer = () => (receiver.requests.length === 1 ? 'hang' : { status: 200 });

    const child = spawn(process.execPath, [...nodeEntry('src/server.ts'), '--worker'], {
      env: {
        ...process.env,
        DATABASE_URL: t.testDatabase.url!,
        WEBHOOK_ALLOW_PRIVATE: 'true',
        ADMIN_TOKEN,
        LOG_LEVEL: 'silent',
        SEED_DEMO: 'false',
      },
      stdio: 'ignore',
    });
    try {
      const intent = await createIntent(t, business.keys.secretTest, { amount: 100 });
      const [first] = await receiver.waitFor(1, 60_000); // the child worker starts first
      child.kill('SIGKILL');
      await once(child, 'exit');
      const killedAt = Date.now();

      const held = await t.runtime.db
        .selectFrom('webhook_deliveries')
        .selectAll()
        .where('event_id', '=', JSON.parse(first!.body).id)
        .executeTakeFirstOrThrow();
      assert.equal(held.status, 'PENDING');
      assert.equal(held.attempt_count, 1);
      assert.ok(
        held.locked_until && held.locked_until.getTime() > Date.now() - 1000,
        'still leased to the dead worker',
      );

      const worker = startWorker(t.runtime, pino({ level: 'silent' }), [], 60_000);
      try {
        const [, second] = await receiver.waitFor(2, 30_000);
        assert.equal(second!.body, first!.body);
        assert.equal(second!.headers['x-commerce-delivery'], held.id);
        assert.ok(second!.at - killedAt >= 1000, 'not sent again while the lease held');
        const settled = await waitUntil(async () => {
          const row = await t.runtime.db
            .selectFrom('webhook_deliveries')
            .selectAll()
            .where('id', '=', held.id)
            .executeTakeFirstOrThrow();
          return row.status === 'SUCCEEDED' ? row : undefined;
        }, 'the second worker to deliver');
        assert.equal(settled.status, 'SUCCEEDED');
        assert.equal(settled.attempt_count, 2);
        const attempts = await t.runtime.db
          .selectFrom('webhook_attempts')
          .selectAll()
          .where('delivery_id', '=', held.id)
          .orderBy('attempt')
          .execute();
        assert.equal(attempts.length, 2);
        assert.equal(attempts[0]!.status_code, null);
        assert.match(attempts[0]!.error!, /worker stopped during the attempt/);
        assert.equal(attempts[1]!.status_code, 200);
        assert.equal(receiver.requests.length, 2);
        assert.ok(intent.referenceNumber);
      } finally {
        await worker.stop();
      }
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
