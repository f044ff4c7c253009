import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { expectError, expectStatus, startTestApp, type TestApp } from '../support/harness.js';
import { createProduct } from '../products/support.js';
import { act, createIntent } from '../intents/support.js';
import { freshPhone, orderAction, simulate } from '../orders/support.js';
import { adminCli } from '../support/admin-cli.js';
import { allBalanceTransactions, assertBalanceExplained, assertLedgerSound, setPlan } from './support.js';

/**
 * Issue 33: the MARGIN revenue model. The platform's commission on an order is the margin rate on
 * each line's margin (price less cost basis); lines whose product has no cost basis pay the
 * commission plan's rate on their total; an intent has no lines and pays the commission plan.
 */
describe('the MARGIN revenue model (issue 33)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
  });
  afterAll(() => t.close());

  test('the operator sets it through the admin API; bad values are refused', async () => {
    const business = await t.createBusiness({ name: 'Margin plan' });
    const set = await t.admin('PUT', `/businesses/${business.id}/fees`, { revenueModel: 'MARGIN', marginBps: 2000 });
    expectStatus(set, 200);
    assert.equal(set.body.data.revenueModel, 'MARGIN');
    assert.equal(set.body.data.marginBps, 2000);
    assert.equal(set.body.data.providerBps, 100, 'the rest of the plan stays');
    expectError(
      await t.admin('PUT', `/businesses/${business.id}/fees`, { revenueModel: 'PROFIT' }),
      400,
      'VALIDATION_ERROR',
    );
    expectError(
      await t.admin('PUT', `/businesses/${business.id}/fees`, { marginBps: 10_001 }),
      400,
      'VALIDATION_ERROR',
    );
    const cli = await adminCli(
      t,
      'fees',
      'set',
      '--business',
      business.id,
      '--revenue-model',
      'COMMISSION',
      '--margin-bps',
      '1500',
    );
    assert.equal(cli.code, 0, cli.stderr);
    assert.match(cli.stdout, /COMMISSION/);
    assert.match(cli.stdout, /1500/);
  });

  test('an order pays the margin rate on its margin, the commission rate on lines without cost basis', async () => {
    const business = await t.createBusiness({ name: 'Margin shop' });
    const sk = business.keys.secretTest;
    await setPlan(t, business.id, { providerBps: 100, payerFee: 50, revenueModel: 'MARGIN', marginBps: 2000 });
    const costed = await createProduct(t, sk, {
      name: 'Costed',
      price: 1000,
      costBasis: 600,
      quantity: 100,
      status: 'ACTIVE',
      variants: [{ type: 'SIZE', label: 'Large', priceAdjustment: 250, quantity: 50 }],
    });
    const plain = await createProduct(t, sk, { name: 'Plain', price: 1000, quantity: 100, status: 'ACTIVE' });
    const large = costed.variants[0]._id;
    // Margins: 2 × (1000 − 600) = 800 and 1 × (1250 − 600) = 650 at 20 %; 1000 at 1 %:
    // (1450 × 2000 + 1000 × 100) / 10000 = 300.
    const placed = await simulate(
      t,
      sk,
      [
        { productId: costed.id, quantity: 2 },
        { productId: costed.id, quantity: 1, variantId: large },
        { productId: plain.id, quantity: 1 },
      ],
      freshPhone(),
    );
    expectStatus(placed, 201);
    const order = placed.body.data;
    assert.equal(order.totalAmount, 4250);
    assert.deepEqual(order.commission, {
      provider_ttc: 300,
      payer_ttc: 50,
      tof: 17,
      tte: 0,
      total_revenue: 333,
      revenue_model: 'MARGIN',
    });
    const [payment] = await allBalanceTransactions(t, sk, '&type=order_payment');
    assert.deepEqual([payment.amount, payment.fee, payment.net], [4250, 300, 3950]);

    // A higher total pays on the margin it adds: one more costed item, 400 × 20 % = 80.
    expectStatus(
      await orderAction(t, sk, `/${order.referenceNumber}/propose-modification`, {
        items: [
          { productId: costed.id, quantity: 3 },
          { productId: costed.id, quantity: 1, variantId: large },
          { productId: plain.id, quantity: 1 },
        ],
      }),
      200,
    );
    const raised = await orderAction(t, sk, `/${order.referenceNumber}/modification/accept`);
    expectStatus(raised, 200);
    assert.equal(raised.body.data.commission.provider_ttc, 380);
    const [adjustment] = await allBalanceTransactions(t, sk, '&type=order_adjustment');
    assert.deepEqual([adjustment.amount, adjustment.fee, adjustment.net], [1000, 80, 920]);

    const refunded = await orderAction(t, sk, `/${order.referenceNumber}/refund`);
    expectStatus(refunded, 200);
    assert.deepEqual(refunded.body.data.commission, {
      provider_ttc: 0,
      payer_ttc: 50,
      tof: 2,
      tte: 0,
      total_revenue: 48,
      revenue_model: 'MARGIN',
    });
    await assertLedgerSound(t);
    await assertBalanceExplained(t, sk);
  });

  test('a modification never charges a fee above the difference it charges', async () => {
    const business = await t.createBusiness({ name: 'Swap shop' });
    const sk = business.keys.secretTest;
    await setPlan(t, business.id, { providerBps: 100, payerFee: 0, revenueModel: 'MARGIN', marginBps: 10_000 });
    const plain = await createProduct(t, sk, { name: 'No cost known', price: 1000, quantity: 10, status: 'ACTIVE' });
    const free = await createProduct(t, sk, {
      name: 'Costs nothing',
      price: 1001,
      costBasis: 0,
      quantity: 10,
      status: 'ACTIVE',
    });
    const placed = await simulate(t, sk, [{ productId: plain.id, quantity: 1 }], freshPhone());
    expectStatus(placed, 201);
    const ref = placed.body.data.referenceNumber;
    expectStatus(
      await orderAction(t, sk, `/${ref}/propose-modification`, { items: [{ productId: free.id, quantity: 1 }] }),
      200,
    );
    expectStatus(await orderAction(t, sk, `/${ref}/modification/accept`), 200);
    // The new line's margin is 1001 at 100 %, the old line paid 10: the 1 centime charged is the cap.
    const [adjustment] = await allBalanceTransactions(t, sk, '&type=order_adjustment');
    assert.deepEqual([adjustment.amount, adjustment.fee, adjustment.net], [1, 1, 0]);
    await assertLedgerSound(t);
    await assertBalanceExplained(t, sk);
  });

  test('a sale below cost pays no margin commission; an intent pays the commission plan', async () => {
    const business = await t.createBusiness({ name: 'Clearance' });
    const sk = business.keys.secretTest;
    await setPlan(t, business.id, { providerBps: 150, payerFee: 0, revenueModel: 'MARGIN', marginBps: 3000 });
    const clearance = await createProduct(t, sk, {
      name: 'Old stock',
      price: 500,
      costBasis: 800,
      quantity: 10,
      status: 'ACTIVE',
    });
    const placed = await simulate(t, sk, [{ productId: clearance.id, quantity: 2 }], freshPhone());
    expectStatus(placed, 201);
    assert.equal(placed.body.data.commission.provider_ttc, 0);
    const intent = await createIntent(t, sk, { amount: 10_000 });
    expectStatus(await act(t, sk, intent.referenceNumber, 'simulate'), 200);
    const [payment] = await allBalanceTransactions(t, sk, '&type=payment');
    assert.equal(payment.fee, 150, '1.5 % of 10,000: intents have no cost basis');
    await assertLedgerSound(t);
    await assertBalanceExplained(t, sk);
  });
});
