import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import fc from 'fast-check';
import type { FeeBearer, SplitLineRecord } from '../../src/db/schema.js';
import {
  NO_FEES,
  paymentCommission,
  refundCommission,
  withCharge,
  withRefund,
  type FeePlan,
} from '../../src/modules/payments/fees.js';
import { refundSettlement } from '../../src/modules/payments/settlement.js';
import { lineGross, refundTakes, splitShares } from '../../src/modules/payments/splits.js';
import { expectStatus, startTestApp, type TestApp } from '../support/harness.js';
import { createProduct } from '../products/support.js';
import { act, createIntent, getIntent } from '../intents/support.js';
import { merchantBalance, orderAction, setFeePlan, simulate } from '../orders/support.js';
import { createSeller, SELLERS } from '../sellers/support.js';
import { assertBalanceExplained, assertLedgerSound, fold, setPlan } from './support.js';

/**
 * Issue 52 (decisions 080, 081): a partial refund takes each seller's share rounded up, never
 * taking the business's line below zero, so a payment whose sellers took all of it never needs
 * the business's balance; a fee the business's room cannot bear is the sellers', as a fee.
 */

const sum = (values: readonly number[]) => values.reduce((all, value) => all + value, 0);

/** A payment, a split (sometimes filling all the room, so the business keeps nothing), and refunds. */
const refundCase = fc
  .record({
    amount: fc.oneof(fc.integer({ min: 1, max: 500 }), fc.integer({ min: 1, max: 5_000_000 })),
    providerBps: fc.integer({ min: 0, max: 2_000 }),
    tofBps: fc.integer({ min: 0, max: 10_000 }),
    feeBearer: fc.constantFrom<FeeBearer>('BUSINESS', 'PROPORTIONAL'),
    weights: fc.array(fc.integer({ min: 1, max: 1_000 }), { minLength: 1, maxLength: 10 }),
    all: fc.boolean(),
    fill: fc.integer({ min: 1, max: 100 }),
    refunds: fc.array(fc.oneof(fc.constant(1), fc.double({ min: 0.0001, max: 1, noNaN: true })), {
      minLength: 1,
      maxLength: 10,
    }),
  })
  .map((c) => {
    const plan: FeePlan = { ...c, payerFee: 0, tteBps: 0, revenueModel: 'COMMISSION', marginBps: 0 };
    const fee = paymentCommission(c.amount, plan).provider_ttc;
    const room = c.feeBearer === 'BUSINESS' ? c.amount - fee : c.amount;
    const total = (c.all ? room : Math.floor((room * c.fill) / 100)) as number;
    const parts = c.weights.map((weight) => Math.floor((total * weight) / sum(c.weights)));
    parts[parts.length - 1]! += total - sum(parts);
    const lines: SplitLineRecord[] = parts.map((amount, i) => ({ seller: `S${i}`, amount }));
    return { ...c, plan, lines };
  });

describe('refund takes (property-based)', () => {
  test('takes >= 0, cumulative <= net and = net at the end; the business line never below 0 nor past its share', () => {
    fc.assert(
      fc.property(refundCase, ({ amount, plan, feeBearer, lines, refunds }) => {
        const commission = paymentCommission(amount, plan);
        const shares = splitShares(amount, commission.provider_ttc, feeBearer, lines);
        const business = amount - commission.provider_ttc - sum(shares.map((share) => share.net));
        assert.ok(business >= 0);
        const taken = new Map<string, number>();
        let fees = withCharge(NO_FEES, amount, commission);
        let refunded = 0;
        let businessBack = 0;
        for (const fraction of [...refunds, 1]) {
          const left = amount - refunded;
          if (left === 0) break;
          const refund = Math.max(1, Math.floor(left * fraction));
          const back = refundCommission(fees, refund, refund === left);
          const takes = refundTakes(
            shares,
            { after: refunded + refund, of: amount },
            taken,
            refund - back.provider_ttc,
          );
          const plan = refundSettlement('B', refund, back, takes);
          assert.equal(sum(plan.lines.map((line) => line.amount)), plan.debit, 'the refund balances');
          const fromBusiness = refund - back.provider_ttc - sum(takes.map((take) => take.amount));
          assert.ok(fromBusiness >= 0, `the business line of a refund is ${fromBusiness}`);
          for (const take of takes) {
            assert.ok(take.amount > 0);
            taken.set(take.seller, (taken.get(take.seller) ?? 0) + take.amount);
          }
          for (const share of shares) assert.ok((taken.get(share.seller) ?? 0) <= share.net, share.seller);
          fees = withRefund(fees, refund, back);
          refunded += refund;
          businessBack += fromBusiness;
          // Less than a centime over the business's own share in the proportion refunded.
          assert.ok(businessBack * amount < business * refunded + amount, `${businessBack} of ${business}`);
          if (business === 0) assert.equal(businessBack, 0, 'sellers took it all: the business gives nothing');
        }
        for (const share of shares) assert.equal(taken.get(share.seller) ?? 0, share.net, 'every share back');
        assert.equal(businessBack, business, 'the business line closed');
      }),
      { numRuns: 2_000 },
    );
  });

  test('a fee the business cannot bear is spread over the sellers by gross; the lines add up exactly', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5_000_000 }),
        fc.array(fc.integer({ min: 1, max: 1_000 }), { minLength: 1, maxLength: 10 }),
        fc.integer({ min: 1, max: 100 }),
        fc.integer({ min: 0, max: 10_000 }),
        fc.constantFrom<FeeBearer>('BUSINESS', 'PROPORTIONAL'),
        (amount, weights, fill, feeBps, feeBearer) => {
          const total = Math.floor((amount * fill) / 100);
          const lines: SplitLineRecord[] = weights.map((weight, i) => ({
            seller: `S${i}`,
            amount: Math.floor((total * weight) / sum(weights)),
          }));
          const fee = Math.floor((amount * feeBps) / 10_000);
          const shares = splitShares(amount, fee, feeBearer, lines);
          const business = amount - fee - sum(shares.map((share) => share.net));
          assert.ok(business >= 0, `the business line is ${business}`);
          shares.forEach((share, i) => {
            assert.equal(share.gross, lineGross(lines[i]!, amount), 'the gross is never cut');
            assert.ok(share.fee >= 0 && share.net >= 0 && share.net === share.gross - share.fee);
          });
          const shortfall = Math.max(0, fee - (amount - sum(shares.map((share) => share.gross))));
          if (feeBearer === 'BUSINESS') assert.equal(sum(shares.map((share) => share.fee)), shortfall);
          if (feeBearer === 'BUSINESS' && shortfall > 0) assert.equal(business, 0);
        },
      ),
      { numRuns: 2_000 },
    );
  });
});

