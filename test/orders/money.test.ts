import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { SANDBOX_NEW_WALLET_BALANCE } from '../../src/modules/sandbox/sandbox.js';
import { expectError, expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { createProduct, stockOf } from '../products/support.js';
import { eventsOf } from '../support/read-api.js';
import {
  freshPhone,
  LOCKED,
  ledgerIsSound,
  merchantBalance,
  NEARLY_EMPTY,
  orderAction,
  postingsOf,
  RICH,
  setFeePlan,
  simulate,
  walletBalance,
} from './support.js';

/**
 * Issue 11: orders move money through the ledger. The business's plan: provider fee 2.50 %,
 * payer fee 1.00 MRU, TOF 5 %. A 20.00 MRU order costs the wallet 21.00 MRU and gives the
 * merchant 19.50 MRU.
 */
describe('orders take money (issue 11): payment, cancel, refund, modification', () => {
  let t: TestApp;
  let business: TestBusiness;
  let sk: string;
  let tea: { id: string };
  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    business = await t.createBusiness({ name: 'Chez Money' });
    sk = business.keys.secretTest;
    await setFeePlan(t, business.id, { providerBps: 250, payerFee: 100 });
    tea = await createProduct(t, sk, { name: 'Tea', price: 2000, quantity: 1000, status: 'ACTIVE' });
  });
  afterAll(() => t.close());

  const act = (ref: string, action: string, body: unknown = {}) => orderAction(t, sk, `/${ref}/${action}`, body);
  const order = async (quantity = 1, phone?: string) => {
    const response = await simulate(t, sk, [{ productId: tea.id, quantity }], phone);
    expectStatus(response, 201);
    return response.body.data;
  };

  test('placing an order debits amount + payer fee from the wallet, credits the merchant, and links the payment', async () => {
    const phone = freshPhone();
    const merchantBefore = await merchantBalance(t, sk);
    const placed = await order(1, phone);
    assert.equal(placed.paid, true);
    assert.equal(placed.customerPhone, phone);
    assert.equal(await walletBalance(t, phone), SANDBOX_NEW_WALLET_BALANCE - 2100, 'a new phone got a funded wallet');
    assert.equal(await merchantBalance(t, sk), merchantBefore + 2000 - 50);
    assert.match(placed.payment.id, /^OP-\d+$/);
    assert.deepEqual(
      { ...placed.payment, id: undefined, ledgerTransactionId: undefined, paidAt: undefined },
      {
        id: undefined,
        amountPaid: 2000,
        payerFee: 100,
        method: 'WALLET',
        payerPhone: phone,
        paidAt: undefined,
        ledgerTransactionId: undefined,
        adjustments: [],
      },
    );
    assert.match(placed.customerUrl, /\/o\/[0-9A-Za-z]{32}$/);
    // The ledger names the order: one payment transaction, amount + fee out of the wallet.
    const postings = await postingsOf(t, placed.referenceNumber);
    assert.ok(postings.every((p) => p.transaction_id === placed.payment.ledgerTransactionId && p.kind === 'payment'));
    assert.deepEqual(
      postings
        .filter((p) => p.account === 'wallet' || p.account === 'merchant')
        .map((p) => [p.account, Number(p.amount)]),
      [
        ['wallet', -2100],
        ['merchant', 1950],
      ],
    );
    const [created] = await eventsOf(t, sk, placed.referenceNumber);
    assert.equal(created!.event, 'order.new');
    assert.equal(created!.data.status, 'NEW');
    // Read back: the order's JSON shows its payment.
    const got = await t.request('GET', `/api/v1/dev/store/orders/${placed.referenceNumber}`, { key: sk });
    assert.deepEqual(got.body.data.payment, placed.payment);
    // No phone: the rich sandbox wallet pays.
    const richBefore = await walletBalance(t, RICH.phone);
    await order(2);
    assert.equal(await walletBalance(t, RICH.phone), richBefore - 4100);
    await ledgerIsSound(t);
  });

  test('too little in the wallet, a locked wallet, too little stock: 4xx and nothing taken', async () => {
    const stock = (await stockOf(t, sk, tea.id)).quantity;
    const orders = await t.runtime.db.selectFrom('orders').select('id').execute();
    const merchantBefore = await merchantBalance(t, sk);
    const poorBefore = await walletBalance(t, NEARLY_EMPTY.phone);
    expectError(
      await simulate(t, sk, [{ productId: tea.id, quantity: 1 }], NEARLY_EMPTY.phone),
      402,
      'INSUFFICIENT_BALANCE',
    );
    expectError(await simulate(t, sk, [{ productId: tea.id, quantity: 1 }], LOCKED.phone), 403, 'WALLET_LOCKED');
    expectError(
      await simulate(t, sk, [
        { productId: tea.id, quantity: 1000 },
        { productId: tea.id, quantity: 1000 },
      ]),
      400,
      'INSUFFICIENT_STOCK',
    );
    assert.equal((await stockOf(t, sk, tea.id)).quantity, stock);
    assert.equal((await t.runtime.db.selectFrom('orders').select('id').execute()).length, orders.length);
    assert.equal(await walletBalance(t, NEARLY_EMPTY.phone), poorBefore);
    assert.equal(await merchantBalance(t, sk), merchantBefore);
    await ledgerIsSound(t);
  });

  test('a cancel of a paid order refunds it in full (fee kept by the platform), returns the stock, once', async () => {
    const phone = freshPhone();
    const merchantBefore = await merchantBalance(t, sk);
    const placed = await order(2, phone);
    const stock = (await stockOf(t, sk, tea.id)).quantity;
    const cancelled = await act(placed.referenceNumber, 'cancel', { reason: 'Closed today' });
    expectStatus(cancelled, 200);
    const data = cancelled.body.data;
    assert.equal(data.status, 'CANCELLED');
    assert.equal(data.totalAmountRefunded, 4000);
    assert.equal(data.refunds.length, 1);
    assert.equal(data.refunds[0].amount, 4000);
    assert.equal(data.refunds[0].reason, 'Closed today');
    assert.equal(await walletBalance(t, phone), SANDBOX_NEW_WALLET_BALANCE - 100, 'all back but the payer fee');
    assert.equal(await merchantBalance(t, sk), merchantBefore, 'the merchant gives back what it got, fee returned');
    assert.equal((await stockOf(t, sk, tea.id)).quantity, stock! + 2);
    const refundPostings = await postingsOf(t, data.refunds[0].id);
    assert.ok(
      refundPostings.every((p) => p.kind === 'refund' && p.transaction_id === data.refunds[0].ledgerTransactionId),
    );
    assert.equal((await eventsOf(t, sk, placed.referenceNumber)).at(-1)!.data.amountRefunded, 4000);
    expectError(await act(placed.referenceNumber, 'cancel', { reason: 'again' }), 400, 'ORDER_INVALID_TRANSITION');
    expectError(await act(placed.referenceNumber, 'refund', {}), 400, 'ORDER_INVALID_TRANSITION');
    assert.equal(await walletBalance(t, phone), SANDBOX_NEW_WALLET_BALANCE - 100, 'refunded once');
    await ledgerIsSound(t);
  });

  test('refunds move money back with the provider fee in proportion; the cap is paid minus refunded', async () => {
    const phone = freshPhone();
    const merchantBefore = await merchantBalance(t, sk);
    const placed = await order(1, phone);
    const ref = placed.referenceNumber;
    expectError(await act(ref, 'refund', { amount: 2001 }), 400, 'REFUND_AMOUNT_INVALID');
    const partial = await act(ref, 'refund', { amount: 1000, reason: 'Cold tea' });
    expectStatus(partial, 200);
    assert.equal(partial.body.data.refunds[0].reason, 'Cold tea');
    assert.equal(await walletBalance(t, phone), SANDBOX_NEW_WALLET_BALANCE - 2100 + 1000);
    // Half the provider fee (25 of 50) comes back to the merchant with the half refund.
    assert.equal(await merchantBalance(t, sk), merchantBefore + 1950 - (1000 - 25));
    expectError(await act(ref, 'refund', { amount: 1001 }), 400, 'REFUND_AMOUNT_INVALID');
    const rest = await act(ref, 'refund', {});
    expectStatus(rest, 200);
    assert.equal(rest.body.data.totalAmountRefunded, 2000);
    assert.equal(await walletBalance(t, phone), SANDBOX_NEW_WALLET_BALANCE - 100);
    assert.equal(await merchantBalance(t, sk), merchantBefore);
    expectError(await act(ref, 'refund', { amount: 1 }), 400, 'ORDER_INVALID_TRANSITION');
    await ledgerIsSound(t);
  });

  test('an accepted modification charges or refunds the difference; a cancel then returns everything paid', async () => {
    const phone = freshPhone();
    const merchantBefore = await merchantBalance(t, sk);
    const placed = await order(1, phone);
    const ref = placed.referenceNumber;
    expectStatus(await act(ref, 'propose-modification', { items: [{ productId: tea.id, quantity: 3 }] }), 200);
    const up = await act(ref, 'modification/accept');
    expectStatus(up, 200);
    assert.equal(up.body.data.totalAmount, 6000);
    assert.equal(up.body.data.payment.amountPaid, 6000);
    assert.deepEqual(
      up.body.data.payment.adjustments.map((a: { amount: number }) => a.amount),
      [4000],
    );
    assert.equal(await walletBalance(t, phone), SANDBOX_NEW_WALLET_BALANCE - 100 - 6000, 'no second payer fee');
    assert.equal(await merchantBalance(t, sk), merchantBefore + 6000 - 150);

    expectStatus(await act(ref, 'propose-modification', { items: [{ productId: tea.id, quantity: 2 }] }), 200);
    const down = await act(ref, 'modification/accept');
    expectStatus(down, 200);
    assert.equal(down.body.data.payment.amountPaid, 4000);
    assert.deepEqual(
      down.body.data.payment.adjustments.map((a: { amount: number }) => a.amount),
      [4000, -2000],
    );
    assert.equal(await walletBalance(t, phone), SANDBOX_NEW_WALLET_BALANCE - 100 - 4000);
    assert.equal(await merchantBalance(t, sk), merchantBefore + 4000 - 100);
    const adjustment = down.body.data.payment.adjustments[1];
    assert.ok((await postingsOf(t, adjustment.id)).every((p) => p.transaction_id === adjustment.ledgerTransactionId));

    expectStatus(await act(ref, 'cancel', { reason: 'No more tea' }), 200);
    assert.equal(await walletBalance(t, phone), SANDBOX_NEW_WALLET_BALANCE - 100);
    assert.equal(await merchantBalance(t, sk), merchantBefore, 'every provider fee returned on the full refund');
    await ledgerIsSound(t);
  });

  test('a customer who cannot pay a higher total gets 402 and the order stays as it was', async () => {
    const cheap = await createProduct(t, sk, { name: 'Mint leaf', price: 40, status: 'ACTIVE', quantity: 100 });
    const owner = await t.createBusiness({ name: 'No fees' });
    const key = owner.keys.secretTest;
    await setFeePlan(t, owner.id, { providerBps: 100, payerFee: 0 });
    const leaf = await createProduct(t, key, { name: 'Mint leaf', price: 40, status: 'ACTIVE', quantity: 100 });
    assert.ok(cheap);
    const poorBefore = await walletBalance(t, NEARLY_EMPTY.phone);
    assert.ok(poorBefore >= 40, 'the nearly empty wallet holds 1.00 MRU');
    const placed = await simulate(t, key, [{ productId: leaf.id, quantity: 1 }], NEARLY_EMPTY.phone);
    expectStatus(placed, 201);
    const ref = placed.body.data.referenceNumber;
    const propose = await orderAction(t, key, `/${ref}/propose-modification`, {
      items: [{ productId: leaf.id, quantity: 50 }],
    });
    expectStatus(propose, 200);
    const refused = await orderAction(t, key, `/${ref}/modification/accept`);
    expectError(refused, 402, 'INSUFFICIENT_BALANCE');
    const after = (await t.request('GET', `/api/v1/dev/store/orders/${ref}`, { key })).body.data;
    assert.equal(after.totalAmount, 40);
    assert.equal(after.items[0].quantity, 1);
    assert.equal(after.payment.amountPaid, 40);
    assert.equal(after.proposedModification.totalAmount, 2000, 'the proposal stays for the customer to decline');
    assert.equal((await stockOf(t, key, leaf.id)).quantity, 99);
    assert.equal(await walletBalance(t, NEARLY_EMPTY.phone), poorBefore - 40);
    await ledgerIsSound(t);
  });

  test('a declined modification leaves the order unchanged and sends order.modification_declined', async () => {
    const phone = freshPhone();
    const placed = await order(1, phone);
    const ref = placed.referenceNumber;
    expectError(await act(ref, 'modification/decline'), 400, 'ORDER_INVALID_TRANSITION');
    expectStatus(await act(ref, 'propose-modification', { items: [{ productId: tea.id, quantity: 4 }] }), 200);
    const stock = (await stockOf(t, sk, tea.id)).quantity;
    const declined = await act(ref, 'modification/decline');
    expectStatus(declined, 200);
    assert.equal(declined.body.data.proposedModification, null);
    assert.equal(declined.body.data.totalAmount, 2000);
    assert.deepEqual(declined.body.data.payment, placed.payment);
    assert.equal((await stockOf(t, sk, tea.id)).quantity, stock);
    assert.equal(await walletBalance(t, phone), SANDBOX_NEW_WALLET_BALANCE - 2100);
    const last = (await eventsOf(t, sk, ref)).at(-1)!;
    assert.equal(last.event, 'order.modification_declined');
    assert.deepEqual(last.data, {
      referenceNumber: ref,
      totalAmount: 2000,
      proposedTotalAmount: 8000,
      proposedItems: [{ productId: tea.id, name: 'Tea', quantity: 4 }],
    });
    expectError(await act(ref, 'modification/accept'), 400, 'ORDER_INVALID_TRANSITION');
  });

  test('a flexible-price product takes the customer price, never below the catalog price', async () => {
    const gift = await createProduct(t, sk, { name: 'Tip jar', price: 500, isFlexiblePrice: true, status: 'ACTIVE' });
    const placed = await simulate(t, sk, [{ productId: gift.id, quantity: 2, price: 800 }]);
    expectStatus(placed, 201);
    assert.equal(placed.body.data.totalAmount, 1600);
    assert.equal(placed.body.data.items[0].price, 800);
    expectError(await simulate(t, sk, [{ productId: gift.id, quantity: 1, price: 499 }]), 400, 'VALIDATION_ERROR');
    expectError(await simulate(t, sk, [{ productId: tea.id, quantity: 1, price: 2500 }]), 400, 'VALIDATION_ERROR');
    const plain = await simulate(t, sk, [{ productId: gift.id, quantity: 1 }]);
    assert.equal(plain.body.data.totalAmount, 500);
  });
});
