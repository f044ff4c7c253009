import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { act, createIntent } from '../intents/support.js';
import { merchantBalance, orderAction, ORDERS, simulate, walletBalance } from '../orders/support.js';
import { createPayout, newPhone, payoutTo } from '../payouts/support.js';
import { createProduct } from '../products/support.js';
import { expectError, expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { assertBalanceExplained, assertLedgerSound } from './support.js';

/**
 * decisions.md: the merchant's side of "too little money" is one code. A refund the merchant's
 * balance cannot cover answers 402 INSUFFICIENT_FUNDS, as a payout does (INSUFFICIENT_BALANCE is
 * the payer's), and nothing moves: intent refunds and order refunds alike.
 */
describe('a refund the merchant balance cannot cover', () => {
  let t: TestApp;
  let business: TestBusiness;
  let sk: string;
  beforeAll(async () => {
    t = await startTestApp();
    business = await t.createBusiness({ name: 'Refund funds' });
    sk = business.keys.secretTest;
    // No payout fee, so that a payout can take the balance down to the centime.
    expectStatus(await t.admin('PUT', `/businesses/${business.id}/fees`, { payoutFeeFlat: 0, payoutFeeBps: 0 }), 200);
  });
  afterAll(() => t.close());

  /** Pays out all but `keep` centimes of the balance. */
  async function drainTo(keep: number): Promise<void> {
    const available = await merchantBalance(t, sk);
    expectStatus(await createPayout(t, sk, payoutTo(newPhone(), available - keep)), 201);
    assert.equal(await merchantBalance(t, sk), keep);
  }

  test('intent refund: 402 INSUFFICIENT_FUNDS, the intent, the wallet and the balance unchanged', async () => {
    const payer = newPhone();
    const reference = (await createIntent(t, sk, { amount: 10_000 })).referenceNumber as string;
    expectStatus(await act(t, sk, reference, 'simulate', { payerPhone: payer }), 200);
    await drainTo(50);
    const payerBefore = await walletBalance(t, payer);

    const refused = await act(t, sk, reference, 'refund', { amount: 5_000 });
    expectError(refused, 402, 'INSUFFICIENT_FUNDS');
    assert.match(refused.body.error.message, /refund/);

    const after = (await t.request('GET', `/api/v1/dev/intents/${reference}`, { key: sk })).body.data;
    assert.equal(after.status, 'PAID');
    assert.equal(after.totalAmountRefunded, 0);
    assert.deepEqual(after.refunds, []);
    assert.equal(await walletBalance(t, payer), payerBefore);
    assert.equal(await merchantBalance(t, sk), 50);
    // What the balance can cover still goes through.
    expectStatus(await act(t, sk, reference, 'refund', { amount: 50 }), 200);
    await assertLedgerSound(t);
    await assertBalanceExplained(t, sk);
  });

  test('order refund, cancel, customer cancel, lower total: 402 INSUFFICIENT_FUNDS, nothing changed', async () => {
    const tea = await createProduct(t, sk, { name: 'Refund tea', price: 8_000, status: 'ACTIVE', quantity: 10 });
    const phone = `+2224${String(Date.now() % 10_000_000).padStart(7, '0')}`;
    const placed = await simulate(t, sk, [{ productId: tea.id, quantity: 2 }], phone);
    expectStatus(placed, 201);
    const reference = placed.body.data.referenceNumber as string;
    await drainTo(100);
    const payerBefore = await walletBalance(t, phone);

    for (const path of [`/${reference}/refund`, `/${reference}/cancel`]) {
      const refused = await orderAction(t, sk, path, path.endsWith('cancel') ? { reason: 'Closed' } : {});
      expectError(refused, 402, 'INSUFFICIENT_FUNDS');
    }

    // The customer's own cancel refunds from the same balance.
    const customerRef = (placed.body.data.customerUrl as string).split('/o/')[1]!;
    const byCustomer = await t.request('POST', `/storefront/orders/${customerRef}/cancel`);
    expectError(byCustomer, 402, 'INSUFFICIENT_FUNDS');
    // A lower total after a modification gives the difference back from the same balance.
    expectStatus(
      await orderAction(t, sk, `/${reference}/propose-modification`, { items: [{ productId: tea.id, quantity: 1 }] }),
      200,
    );
    expectError(await orderAction(t, sk, `/${reference}/modification/accept`), 402, 'INSUFFICIENT_FUNDS');

    const after = (await t.request('GET', `${ORDERS}/${reference}`, { key: sk })).body.data;
    assert.equal(after.status, 'NEW');
    assert.equal(after.totalAmount, 16_000);
    assert.equal(after.items[0].quantity, 2);
    assert.equal(after.totalAmountRefunded, 0);
    assert.deepEqual(after.refunds, []);
    assert.equal(await walletBalance(t, phone), payerBefore);
    assert.equal(await merchantBalance(t, sk), 100);
    await assertLedgerSound(t);
    await assertBalanceExplained(t, sk);
  });
});
