import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import fc from 'fast-check';
import { sql } from 'kysely';
import { expectError, expectStatus, startTestApp, type TestApp, type TestResponse } from '../support/harness.js';
import { act } from '../intents/support.js';
import { createSeller, SELLERS } from '../sellers/support.js';
import { createProduct } from '../products/support.js';
import { orderAction, simulate } from '../orders/support.js';
import { createPayout, newPhone, payoutTo } from '../payouts/support.js';
import {
  allBalanceTransactions,
  assertBalanceExplained,
  assertLedgerSound,
  BALANCE,
  fold,
  setPlan,
} from './support.js';

/**
 * Issue 52 "Proof": the payments property extended with sellers' payouts (some refused 402 when the
 * seller's balance is short or below zero) interleaved with split intents, partial refunds, and
 * orders of sellers' products modified (total down and up) and refunded. Invariants, not today's
 * centimes (rounding of refunds and fee shortfalls may change): every balance is the sum of its
 * balance transactions, `ledger check` passes, per payment each seller's takes are >= 0 and sum to
 * at most what the payment gave it, exactly that once the payment is wholly refunded; never a 5xx.
 */

const PAYOUT_FEE = 50;
/** An order step refused (a REFUNDED order is not modified, nothing left to refund...): a 4xx, never a 5xx. */
const REFUSED = [200, 400, 402, 409];
const STALLS = 3;

const op = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('pay' as const),
      amount: fc.oneof(fc.integer({ min: 100, max: 500 }), fc.integer({ min: 500, max: 2_000_000 })),
      proportional: fc.boolean(),
      byAmount: fc.boolean(),
      weights: fc.array(fc.integer({ min: 0, max: 100 }), { minLength: STALLS, maxLength: STALLS }),
      fill: fc.integer({ min: 5, max: 100 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('order' as const),
      quantities: fc.array(fc.integer({ min: 0, max: 4 }), { minLength: STALLS + 1, maxLength: STALLS + 1 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('modify' as const),
      target: fc.nat(),
      scale: fc.constantFrom(0, 1, 2, 3),
    }),
  },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constantFrom('refund' as const, 'orderRefund' as const),
      target: fc.nat(),
      fraction: fc.oneof(fc.constant(1), fc.double({ min: 0.001, max: 1, noNaN: true })),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('sellerPayout' as const),
      seller: fc.nat({ max: STALLS - 1 }),
      // Above 1: more than the seller holds, refused 402.
      fraction: fc.oneof(fc.constant(1), fc.double({ min: 0.01, max: 1.3, noNaN: true })),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('businessPayout' as const),
      fraction: fc.double({ min: 0.01, max: 0.5, noNaN: true }),
    }),
  },
);

/** Never a 5xx, and the answer is one of `ok`. */
function answered(response: TestResponse, what: string, ...ok: number[]): TestResponse {
  assert.ok(response.status < 500, `${what}: ${response.status} ${JSON.stringify(response.body)}`);
  assert.ok(ok.includes(response.status), `${what}: ${response.status} ${JSON.stringify(response.body)}`);
  return response;
}

