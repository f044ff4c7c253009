import assert from 'node:assert/strict';
import { afterAll, beforeAll, test } from 'vitest';
import fc from 'fast-check';
import { expectStatus, startTestApp, type TestApp } from '../support/harness.js';
import { createProduct } from '../products/support.js';
import { act, createIntent } from '../intents/support.js';
import { ledgerIsSound, merchantBalance, orderAction, setFeePlan, walletBalance } from './support.js';

const WALLET_START = 1_000_000;
const WALLETS = ['+22251000000', '+22251000001'];

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '1000000' } });
  for (const phone of WALLETS) {
    expectStatus(await t.admin('POST', '/wallets', { phone, pin: '1234', balance: 0, environment: 'test' }), 201);
  }
});
afterAll(() => t.close());

async function fundWallets(): Promise<void> {
  for (const phone of WALLETS) {
    const balance = await walletBalance(t, phone);
    if (balance < WALLET_START) {
      const credit = { phone, amount: WALLET_START - balance, environment: 'test' };
      expectStatus(await t.admin('POST', '/wallets/credit', credit), 200);
    }
    assert.equal(await walletBalance(t, phone), WALLET_START);
  }
}

type Operation =
  | { kind: 'order'; quantity: number; wallet: number }
  | { kind: 'cancel'; order: number }
  | { kind: 'refund'; order: number; share: number }
  | { kind: 'modify'; order: number; quantity: number; accept: boolean }
  | { kind: 'advance'; order: number };

const operation: fc.Arbitrary<Operation> = fc.oneof(
  fc.record({
    kind: fc.constant('order' as const),
    quantity: fc.integer({ min: 1, max: 4 }),
    wallet: fc.integer({ min: 0, max: 1 }),
  }),
  fc.record({ kind: fc.constant('cancel' as const), order: fc.nat() }),
  fc.record({
    kind: fc.constant('refund' as const),
    order: fc.nat(),
    share: fc.double({ min: 0.05, max: 1, noNaN: true }),
  }),
  fc.record({
    kind: fc.constant('modify' as const),
    order: fc.nat(),
    quantity: fc.integer({ min: 1, max: 6 }),
    accept: fc.boolean(),
  }),
  fc.record({ kind: fc.constant('advance' as const), order: fc.nat() }),
);

/**
 * Issue 11: after any sequence of order, cancel, refund, modify (accepted or declined) and
 * workflow steps, the ledger check passes, each wallet holds what it was given less what its
 * orders kept (net paid, refunds and payer fees), and the merchant holds exactly its net payments
 * (intents and orders: what was charged less what went back, less the provider fees it kept).
 * The 4xx a step may get (a refused transition, nothing left) changes nothing.
 */
test('money follows every order change: ledger sound, balances equal net payments (property-based)', async () => {
  let run = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.array(operation, { minLength: 1, maxLength: 8 }),
      fc.integer({ min: 1, max: 40_000 }),
      fc.integer({ min: 0, max: 400 }),
      fc.integer({ min: 0, max: 300 }),
      async (operations, price, providerBps, payerFee) => {
        run += 1;
        await fundWallets();
        const business = await t.createBusiness({ name: `Money ${run}` });
        const key = business.keys.secretTest;
        await setFeePlan(t, business.id, { providerBps, payerFee });
        const product = await createProduct(t, key, { name: 'Item', price, quantity: 10_000, status: 'ACTIVE' });
        // One intent payment too: the merchant's balance is its intents and its orders together.
        // (Never the reserved sandbox amount, which always fails.)
        const intentAmount = price === 1313 ? 1314 : price;
        const intent = await createIntent(t, key, { amount: intentAmount });
        expectStatus(await act(t, key, intent.referenceNumber, 'simulate', { payerPhone: WALLETS[0] }), 200);
        const refs: string[] = [];
        for (const op of operations) {
          const ref = refs.length > 0 ? refs[(op as { order?: number }).order! % refs.length]! : undefined;
          switch (op.kind) {
            case 'order': {
              const placed = await orderAction(t, key, '/simulate', {
                items: [{ productId: product.id, quantity: op.quantity }],
                customerName: 'P',
                customerPhone: WALLETS[op.wallet],
              });
              expectStatus(placed, 201);
              refs.push(placed.body.data.referenceNumber);
              break;
            }
            case 'cancel':
              if (ref) await orderAction(t, key, `/${ref}/cancel`, { reason: 'property' });
              break;
            case 'refund': {
              if (!ref) break;
              const order = (await t.request('GET', `/api/v1/dev/store/orders/${ref}`, { key })).body.data;
              const left = order.payment ? order.payment.amountPaid - order.totalAmountRefunded : 0;
              await orderAction(t, key, `/${ref}/refund`, { amount: Math.max(1, Math.floor(left * op.share)) });
              break;
            }
            case 'modify':
              if (!ref) break;
              await orderAction(t, key, `/${ref}/propose-modification`, {
                items: [{ productId: product.id, quantity: op.quantity }],
              });
              await orderAction(t, key, `/${ref}/modification/${op.accept ? 'accept' : 'decline'}`);
              break;
            case 'advance':
              if (ref) await orderAction(t, key, `/${ref}/accept`);
              break;
          }
        }
        await ledgerIsSound(t);
        // Wallets: given less every order's net paid, refunds and payer fees, less the intent.
        const orders = await t.runtime.db
          .selectFrom('orders')
          .selectAll()
          .where('business_id', '=', business.id)
          .execute();
        for (const [index, phone] of WALLETS.entries()) {
          const kept = orders
            .filter((order) => order.customer_phone === phone)
            .reduce((sum, o) => sum + o.amount_paid - o.total_amount_refunded + o.payment!.payerFee, 0);
          const intentCost = index === 0 ? intentAmount + payerFee : 0;
          assert.equal(await walletBalance(t, phone), WALLET_START - kept - intentCost, `wallet ${phone}`);
        }
        // The merchant: net of every payment, less the provider fees it kept.
        const paidIntent = await t.runtime.db
          .selectFrom('payment_intents')
          .select(['amount_paid', 'provider_ttc'])
          .where('reference_number', '=', intent.referenceNumber)
          .executeTakeFirstOrThrow();
        const expected =
          paidIntent.amount_paid! -
          paidIntent.provider_ttc +
          orders.reduce(
            (sum, o) =>
              sum + o.amount_paid - o.total_amount_refunded - (o.fees!.providerTtc - o.fees!.providerReturned),
            0,
          );
        assert.equal(await merchantBalance(t, key), expected);
        // An order with nothing left paid leaves the merchant none of its provider fee.
        for (const order of orders) {
          if (order.amount_paid === order.total_amount_refunded) {
            assert.equal(order.fees!.providerReturned, order.fees!.providerTtc, order.reference_number);
          }
        }
      },
    ),
    { numRuns: 8 },
  );
});
