import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { expectError, expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { testDatabaseKind } from '../support/database.js';
import { eventNames } from '../support/read-api.js';
import { act, createIntent, INTENTS } from './support.js';

const ROUNDS = 8;

describe('intent races resolve to exactly one outcome', () => {
  let t: TestApp;
  let business: TestBusiness;
  let sk: string;
  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    business = await t.createBusiness();
    sk = business.keys.secretTest;
  });
  afterAll(() => t.close());

  test('cancel vs cancel: one succeeds, the other is refused, one payment.cancelled', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const intent = await createIntent(t, sk, { amount: 100 });
      const responses = await Promise.all([
        act(t, sk, intent.referenceNumber, 'cancel'),
        act(t, sk, intent.referenceNumber, 'cancel'),
      ]);
      const winners = responses.filter((r) => r.status === 200);
      assert.equal(winners.length, 1, responses.map((r) => r.text).join('\n'));
      const loser = responses.find((r) => r.status !== 200)!;
      assert.ok(['INTENT_CANCEL_INVALID_STATUS', 'INTENT_CANCEL_CONFLICT'].includes(loser.body.error.code), loser.text);
      expectError(loser, 400, loser.body.error.code);
      assert.deepEqual(await eventNames(t, sk, intent.referenceNumber), ['payment.created', 'payment.cancelled']);
    }
  });

  test('cancel vs pay: either cancelled or paid, never both, with the matching single event', async () => {
    const outcomes = new Set<string>();
    for (let round = 0; round < ROUNDS; round++) {
      const intent = await createIntent(t, sk, { amount: 100 });
      const [cancel, pay] = await Promise.all([
        act(t, sk, intent.referenceNumber, 'cancel'),
        act(t, sk, intent.referenceNumber, 'simulate'),
      ]);
      const names = await eventNames(t, sk, intent.referenceNumber);
      const stored = await t.request('GET', `${INTENTS}/${intent.referenceNumber}`, { key: sk });
      if (cancel.status === 200) {
        expectError(pay, 400, 'INTENT_NOT_PENDING');
        assert.equal(stored.body.data.status, 'CANCELLED');
        assert.deepEqual(names, ['payment.created', 'payment.cancelled']);
        outcomes.add('cancelled');
      } else {
        expectStatus(pay, 200);
        assert.ok(
          ['INTENT_CANCEL_INVALID_STATUS', 'INTENT_CANCEL_CONFLICT'].includes(cancel.body.error.code),
          cancel.text,
        );
        assert.equal(stored.body.data.status, 'PAID');
        assert.deepEqual(names, ['payment.created', 'payment.confirmed']);
        outcomes.add('paid');
      }
    }
    assert.ok(outcomes.size >= 1);
  });

  test('two refunds that together exceed the paid amount: one is refused with REFUND_AMOUNT_INVALID', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const intent = await createIntent(t, sk, { amount: 1000 });
      expectStatus(await act(t, sk, intent.referenceNumber, 'simulate'), 200);
      const responses = await Promise.all([
        act(t, sk, intent.referenceNumber, 'refund', { amount: 600 }),
        act(t, sk, intent.referenceNumber, 'refund', { amount: 600 }),
      ]);
      assert.equal(responses.filter((r) => r.status === 200).length, 1, responses.map((r) => r.text).join('\n'));
      expectError(
        responses.find((r) => r.status !== 200)!,
        400,
        'REFUND_AMOUNT_INVALID',
      );
      const stored = await t.request('GET', `${INTENTS}/${intent.referenceNumber}`, { key: sk });
      assert.equal(stored.body.data.totalAmountRefunded, 600);
      assert.equal(stored.body.data.refunds.length, 1);
      const names = await eventNames(t, sk, intent.referenceNumber);
      assert.equal(names.filter((name) => name === 'payment.refunded').length, 1);
    }
  });

  test('two full refunds at once: one refunds everything, the other finds nothing left', async () => {
    const intent = await createIntent(t, sk, { amount: 1000 });
    await act(t, sk, intent.referenceNumber, 'simulate');
    const responses = await Promise.all([
      act(t, sk, intent.referenceNumber, 'refund'),
      act(t, sk, intent.referenceNumber, 'refund'),
    ]);
    assert.equal(responses.filter((r) => r.status === 200).length, 1);
    expectError(
      responses.find((r) => r.status !== 200)!,
      400,
      'INTENT_REFUND_INVALID_STATUS',
    );
  });

  test('two payments at once: one pays, the other gets INTENT_NOT_PENDING', async () => {
    const intent = await createIntent(t, sk, { amount: 100 });
    const responses = await Promise.all([
      act(t, sk, intent.referenceNumber, 'simulate'),
      act(t, sk, intent.referenceNumber, 'simulate'),
    ]);
    assert.equal(responses.filter((r) => r.status === 200).length, 1);
    expectError(
      responses.find((r) => r.status !== 200)!,
      400,
      'INTENT_NOT_PENDING',
    );
    assert.deepEqual(await eventNames(t, sk, intent.referenceNumber), ['payment.created', 'payment.confirmed']);
  });

  test('ten creates with one idempotency key: one intent, every answer a replay or IN_PROGRESS', async () => {
    const idempotencyKey = `race-create-${Date.now()}`;
    const responses = await Promise.all(
      Array.from({ length: 10 }, () =>
        t.request('POST', INTENTS, { key: sk, body: { amount: 31_337 }, idempotencyKey }),
      ),
    );
    const created = responses.filter((r) => r.status === 201);
    assert.ok(created.length >= 1);
    for (const response of created) assert.equal(response.text, created[0]!.text);
    for (const response of responses.filter((r) => r.status !== 201)) {
      expectError(response, 409, 'IDEMPOTENCY_KEY_IN_PROGRESS');
    }
    const rows = await t.runtime.db
      .selectFrom('payment_intents')
      .select('reference_number')
      .where('business_id', '=', business.id)
      .where('amount', '=', 31_337)
      .execute();
    assert.equal(rows.length, 1);
    assert.deepEqual(await eventNames(t, sk, rows[0]!.reference_number), ['payment.created']);
  });

  test('forty concurrent creates get forty distinct codes, references and short codes', async () => {
    const responses = await Promise.all(
      Array.from({ length: 40 }, () =>
        t.request('POST', INTENTS, { key: sk, body: { amount: 5 }, idempotencyKey: true }),
      ),
    );
    for (const response of responses) expectStatus(response, 201);
    const intents = responses.map((r) => r.body.data);
    for (const field of ['code', 'referenceNumber', 'shortCode']) {
      assert.equal(new Set(intents.map((i) => i[field])).size, 40, field);
    }
  });

  test.skipIf(
    testDatabaseKind === 'pglite'
      ? 'PGlite runs one transaction at a time, so no status can change under a cancel'
      : false,
  )('INTENT_CANCEL_CONFLICT: a cancel while a payment holds the row is refused at once', async () => {
    const intent = await createIntent(t, sk, { amount: 100 });
    await t.runtime.db.transaction().execute(async (trx) => {
      // A payment in flight: the row is changed but not committed when the cancel arrives.
      await trx
        .updateTable('payment_intents')
        .set({ status: 'PAID', payment_code: null, amount_paid: 100, paid_at: new Date() })
        .where('reference_number', '=', intent.referenceNumber)
        .execute();
      expectError(await act(t, sk, intent.referenceNumber, 'cancel'), 400, 'INTENT_CANCEL_CONFLICT');
    });
    expectStatus(await t.request('GET', `${INTENTS}/${intent.referenceNumber}`, { key: sk }), 200);
    assert.deepEqual(await eventNames(t, sk, intent.referenceNumber), ['payment.created']);
  });
});