describe("sellers' payouts among split payments, orders and refunds (property-based)", () => {
  const PAYER = '+22252000054';
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '1000000' } });
    expectStatus(
      await t.admin('POST', '/wallets', { phone: PAYER, pin: '1234', balance: 1_000_000_000, environment: 'test' }),
      201,
    );
  });
  afterAll(() => t.close());

  test('balances are their transactions, ledger sound, each seller gives back at most its share, exactly at the end', async () => {
    const seen = { pay: 0, refund: 0, order: 0, modify: 0, orderRefund: 0, payout: 0, refused: 0, businessPayout: 0 };
    const refusals: string[] = [];
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(0, 100, 175, 300),
        fc.array(fc.integer({ min: 0, max: 2_000 }), { minLength: STALLS, maxLength: STALLS }),
        fc.array(op, { minLength: 4, maxLength: 14 }),
        async (providerBps, commissions, ops) => {
          run += 1;
          const business = await t.createBusiness({ name: `Split payouts ${run}` });
          const key = business.keys.secretTest;
          await setPlan(t, business.id, { providerBps, payerFee: 7, tofBps: 500, tteBps: 100 });
          expectStatus(await t.admin('PUT', `/businesses/${business.id}/fees`, { payoutFeeFlat: PAYOUT_FEE }), 200);
          const sellers: string[] = [];
          const products: string[] = [];
          for (let i = 0; i < STALLS; i++) {
            const seller = await createSeller(t, key, {
              name: `S${i}`,
              phone: newPhone(),
              commissionBps: commissions[i]!,
            });
            sellers.push(seller.id);
            const price = 1_000 + 337 * i;
            products.push(
              (
                await createProduct(t, key, {
                  name: `P${i}`,
                  price,
                  quantity: 1_000_000,
                  status: 'ACTIVE',
                  seller: seller.id,
                })
              ).id,
            );
          }
          products.push(
            (await createProduct(t, key, { name: 'Own', price: 799, quantity: 1_000_000, status: 'ACTIVE' })).id,
          );
          // The business's own sale: its refunds' part is then never short for lack of sales.
          const own = await t.request('POST', '/api/v1/dev/intents', {
            key,
            body: { amount: 500_000 },
            idempotencyKey: true,
          });
          answered(
            await act(t, key, own.body.data.referenceNumber, 'simulate', { payerPhone: PAYER }),
            'own sale',
            200,
          );
          const intents: { ref: string; left: number }[] = [];
          const orders: { ref: string; quantities: number[] }[] = [];
          const sellerBalance = async (seller: string) =>
            answered(await t.request('GET', `${SELLERS}/${seller}/balance`, { key }), 'seller balance', 200).body.data
              .available as number;

          for (const o of ops) {
            switch (o.kind) {
              case 'pay': {
                const room = o.proportional ? o.amount : Math.floor((o.amount * (10_000 - providerBps)) / 10_000) - 2;
                const total = o.weights.reduce((sum, w) => sum + w, 0) || 1;
                const splits = sellers
                  .map((seller, i) => {
                    const part = (o.fill * o.weights[i]!) / 100 / total;
                    return o.byAmount
                      ? { seller, amount: Math.floor(room * part) }
                      : { seller, bps: Math.floor((10_000 * room * part) / o.amount) };
                  })
                  .filter((line) => (line.amount ?? line.bps ?? 0) > 0);
                if (splits.length === 0) break;
                const body = { amount: o.amount, splits, ...(o.proportional ? { feeBearer: 'PROPORTIONAL' } : {}) };
                const created = answered(
                  await t.request('POST', '/api/v1/dev/intents', { key, body, idempotencyKey: true }),
                  'split intent',
                  201,
                  400,
                );
                if (created.status === 400) break;
                const ref = created.body.data.referenceNumber as string;
                answered(await act(t, key, ref, 'simulate', { payerPhone: PAYER }), 'pay', 200);
                intents.push({ ref, left: o.amount });
                seen.pay += 1;
                break;
              }
              case 'refund': {
                const open = intents.filter((intent) => intent.left > 0);
                const intent = open[o.target % (open.length || 1)];
                if (!intent) break;
                const amount = Math.max(1, Math.floor(intent.left * o.fraction));
                // The business's line is locked and checked: drained by its payouts, it may be short.
                const refunded = answered(await act(t, key, intent.ref, 'refund', { amount }), 'refund', 200, 402);
                if (refunded.status === 402) {
                  expectError(refunded, 402, 'INSUFFICIENT_FUNDS');
                  refusals.push(`refund: ${refunded.body.error.code}`);
                } else {
                  intent.left -= amount;
                  seen.refund += 1;
                }
                break;
              }
              case 'order': {
                const items = o.quantities
                  .map((quantity, i) => ({ productId: products[i]!, quantity }))
                  .filter((item) => item.quantity > 0);
                if (items.length === 0) break;
                const placed = answered(await simulate(t, key, items), 'order', 201);
                orders.push({ ref: placed.body.data.referenceNumber, quantities: o.quantities });
                seen.order += 1;
                break;
              }
              case 'modify': {
                const order = orders[o.target % (orders.length || 1)];
                if (!order) break;
                // Scale 0 keeps one unit of the business's own product: the order is never emptied.
                const items = order.quantities
                  .map((quantity, i) => ({
                    productId: products[i]!,
                    quantity: i === STALLS ? Math.max(1, quantity * o.scale) : quantity * o.scale,
                  }))
                  .filter((item) => item.quantity > 0);
                const proposed = answered(
                  await orderAction(t, key, `/${order.ref}/propose-modification`, { items }),
                  'propose-modification',
                  ...REFUSED,
                );
                if (proposed.status !== 200) {
                  refusals.push(`modify: ${proposed.body.error.code}`);
                  break;
                }
                const accepted = answered(
                  await orderAction(t, key, `/${order.ref}/modification/accept`),
                  'accept',
                  ...REFUSED,
                );
                if (accepted.status === 200) seen.modify += 1;
                break;
              }
              case 'orderRefund': {
                const order = orders[o.target % (orders.length || 1)];
                if (!order) break;
                const row = await t.runtime.db
                  .selectFrom('orders')
                  .select(['amount_paid', 'total_amount_refunded'])
                  .where('reference_number', '=', order.ref)
                  .executeTakeFirstOrThrow();
                const left = Number(row.amount_paid) - Number(row.total_amount_refunded);
                const body =
                  o.fraction === 1 || left <= 1 ? {} : { amount: Math.max(1, Math.floor(left * o.fraction)) };
                const refunded = answered(
                  await orderAction(t, key, `/${order.ref}/refund`, body),
                  'order refund',
                  ...REFUSED,
                );
                if (refunded.status === 200) seen.orderRefund += 1;
                else refusals.push(`order refund: ${refunded.body.error.code}`);
                break;
              }
              case 'sellerPayout': {
                const seller = sellers[o.seller]!;
                const before = await sellerBalance(seller);
                const amount = Math.max(1, Math.floor((before - PAYOUT_FEE) * o.fraction));
                const response = answered(await createPayout(t, key, { amount, seller }), 'seller payout', 201, 402);
                // Nothing races here: the answer follows from the balance read before it.
                if (before >= amount + PAYOUT_FEE) {
                  expectStatus(response, 201);
                  assert.equal(response.body.data.fee, PAYOUT_FEE);
                  assert.equal(await sellerBalance(seller), before - amount - PAYOUT_FEE);
                  seen.payout += 1;
                } else {
                  expectError(response, 402, 'INSUFFICIENT_FUNDS');
                  assert.equal(await sellerBalance(seller), before, 'a refused payout reserves nothing');
                  seen.refused += 1;
                }
                break;
              }
              case 'businessPayout': {
                const available = answered(await t.request('GET', BALANCE, { key }), 'balance', 200).body.data
                  .available as number;
                const amount = Math.floor(available * o.fraction);
                if (amount < 1) break;
                answered(await createPayout(t, key, payoutTo(newPhone(), amount)), 'business payout', 201);
                seen.businessPayout += 1;
                break;
              }
            }
          }

          await fold(t);
          await assertLedgerSound(t);
          await assertBalanceExplained(t, key);
          for (const seller of sellers) {
            const items = await allBalanceTransactions(t, key, `&seller=${seller}`);
            for (const item of items) assert.equal(item.seller, seller);
            assert.equal(
              items.reduce((sum, item) => sum + item.net, 0),
              await sellerBalance(seller),
              `${seller}: its balance is the sum of its transactions`,
            );
          }
          await assertTakesWithinShares(t, business.id);
        },
      ),
      // A pinned seed: the check below that every kind of step happened failed once on a random
      // draw (2026-12-07, CI: every modification was refused, its orders refunded first), so CI
      // draws the same 20 cases, which cover every kind.
      { numRuns: 20, seed: 7 },
    );
    // The property is not met vacuously: every kind of step happened, payouts both paid and refused.
    for (const [kind, count] of Object.entries(seen))
      assert.ok(count >= 2, `${kind}: ${JSON.stringify(seen)} ${refusals.join(' | ')}`);
  });
});

