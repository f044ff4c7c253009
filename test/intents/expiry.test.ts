import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import pino from 'pino';
import { expireDueIntents } from '../../src/modules/intents/service.js';
import { periodicTasks, startWorker } from '../../src/worker/worker.js';
import { startTestApp, waitUntil, type TestApp, type TestBusiness } from '../support/harness.js';
import { eventNames, eventsOf } from '../support/read-api.js';
import { act, ageIntent, createIntent, getIntent, INTENTS } from './support.js';

describe('intent expiry job (api.md 3.1, decisions "Payment intents")', () => {
  let t: TestApp;
  let business: TestBusiness;
  let sk: string;
  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    business = await t.createBusiness();
    sk = business.keys.secretTest;
  });
  afterAll(() => t.close());

  const statusOf = async (reference: string, key = sk): Promise<string> => (await getIntent(t, key, reference)).status;
  /** The stored code, released (null) once the intent can no longer be paid. */
  const storedCode = async (reference: string) =>
    (
      await t.runtime.db
        .selectFrom('payment_intents')
        .select('payment_code')
        .where('reference_number', '=', reference)
        .executeTakeFirstOrThrow()
    ).payment_code;

  async function waitForStatus(reference: string, status: string, timeoutMs: number, key = sk): Promise<void> {
    await waitUntil(
      async () => (await statusOf(reference, key)) === status,
      `${reference} to become ${status}`,
      timeoutMs,
    );
  }

  test('on start, the worker catches up: overdue PENDING and FAILED intents become CANCELLED with payment.expired', async () => {
    const pending = await createIntent(t, sk, { amount: 100, metadata: { k: 'v' } });
    const failed = await createIntent(t, sk, { amount: 1313 });
    await act(t, sk, failed.referenceNumber, 'simulate');
    const paid = await createIntent(t, sk, { amount: 100 });
    await act(t, sk, paid.referenceNumber, 'simulate');
    const fresh = await createIntent(t, sk, { amount: 100 });
    const live = await createIntent(t, business.keys.secretLive, { amount: 100 });
    // The server was "down" while these passed their expiry.
    for (const intent of [pending, failed, paid, live]) await ageIntent(t, intent.referenceNumber);

    const worker = startWorker(t.runtime, pino({ level: 'silent' }), periodicTasks, 100);
    try {
      await waitForStatus(pending.referenceNumber, 'CANCELLED', 10_000);
      await waitForStatus(live.referenceNumber, 'CANCELLED', 10_000, business.keys.secretLive);
    } finally {
      await worker.stop();
    }
    for (const [intent, key] of [
      [pending, sk],
      [failed, sk],
      [live, business.keys.secretLive],
    ] as const) {
      assert.equal(await statusOf(intent.referenceNumber, key), 'CANCELLED');
      assert.equal(await storedCode(intent.referenceNumber), null, 'the code is released');
    }
    assert.equal(await statusOf(paid.referenceNumber), 'PAID');
    assert.equal(await statusOf(fresh.referenceNumber), 'PENDING');
    assert.deepEqual(await eventNames(t, sk, failed.referenceNumber), [
      'payment.created',
      'payment.failed',
      'payment.expired',
    ]);
    assert.deepEqual(await eventNames(t, sk, paid.referenceNumber), ['payment.created', 'payment.confirmed']);

    const [, expired] = await eventsOf(t, sk, pending.referenceNumber);
    assert.equal(expired!.event, 'payment.expired');
    assert.equal(expired!.sandbox, true);
    assert.deepEqual(expired!.data, {
      reference_number: pending.referenceNumber,
      short_code: pending.shortCode,
      amount: 100,
      currency: 'MRU',
      status: 'CANCELLED',
      paid_at: null,
      payer_phone: null,
      metadata: { k: 'v' },
      commission: { provider_ttc: 0, payer_ttc: 0, tof: 0, tte: 0, total_revenue: 0 },
    });
    const [, liveExpired] = await eventsOf(t, business.keys.secretLive, live.referenceNumber);
    assert.equal(liveExpired!.sandbox, false);

    const response = await t.request('GET', `${INTENTS}/${pending.referenceNumber}`, { key: sk });
    assert.equal(response.body.data.status, 'CANCELLED');
    assert.equal(response.body.data.code, null);
  });

  test('while the worker runs, an intent is expired within 60 s of its expiresAt', async () => {
    // The bound comes from the schedule: the expiry task is due every `everySeconds`, and the
    // worker looks for due tasks every second (startWorker's default tick).
    const expiry = periodicTasks.find((task) => task.name === 'intent-expiry');
    assert.ok(expiry, 'the intent-expiry task is scheduled');
    assert.ok(expiry.everySeconds + 1 <= 60, `expiry runs every ${expiry.everySeconds} s`);
    // The loop itself: the same task under its own name with a period of 0.2 s, so the test
    // sees the worker run it again after an intent expires without waiting out 10 s.
    const fast = { ...expiry, name: 'intent-expiry-test', everySeconds: 0.2 };
    const worker = startWorker(t.runtime, pino({ level: 'silent' }), [fast], 50);
    try {
      await worker.tick();
      const intent = await createIntent(t, sk, { amount: 100 });
      await ageIntent(t, intent.referenceNumber);
      await waitForStatus(intent.referenceNumber, 'CANCELLED', 20_000);
    } finally {
      await worker.stop();
    }
  });

  test('several workers expiring at once write exactly one payment.expired per intent', async () => {
    const intents = [];
    for (let i = 0; i < 30; i++) intents.push(await createIntent(t, sk, { amount: 100 + i }));
    for (const intent of intents) await ageIntent(t, intent.referenceNumber);
    const counts = await Promise.all(Array.from({ length: 4 }, () => expireDueIntents(t.runtime.db, 7)));
    assert.equal(
      counts.reduce((sum, n) => sum + n, 0),
      30,
    );
    for (const intent of intents) {
      assert.deepEqual(await eventNames(t, sk, intent.referenceNumber), ['payment.created', 'payment.expired']);
    }
  });
});
