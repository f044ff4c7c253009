import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { expectStatus, startTestApp, type TestApp } from '../support/harness.js';
import { createProduct } from '../products/support.js';
import { act, createIntent } from '../intents/support.js';
import { freshPhone, orderAction, simulate } from '../orders/support.js';
import {
  assertBalanceExplained,
  assertLedgerSound,
  intentTransactions,
  orderTransactions,
  platformShares,
  setPlan,
} from './support.js';

/**
 * Issue 33: a refund returns a share of what its payment actually credited each platform account,
 * and the last one returns exactly what is left. Each rounding case that once took a centime more
 * back than was put in, through HTTP, with `ledger check` after it.
 */
describe('refunds return exactly what was taken (issue 33)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000', RATE_LIMIT_LIVE_PER_MINUTE: '100000' } });
  });
  afterAll(() => t.close());

  const paidOrder = async (sk: string, productId: string, quantity: number) => {
    const placed = await simulate(t, sk, [{ productId, quantity }], freshPhone());
    expectStatus(placed, 201);
    return placed.body.data.referenceNumber as string;
  };
  const modify = async (sk: string, ref: string, productId: string, quantity: number) => {
    expectStatus(await orderAction(t, sk, `/${ref}/propose-modification`, { items: [{ productId, quantity }] }), 200);
    const accepted = await orderAction(t, sk, `/${ref}/modification/accept`);
    expectStatus(accepted, 200);
    return accepted.body.data;
  };
  const refundOrder = async (sk: string, ref: string, body: Record<string, unknown> = {}) => {
    const refunded = await orderAction(t, sk, `/${ref}/refund`, body);
    expectStatus(refunded, 200);
    return refunded.body.data;
  };

  test('an order raised from 1000 to 2000 by a modification, then refunded: every tax centime comes back, none more', async () => {
    const business = await t.createBusiness({ name: 'Raised order' });
    const sk = business.keys.secretTest;
    const item = await createProduct(t, sk, { name: 'Mug', price: 1000, quantity: 100, status: 'ACTIVE' });
    const ref = await paidOrder(sk, item.id, 1);
    // Two charges of 1000 at 1 %: 10 each, TOF inside 10 at 5 % = 0.48 → 0 twice; inside 20 it would be 1.
    await modify(sk, ref, item.id, 2);
    const refunded = await refundOrder(sk, ref);
    assert.equal(refunded.totalAmountRefunded, 2000);
    assert.deepEqual(await platformShares(t, orderTransactions(refunded)), { revenue: 0, tof: 0, tte: 0 });
    await assertLedgerSound(t);
    await assertBalanceExplained(t, sk);
  });

  test('a live payment with a 1-centime payer fee and TTE 5 %, refunded in full: the platform keeps exactly the payer fee', async () => {
    const business = await t.createBusiness({ name: 'Payer fee', approveLive: true });
    await setPlan(t, business.id, { providerBps: 100, payerFee: 1, tofBps: 500, tteBps: 500 });
    const phone = freshPhone();
    expectStatus(await t.admin('POST', '/wallets', { phone, pin: '2468', balance: 50_000, environment: 'live' }), 201);
    const intent = await createIntent(t, business.keys.secretLive, { amount: 1000 });
    const paid = await t.request('POST', `/checkout/intents/${intent.shortCode}/pay`, {
      body: { phone, pin: '2468' },
    });
    expectStatus(paid, 200);
    // Fees 10 + 1 = 11: TOF 0.52 → 1, TTE 1, revenue 9. Giving back 10 of them takes 2 taxes and 8.
    const refunded = await act(t, business.keys.secretLive, intent.referenceNumber, 'refund');
    expectStatus(refunded, 200);
    const shares = await platformShares(t, await intentTransactions(t, intent.referenceNumber));
    assert.deepEqual(shares, { revenue: 1, tof: 0, tte: 0 }, 'the payer fee stays, nothing below it');
    await assertLedgerSound(t);
    await assertBalanceExplained(t, business.keys.secretLive);
  });

  test('three partial refunds of 1000 return the provider fee 3 + 3 + 4 and all of the taxes', async () => {
    const business = await t.createBusiness({ name: 'Thirds' });
    const sk = business.keys.secretTest;
    await setPlan(t, business.id, { providerBps: 100, payerFee: 0, tofBps: 500, tteBps: 100 });
    const intent = await createIntent(t, sk, { amount: 1000 });
    expectStatus(await act(t, sk, intent.referenceNumber, 'simulate'), 200);
    const returned: number[] = [];
    for (const amount of [333, 333, 334]) {
      const refunded = await act(t, sk, intent.referenceNumber, 'refund', { amount });
      expectStatus(refunded, 200);
    }
    const transactions = await intentTransactions(t, intent.referenceNumber);
    assert.deepEqual(await platformShares(t, transactions), { revenue: 0, tof: 0, tte: 0 });
    const items = await assertBalanceExplained(t, sk);
    for (const item of items.filter((entry) => entry.type === 'refund')) returned.push(-item.fee);
    assert.deepEqual(returned.sort(), [3, 3, 4], 'the fee each refund returned to the merchant');
    await assertLedgerSound(t);
  });

  test('a modification that lowers the total, then the rest refunded: returned in proportion, the last exactly', async () => {
    const business = await t.createBusiness({ name: 'Lowered order' });
    const sk = business.keys.secretTest;
    await setPlan(t, business.id, { providerBps: 275, payerFee: 150, tofBps: 500, tteBps: 180 });
    const item = await createProduct(t, sk, { name: 'Plate', price: 777, quantity: 100, status: 'ACTIVE' });
    const ref = await paidOrder(sk, item.id, 3);
    const lowered = await modify(sk, ref, item.id, 1);
    assert.equal(lowered.payment.adjustments[0].amount, -1554);
    const refunded = await refundOrder(sk, ref);
    const shares = await platformShares(t, orderTransactions(refunded));
    // What stays is the payer fee's part of each account: 150 in all, none below zero.
    assert.equal(shares.revenue + shares.tof + shares.tte, 150);
    for (const value of Object.values(shares)) assert.ok(value >= 0, JSON.stringify(shares));
    await assertLedgerSound(t);
    await assertBalanceExplained(t, sk);
  });

  test('a lower total, then a higher one, then a refund: the proportions change and nothing goes below zero', async () => {
    const business = await t.createBusiness({ name: 'Refund then raise' });
    const sk = business.keys.secretTest;
    await setPlan(t, business.id, { providerBps: 333, payerFee: 7, tofBps: 1900, tteBps: 1100 });
    const item = await createProduct(t, sk, { name: 'Bowl', price: 1001, quantity: 100, status: 'ACTIVE' });
    const ref = await paidOrder(sk, item.id, 2);
    await modify(sk, ref, item.id, 1);
    await modify(sk, ref, item.id, 3);
    const refunded = await refundOrder(sk, ref);
    assert.equal(refunded.totalAmountRefunded, 3003);
    const shares = await platformShares(t, orderTransactions(refunded));
    assert.equal(shares.revenue + shares.tof + shares.tte, 7, 'only the payer fee stays');
    for (const value of Object.values(shares)) assert.ok(value >= 0, JSON.stringify(shares));
    await assertLedgerSound(t);
    await assertBalanceExplained(t, sk);
  });
});