async function sellerBalance(t: TestApp, key: string, id: string): Promise<number> {
  const response = await t.request('GET', `${SELLERS}/${id}/balance`, { key });
  expectStatus(response, 200);
  return response.body.data.available;
}

async function refundedEvents(t: TestApp, reference: string) {
  const rows = await t.runtime.db
    .selectFrom('events')
    .select('body')
    .where('subject', '=', reference)
    .where('event', '=', 'payment.refunded')
    .orderBy('created_at')
    .execute();
  return rows.map((row) => JSON.parse(row.body).data);
}

describe('split refunds and fee shortfalls through HTTP and the ledger', () => {
  const PAYER = '+22252000054';
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '1000000' } });
    expectStatus(
      await t.admin('POST', '/wallets', { phone: PAYER, pin: '1234', balance: 100_000_000, environment: 'test' }),
      201,
    );
  });
  afterAll(() => t.close());

  test('sellers take everything, the business holds 0: partial refunds all succeed and it gives nothing', async () => {
    for (const feeBearer of ['BUSINESS', 'PROPORTIONAL'] as const) {
      const business = await t.createBusiness({ name: `All to sellers ${feeBearer}` });
      const key = business.keys.secretTest;
      await setPlan(t, business.id, { providerBps: 100, payerFee: 0, tofBps: 500 });
      const sellers: string[] = [];
      for (const name of ['A', 'B', 'C']) sellers.push((await createSeller(t, key, { name })).id);
      // BUSINESS: 100,001 centimes, fee 1,000 (1 %), the sellers take the 99,001 it leaves;
      // PROPORTIONAL: 100,000 centimes, the sellers' rates add up to all of it.
      const amount = feeBearer === 'BUSINESS' ? 100_001 : 100_000;
      const splits =
        feeBearer === 'BUSINESS'
          ? [33_333, 33_334, 32_334].map((amount, i) => ({ seller: sellers[i]!, amount }))
          : [3_333, 3_333, 3_334].map((bps, i) => ({ seller: sellers[i]!, bps }));
      const intent = await createIntent(t, key, { amount, feeBearer, splits });
      const reference = intent.referenceNumber as string;
      expectStatus(await act(t, key, reference, 'simulate', { payerPhone: PAYER }), 200);
      assert.equal(await merchantBalance(t, key), 0, 'the sellers took it all');
      const shares = (await getIntent(t, key, reference)).splits as { seller: string; net: number }[];
      for (const refund of [1, 7, 333, 10_001, 29_999]) {
        expectStatus(await act(t, key, reference, 'refund', { amount: refund }), 200);
        assert.equal(await merchantBalance(t, key), 0, `a refund of ${refund} asks nothing of the business`);
      }
      expectStatus(await act(t, key, reference, 'refund'), 200);
      for (const share of shares) assert.equal(await sellerBalance(t, key, share.seller), 0);
      const events = await refundedEvents(t, reference);
      assert.equal(events.length, 6);
      for (const event of events) {
        assert.deepEqual(
          event.splits_refunded.map((back: { seller: string }) => back.seller),
          sellers,
          'every seller of the split, in its order',
        );
        assert.equal(
          sum(event.splits_refunded.map((back: { amount: number }) => back.amount)),
          event.amount_refunded - event.commission.provider_ttc,
          'the sellers gave back all the refund but the fee',
        );
      }
      await fold(t);
      await assertLedgerSound(t);
      await assertBalanceExplained(t, key);
    }
  });

  test('payment.refunded of an intent without a split carries no splits_refunded', async () => {
    const business = await t.createBusiness({ name: 'No split' });
    const key = business.keys.secretTest;
    const intent = await createIntent(t, key, { amount: 5_000 });
    expectStatus(await act(t, key, intent.referenceNumber, 'simulate', { payerPhone: PAYER }), 200);
    expectStatus(await act(t, key, intent.referenceNumber, 'refund', { amount: 1_000 }), 200);
    const [event] = await refundedEvents(t, intent.referenceNumber);
    assert.equal('splits_refunded' in event, false);
  });

  test('the fee plan rose between create and payment: the sellers bear the shortfall as a fee, by gross', async () => {
    const business = await t.createBusiness({ name: 'Plan rose' });
    const key = business.keys.secretTest;
    await setPlan(t, business.id, { providerBps: 100, payerFee: 0, tofBps: 500 });
    const a = (await createSeller(t, key, { name: 'A' })).id;
    const b = (await createSeller(t, key, { name: 'B' })).id;
    const intent = await createIntent(t, key, {
      amount: 100_000,
      splits: [
        { seller: a, amount: 60_000 },
        { seller: b, amount: 39_000 },
      ],
    });
    await setPlan(t, business.id, { providerBps: 300, payerFee: 0, tofBps: 500 });
    expectStatus(await act(t, key, intent.referenceNumber, 'simulate', { payerPhone: PAYER }), 200);
    // Fee 3,000; the business's 1,000 bears 1,000 of it; the 2,000 left: round(2,000 × 60/99) = 1,212, then 788.
    assert.deepEqual((await getIntent(t, key, intent.referenceNumber)).splits, [
      { seller: a, gross: 60_000, fee: 1_212, net: 58_788 },
      { seller: b, gross: 39_000, fee: 788, net: 38_212 },
    ]);
    assert.equal(await merchantBalance(t, key), 0);
    assert.deepEqual([await sellerBalance(t, key, a), await sellerBalance(t, key, b)], [58_788, 38_212]);
    expectStatus(await act(t, key, intent.referenceNumber, 'refund', { amount: 33_333 }), 200);
    expectStatus(await act(t, key, intent.referenceNumber, 'refund'), 200);
    assert.deepEqual([await sellerBalance(t, key, a), await sellerBalance(t, key, b)], [0, 0]);
    await fold(t);
    await assertLedgerSound(t);
    await assertBalanceExplained(t, key);
  });

  test("an order whose sellers' lines leave less than the fee: they bear the shortfall; refunds ask the business nothing", async () => {
    const business = await t.createBusiness({ name: 'Stalls only' });
    const sk = business.keys.secretTest;
    await setFeePlan(t, business.id, { providerBps: 100, payerFee: 0, tofBps: 500 });
    const a = await createSeller(t, sk, { name: 'Dattes', commissionBps: 0 });
    const b = await createSeller(t, sk, { name: 'Thé', commissionBps: 0 });
    const dates = await createProduct(t, sk, {
      name: 'Dattes',
      price: 1_500,
      quantity: 100,
      status: 'ACTIVE',
      seller: a.id,
    });
    const tea = await createProduct(t, sk, {
      name: 'Thé',
      price: 1_000,
      quantity: 100,
      status: 'ACTIVE',
      seller: b.id,
    });
    const placed = await simulate(t, sk, [
      { productId: dates.id, quantity: 1 },
      { productId: tea.id, quantity: 1 },
    ]);
    expectStatus(placed, 201);
    const order = placed.body.data;
    // 25.00 MRU, fee 0.25: 15 and 10 by gross.
    assert.deepEqual(order.splits, [
      { seller: a.id, gross: 1_500, fee: 15, net: 1_485 },
      { seller: b.id, gross: 1_000, fee: 10, net: 990 },
    ]);
    assert.equal(await merchantBalance(t, sk), 0);
    for (const amount of [1, 3, 999]) {
      expectStatus(await orderAction(t, sk, `/${order.referenceNumber}/refund`, { amount }), 200);
      assert.equal(await merchantBalance(t, sk), 0, `a refund of ${amount} asks nothing of the business`);
    }
    expectStatus(await orderAction(t, sk, `/${order.referenceNumber}/refund`, {}), 200);
    assert.deepEqual([await sellerBalance(t, sk, a.id), await sellerBalance(t, sk, b.id)], [0, 0]);
    await fold(t);
    await assertLedgerSound(t);
    await assertBalanceExplained(t, sk);
  });
});
