import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { expectStatus, startTestApp, type TestApp } from '../support/harness.js';
import { createProduct } from '../products/support.js';
import { act, createIntent } from '../intents/support.js';
import { freshPhone, orderAction, simulate } from '../orders/support.js';
import {
  assertBalanceExplained,
  assertLedgerSound,
  fold,
  intentTransactions,
  orderTransactions,
  platformShares,
  setPlan,
} from './support.js';

/**
 * Issue 33: racing refunds, modifications and payments of one merchant resolve to exactly what
 * serial ones would: nothing refunded twice, no share of the fees returned twice, every balance
 * explained. On PostgreSQL the requests really run at once (on PGlite, one at a time).
 */
describe('money races (issue 33)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '1000000' } });
  });
  afterAll(() => t.close());

  test('50 partial refunds of one payment at once: exactly what was paid goes back, fees exactly once', async () => {
    const business = await t.createBusiness({ name: 'Refund race' });
    const sk = business.keys.secretTest;
    await setPlan(t, business.id, { providerBps: 175, payerFee: 9, tofBps: 500, tteBps: 100 });
    const intent = await createIntent(t, sk, { amount: 5_000 });
    expectStatus(await act(t, sk, intent.referenceNumber, 'simulate', { payerPhone: freshPhone() }), 200);
    const responses = await Promise.all(
      Array.from({ length: 50 }, () => act(t, sk, intent.referenceNumber, 'refund', { amount: 150 })),
    );
    const succeeded = responses.filter((response) => response.status === 200);
    assert.equal(succeeded.length, 33, '33 × 150 fit in 5,000');
    for (const refused of responses.filter((response) => response.status !== 200)) {
      assert.equal(refused.status, 400, refused.text);
      assert.equal(refused.body.error.code, 'REFUND_AMOUNT_INVALID', refused.text);
    }
    const last = await act(t, sk, intent.referenceNumber, 'refund');
    expectStatus(last, 200);
    assert.equal(last.body.data.totalAmountRefunded, 5_000);
    assert.equal(last.body.data.refunds.length, 34);
    const shares = await platformShares(t, await intentTransactions(t, intent.referenceNumber));
    assert.equal(shares.revenue + shares.tof + shares.tte, 9, 'only the payer fee stays');
    for (const held of Object.values(shares)) assert.ok(held >= 0, JSON.stringify(shares));
    await assertLedgerSound(t);
    await assertBalanceExplained(t, sk);
  });

  test('refunds racing modifications of one order: each resolves once, the money follows', async () => {
    const business = await t.createBusiness({ name: 'Modify race' });
    const sk = business.keys.secretTest;
    await setPlan(t, business.id, { providerBps: 240, payerFee: 30, tofBps: 500, tteBps: 0 });
    const item = await createProduct(t, sk, { name: 'Cup', price: 1_999, quantity: 10_000, status: 'ACTIVE' });
    const refs: string[] = [];
    for (let round = 0; round < 8; round++) {
      const placed = await simulate(t, sk, [{ productId: item.id, quantity: 3 }], freshPhone());
      expectStatus(placed, 201);
      const ref = placed.body.data.referenceNumber as string;
      refs.push(ref);
      const quantity = round % 2 === 0 ? 5 : 1;
      expectStatus(
        await orderAction(t, sk, `/${ref}/propose-modification`, { items: [{ productId: item.id, quantity }] }),
        200,
      );
      const [accepted, refunded, again] = await Promise.all([
        orderAction(t, sk, `/${ref}/modification/accept`),
        orderAction(t, sk, `/${ref}/refund`, { amount: 1_000 }),
        orderAction(t, sk, `/${ref}/refund`, { amount: 1_000 }),
      ]);
      for (const response of [accepted, refunded, again]) {
        assert.ok([200, 400].includes(response.status), response.text);
      }
      // A refund makes the order REFUNDED, so a modification accepted after it is refused.
      const order = (await t.request('GET', `/api/v1/dev/store/orders/${ref}`, { key: sk })).body.data;
      const refunds = [refunded, again].filter((response) => response.status === 200).length;
      assert.equal(order.refunds.length, refunds);
      assert.equal(order.totalAmountRefunded, refunds * 1_000);
      const shares = await platformShares(t, orderTransactions(order));
      for (const held of Object.values(shares)) assert.ok(held >= 0, `${ref}: ${JSON.stringify(shares)}`);
    }
    for (const ref of refs) {
      const rest = await orderAction(t, sk, `/${ref}/refund`);
      expectStatus(rest, 200);
      const shares = await platformShares(t, orderTransactions(rest.body.data));
      assert.equal(shares.revenue + shares.tof + shares.tte, 30, `${ref}: only the payer fee stays`);
    }
    await assertLedgerSound(t);
    await assertBalanceExplained(t, sk);
  });

  test('payments of one merchant from 50 wallets at once, folded meanwhile: every one credited once', async () => {
    const business = await t.createBusiness({ name: 'Busy merchant' });
    const sk = business.keys.secretTest;
    const intents = await Promise.all(
      Array.from({ length: 50 }, (_, index) => createIntent(t, sk, { amount: 1_000 + index })),
    );
    const [responses] = await Promise.all([
      Promise.all(
        intents.map((intent) => act(t, sk, intent.referenceNumber, 'simulate', { payerPhone: freshPhone() })),
      ),
      fold(t),
    ]);
    for (const response of responses) expectStatus(response, 200);
    await fold(t);
    const items = await assertBalanceExplained(t, sk);
    assert.equal(items.length, 50);
    assert.equal(new Set(items.map((item) => item.source.reference)).size, 50);
    const settled = items.map((item) => item.balanceAfter).sort((a, b) => a - b);
    assert.equal(
      settled.at(-1),
      items.reduce((sum, item) => sum + item.net, 0),
      'the last settled is the balance',
    );
    assert.equal(new Set(settled).size, 50, 'each settled at its own running balance');
    await assertLedgerSound(t);
  });
});