/**
 * Per payment (an intent's or an order's) and seller: what the payment gave it, and each later
 * movement of that seller on it (a refund's or a lower total's) only takes back, never more in all
 * than was given, and all of it once the payment is wholly refunded.
 */
async function assertTakesWithinShares(t: TestApp, businessId: string): Promise<void> {
  const rows = await sql<{ source_reference: string; seller_id: string; type: string; net: string }>`
    SELECT source_reference, seller_id, type, net::text FROM balance_transactions
    WHERE business_id = ${businessId} AND seller_id IS NOT NULL AND source_kind IN ('payment_intent', 'order')
    ORDER BY created_at, id`.execute(t.runtime.db);
  const closed = await sql<{ reference: string }>`
    SELECT reference_number AS reference FROM payment_intents
      WHERE business_id = ${businessId} AND amount_paid > 0 AND total_amount_refunded >= amount_paid
    UNION SELECT reference_number FROM orders
      WHERE business_id = ${businessId} AND amount_paid > 0 AND total_amount_refunded >= amount_paid`.execute(
    t.runtime.db,
  );
  const wholly = new Set(closed.rows.map((row) => row.reference));
  const lines = new Map<string, { given: number; taken: number; reference: string }>();
  for (const row of rows.rows) {
    const key = `${row.source_reference} ${row.seller_id}`;
    const line = lines.get(key) ?? { given: 0, taken: 0, reference: row.source_reference };
    const net = Number(row.net);
    if (row.type === 'payment' || row.type === 'order_payment') line.given += net;
    else {
      assert.ok(net <= 0, `${key}: a ${row.type} only takes back (${net})`);
      line.taken -= net;
    }
    lines.set(key, line);
  }
  for (const [key, line] of lines) {
    assert.ok(line.given >= 0, `${key}: given ${line.given}`);
    assert.ok(line.taken <= line.given, `${key}: took back ${line.taken} of ${line.given}`);
    if (wholly.has(line.reference)) assert.equal(line.taken, line.given, `${key}: wholly refunded`);
  }
}
