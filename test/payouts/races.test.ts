import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { expectError, expectStatus, startTestApp, type TestApp } from '../support/harness.js';
import { act } from '../intents/support.js';
import { eventNames, listEvents } from '../support/read-api.js';
import { RICH } from '../orders/support.js';
import { assertBalanceExplained, assertLedgerSound, fold, setPlan } from '../payments/support.js';
import { createPayout, earn, getPayout, newPhone, PAYOUTS, payoutTo, sendPayouts } from './support.js';

/**
 * Racing payouts resolve to exactly one outcome each and never overdraw a merchant. On PGlite
 * (one connection) the requests queue; on PostgreSQL they truly race.
 */
describe('payout races', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
  });
  afterAll(() => t.close());

  async function shopWith(amount: number) {
    const shop = await t.createBusiness({ name: 'Racing shop' });
    await setPlan(t, shop.id, { providerBps: 0, payerFee: 0, tofBps: 0, tteBps: 0 });
    if (amount > 0) await earn(t, shop.keys.secretTest, amount);
    return shop.keys.secretTest;
  }
  const balance = async (key: string) => (await t.request('GET', '/api/v1/dev/balance', { key })).body.data.available;

  test('50 parallel payouts against a balance that covers 10: exactly 10 succeed', async () => {
    const key = await shopWith(10_000);
    const responses = await Promise.all(
      Array.from({ length: 50 }, () => createPayout(t, key, payoutTo(RICH.phone, 1_000))),
    );
    const created = responses.filter((response) => response.status === 201);
    const refused = responses.filter((response) => response.status !== 201);
    assert.equal(created.length, 10, responses.map((response) => response.status).join());
    for (const response of refused) expectError(response, 402, 'INSUFFICIENT_FUNDS');
    assert.equal(await balance(key), 0);
    await fold(t);
    await assertLedgerSound(t);
    await assertBalanceExplained(t, key);
    await sendPayouts(t);
  });

  test('a payout racing a refund and a payment never leaves the balance below zero', async () => {
    for (let round = 0; round < 6; round++) {
      const key = await shopWith(0);
      const paid = await earn(t, key, 5_000);
      const [payout, refund, payment] = await Promise.all([
        createPayout(t, key, payoutTo(RICH.phone, 4_000)),
        act(t, key, paid, 'refund', { amount: 3_000 }),
        earn(t, key, 500),
      ]);
      assert.ok(payment);
      // 5,000 + 500 (if the payment came first) covers 4,000 + 3,000 never: one of them is refused.
      const outcomes = [payout.status, refund.status].sort();
      assert.ok(
        JSON.stringify(outcomes) === JSON.stringify([200, 402]) ||
          JSON.stringify(outcomes) === JSON.stringify([201, 402]),
        `${payout.text}\n${refund.text}`,
      );
      if (payout.status === 402) expectError(payout, 402, 'INSUFFICIENT_FUNDS');
      if (refund.status === 402) expectError(refund, 402, 'INSUFFICIENT_FUNDS');
      assert.ok((await balance(key)) >= 0);
      await fold(t);
      await assertLedgerSound(t);
      await assertBalanceExplained(t, key);
    }
    await sendPayouts(t);
  });

  test('cancel racing the worker: cancelled or sent, never both, the money moved once', async () => {
    const key = await shopWith(100_000);
    const outcomes = new Set<string>();
    for (let round = 0; round < 8; round++) {
      const before = await balance(key);
      const phone = newPhone();
      const payout = (await createPayout(t, key, payoutTo(phone, 1_000))).body.data;
      const [cancel] = await Promise.all([
        t.request('POST', `${PAYOUTS}/${payout.referenceNumber}/cancel`, { key, idempotencyKey: true, body: {} }),
        sendPayouts(t),
      ]);
      const final = await getPayout(t, key, payout.referenceNumber);
      outcomes.add(final.status);
      if (cancel.status === 200) {
        assert.equal(final.status, 'CANCELLED');
        assert.equal(await balance(key), before);
        assert.deepEqual(await eventNames(t, key, payout.referenceNumber), ['payout.created', 'payout.cancelled']);
      } else {
        expectError(cancel, 400, 'PAYOUT_NOT_PENDING');
        assert.equal(final.status, 'PAID');
        assert.equal(await balance(key), before - 1_000);
        assert.deepEqual(await eventNames(t, key, payout.referenceNumber), ['payout.created', 'payout.paid']);
      }
    }
    await fold(t);
    await assertLedgerSound(t);
    await assertBalanceExplained(t, key);
  });

  test('two workers sending at once send each payout exactly once', async () => {
    const key = await shopWith(100_000);
    const created = await t.request('POST', `${PAYOUTS}/batch`, {
      key,
      idempotencyKey: true,
      body: { items: Array.from({ length: 40 }, () => payoutTo(newPhone(), 100)) },
    });
    expectStatus(created, 201);
    const sent = await Promise.all([sendPayouts(t), sendPayouts(t), sendPayouts(t)]);
    for (let more = await sendPayouts(t); more > 0; more = await sendPayouts(t)) sent.push(more);
    assert.equal(
      sent.reduce((sum, n) => sum + n, 0),
      40,
    );
    const batch = await t.request('GET', `${PAYOUTS}/batches/${created.body.data.id}`, { key });
    assert.deepEqual(batch.body.data.counts, { PENDING: 0, PAID: 40, FAILED: 0, CANCELLED: 0 });
    let paidEvents = 0;
    for (const payout of created.body.data.payouts as { referenceNumber: string }[]) {
      paidEvents += (await listEvents(t, key, payout.referenceNumber, 'payout.paid')).length;
    }
    assert.equal(paidEvents, 40);
    await fold(t);
    await assertLedgerSound(t);
  });
});
