import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import pino from 'pino';
import { startWorker, type Worker } from '../../src/worker/worker.js';
import { expectStatus, startTestApp, waitUntil, type TestApp } from '../support/harness.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { createIntent } from '../intents/support.js';

describe('several workers share the deliveries', () => {
  let t: TestApp;
  let receiver: Receiver;
  let workers: Worker[] = [];
  beforeAll(async () => {
    t = await startTestApp({ config: { WEBHOOK_ALLOW_PRIVATE: 'true', RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await Promise.all(workers.map((worker) => worker.stop()));
    await receiver.close();
    await t.close();
  });

  test('three workers: every delivery is sent exactly once', async () => {
    const business = await t.createBusiness();
    for (let i = 0; i < 3; i++) {
      const response = await t.request('POST', '/api/v1/dev/webhooks/endpoints', {
        key: business.keys.secretTest,
        idempotencyKey: true,
        body: { url: `${receiver.url}?endpoint=${i}`, events: ['payment.created'] },
      });
      expectStatus(response, 201);
    }
    receiver.answer = () => ({ status: 200, delayMs: 20 });
    for (let i = 0; i < 20; i++) await createIntent(t, business.keys.secretTest, { amount: 100 + i });
    workers = Array.from({ length: 3 }, () => startWorker(t.runtime, pino({ level: 'silent' }), [], 60_000));
    await receiver.waitFor(60, 20_000);
    // Once every delivery has succeeded none can be claimed again: any second send would have
    // been claimed (and logged as an attempt) before that, and have reached the receiver.
    await waitUntil(async () => {
      const open = await t.runtime.db
        .selectFrom('webhook_deliveries')
        .select('id')
        .where('business_id', '=', business.id)
        .where('status', '!=', 'SUCCEEDED')
        .execute();
      return open.length === 0;
    }, 'every delivery to succeed');
    assert.equal(receiver.requests.length, 60);
    const ids = receiver.requests.map((request) => String(request.headers['x-commerce-delivery']));
    assert.equal(new Set(ids).size, 60, 'no delivery was sent twice');
    const attempts = await t.runtime.db.selectFrom('webhook_attempts').select('delivery_id').execute();
    assert.equal(attempts.length, 60);
  });
});
