import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { SANDBOX_FAILING_PAYOUT_PHONE } from '../../src/modules/sandbox/sandbox.js';
import { expectError, expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import {
  allBalanceTransactions,
  assertBalanceExplained,
  assertLedgerSound,
  BALANCE,
  fold,
  setPlan,
} from '../payments/support.js';
import { act, createIntent } from '../intents/support.js';
import { createPayout, getPayout, newPhone, PAYOUTS, sendPayouts } from '../payouts/support.js';
import { createSeller } from './support.js';

/**
 * Issue 52 item 4 (decision 082): a seller's payout leaves the seller's balance for the seller's
 * phone; a balance below amount + fee (a negative one included) is 402; a payout racing a refund
 * that takes the seller below zero has one of two serial outcomes, never a third.
 */

const PAYER = '+22252000181';

async function sellerBalance(t: TestApp, key: string, id: string): Promise<number> {
  const response = await t.request('GET', `/api/v1/dev/sellers/${id}/balance`, { key });
  expectStatus(response, 200);
  return response.body.data.available;
}

async function merchantBalance(t: TestApp, key: string): Promise<number> {
  const response = await t.request('GET', BALANCE, { key });
  expectStatus(response, 200);
  return response.body.data.available;
}

async function payoutCount(t: TestApp, businessId: string): Promise<number> {
  const row = await t.runtime.db
    .selectFrom('payouts')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('business_id', '=', businessId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** A split payment giving `seller` `share` (the business bears the fee); returns the intent's reference. */
async function splitPayment(t: TestApp, key: string, seller: string, amount: number, share: number) {
  const intent = await createIntent(t, key, { amount, splits: [{ seller, amount: share }] });
  expectStatus(await act(t, key, intent.referenceNumber, 'simulate', { payerPhone: PAYER }), 200);
  return intent.referenceNumber as string;
}

describe("sellers' payouts (decision 082)", () => {
  let t: TestApp;
  let shop: TestBusiness;
  let key: string;
  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '1000000' } });
    shop = await t.createBusiness({ name: 'Payout stalls', approveLive: true });
    key = shop.keys.secretTest;
    await setPlan(t, shop.id, { providerBps: 100, payerFee: 0, tofBps: 500, tteBps: 0 });
    // A flat payout fee of 50 centimes, so that amount + fee is what the seller's balance must cover.
    expectStatus(await t.admin('PUT', `/businesses/${shop.id}/fees`, { payoutFeeFlat: 50 }), 200);
    expectStatus(
      await t.admin('POST', '/wallets', { phone: PAYER, pin: '1234', balance: 100_000_000, environment: 'test' }),
      201,
    );
  });
  afterAll(() => t.close());

  test("paid from the seller's balance to its phone: seller on the payout, its events and its balance transactions", async () => {
    const phone = newPhone();
    const seller = (await createSeller(t, key, { name: 'Stall P', phone })).id;
    await splitPayment(t, key, seller, 10_000, 6_000);
    const business = await merchantBalance(t, key);
    const response = await createPayout(t, key, { amount: 1_000, seller });
    expectStatus(response, 201);
    const payout = response.body.data;
    assert.equal(payout.seller, seller);
    assert.deepEqual(payout.destination, { type: 'WALLET', phone });
    assert.equal(await sellerBalance(t, key, seller), 6_000 - 1_000 - payout.fee);
    assert.equal(await merchantBalance(t, key), business, "the business's balance is untouched");
    expectStatus(await createPayout(t, key, { amount: 10, seller, destination: { type: 'WALLET', phone } }), 201);

    await sendPayouts(t);
    assert.equal((await getPayout(t, key, payout.referenceNumber)).status, 'PAID');
    const events = await t.runtime.db
      .selectFrom('events')
      .select(['event', 'body'])
      .where('subject', '=', payout.referenceNumber)
      .orderBy('sequence')
      .execute();
    assert.deepEqual(
      events.map((event) => [event.event, JSON.parse(event.body).data.seller]),
      [
        ['payout.created', seller],
        ['payout.paid', seller],
      ],
    );
    await fold(t);
    const items = await allBalanceTransactions(t, key, `&seller=${seller}`);
    const mine = items.filter((item) => item.source.reference === payout.referenceNumber);
    assert.deepEqual(
      mine.map((item) => [item.type, item.net, item.seller]).sort(),
      [
        ['payout', -1_000, seller],
        ['payout_fee', -payout.fee, seller],
      ].sort(),
    );
    assert.equal(
      items.reduce((sum, item) => sum + item.net, 0),
      await sellerBalance(t, key, seller),
    );
    // balanceAfter is the seller's own: its share first, then each payout movement lower, to what it holds.
    const payment = items.find((item) => item.type === 'payment');
    assert.equal(payment.balanceAfter, 6_000);
    const afters = items.map((item) => item.balanceAfter as number);
    assert.equal(Math.min(...afters), await sellerBalance(t, key, seller));
    // A business payout settles none of the seller's transactions.
    await assertBalanceExplained(t, key);
    await assertLedgerSound(t);
  });

  test('402 INSUFFICIENT_FUNDS below amount + fee, and for a balance a refund took below zero; nothing written', async () => {
    const seller = (await createSeller(t, key, { name: 'Stall N', phone: newPhone() })).id;
    const reference = await splitPayment(t, key, seller, 10_000, 5_000);
    const before = await payoutCount(t, shop.id);
    // 5,000 with its fee of 50 is more than the 5,000 the seller holds.
    expectError(await createPayout(t, key, { amount: 4_951, seller }), 402, 'INSUFFICIENT_FUNDS');
    const first = await createPayout(t, key, { amount: 4_000, seller });
    expectStatus(first, 201);
    // The refund is never refused: it takes 5,000 back, the seller ends below zero.
    expectStatus(await act(t, key, reference, 'refund'), 200);
    const negative = await sellerBalance(t, key, seller);
    assert.ok(negative < 0, String(negative));
    const count = await payoutCount(t, shop.id);
    expectError(await createPayout(t, key, { amount: 1, seller }), 402, 'INSUFFICIENT_FUNDS');
    assert.equal(await payoutCount(t, shop.id), count);
    assert.equal(count, before + 1);
    assert.equal(await sellerBalance(t, key, seller), negative);
    await fold(t);
    await assertLedgerSound(t);
  });

  test('a failed payout returns its money to the seller (payout_reversal with seller)', async () => {
    const seller = (await createSeller(t, key, { name: 'Stall F', phone: SANDBOX_FAILING_PAYOUT_PHONE })).id;
    await splitPayment(t, key, seller, 10_000, 3_000);
    const payout = (await createPayout(t, key, { amount: 2_000, seller })).body.data;
    await sendPayouts(t);
    assert.equal((await getPayout(t, key, payout.referenceNumber)).status, 'FAILED');
    assert.equal(await sellerBalance(t, key, seller), 3_000);
    await fold(t);
    const items = await allBalanceTransactions(t, key, `&seller=${seller}&type=payout_reversal`);
    assert.deepEqual(
      items.map((item) => [item.net, item.seller]),
      [[2_000 + payout.fee, seller]],
    );
    await assertLedgerSound(t);
  });

  test('refusals: another phone, no destination and no seller, unknown or foreign seller, the other environment', async () => {
    const seller = (await createSeller(t, key, { name: 'Stall R', phone: newPhone() })).id;
    const before = await payoutCount(t, shop.id);
    const other = await createPayout(t, key, { amount: 1, seller, destination: { type: 'WALLET', phone: newPhone() } });
    expectError(other, 400, 'VALIDATION_ERROR');
    assert.equal(other.body.error.details[0].field, 'body.destination.phone');
    const none = await createPayout(t, key, { amount: 1 });
    expectError(none, 400, 'VALIDATION_ERROR');
    assert.equal(none.body.error.details[0].field, 'body.destination');
    expectError(await createPayout(t, key, { amount: 1, seller: 'SL-0000000000000000' }), 404, 'SELLER_NOT_FOUND');
    const foreign = await t.createBusiness({ name: 'Other stalls' });
    const theirs = (await createSeller(t, foreign.keys.secretTest)).id;
    expectError(await createPayout(t, key, { amount: 1, seller: theirs }), 404, 'SELLER_NOT_FOUND');
    const live = (await createSeller(t, shop.keys.secretLive)).id;
    expectError(await createPayout(t, key, { amount: 1, seller: live }), 403, 'SANDBOX_MISMATCH');
    expectError(await createPayout(t, key, { amount: 1, seller: 'nope' }), 400, 'VALIDATION_ERROR');
    expectError(
      await t.request('POST', `${PAYOUTS}/batches`, {
        key,
        body: { items: [{ amount: 1, seller, destination: { type: 'WALLET', phone: newPhone() } }] },
        idempotencyKey: true,
      }),
      400,
      'VALIDATION_ERROR',
    );
    assert.equal(await payoutCount(t, shop.id), before);
  });

  test('a payout racing a refund that takes the seller below zero: one of the two serial outcomes, every time', async () => {
    const outcomes = { paid: 0, refused: 0 };
    const later = <T>(ms: number, send: () => Promise<T>) =>
      new Promise<T>((resolve, reject) => setTimeout(() => send().then(resolve, reject), ms));
    for (let round = 0; round < 12; round++) {
      const seller = (await createSeller(t, key, { name: `Race ${round}`, phone: newPhone() })).id;
      const reference = await splitPayment(t, key, seller, 10_000, 5_000);
      const before = await payoutCount(t, shop.id);
      // On PostgreSQL both run at once; a head start of a few milliseconds to one side or the other
      // makes each outcome likely in some round (on PGlite they run one after the other).
      const lead = [0, 0, 4, 8, 12, 20][round % 6]!;
      const payoutFirst = round % 2 === 0;
      const [payout, refund] = await Promise.all([
        later(payoutFirst ? 0 : lead, () => createPayout(t, key, { amount: 4_000, seller })),
        later(payoutFirst ? lead : 0, () => act(t, key, reference, 'refund')),
      ]);
      expectStatus(refund, 200);
      const balance = await sellerBalance(t, key, seller);
      if (payout.status === 201) {
        // The payout read the balance first: the refund then took the seller below zero.
        assert.equal(payout.body.data.seller, seller);
        assert.equal(balance, 5_000 - 4_000 - payout.body.data.fee - 5_000);
        assert.equal(await payoutCount(t, shop.id), before + 1);
        outcomes.paid += 1;
      } else {
        // The refund committed first: the payout saw nothing left, and wrote nothing.
        expectError(payout, 402, 'INSUFFICIENT_FUNDS');
        assert.equal(balance, 0);
        assert.equal(await payoutCount(t, shop.id), before);
        outcomes.refused += 1;
      }
      // Never a payout after the seller is below zero.
      if (balance < 0) expectError(await createPayout(t, key, { amount: 1, seller }), 402, 'INSUFFICIENT_FUNDS');
      await fold(t);
      const items = await allBalanceTransactions(t, key, `&seller=${seller}`);
      assert.equal(
        items.reduce((sum, item) => sum + item.net, 0),
        balance,
      );
    }
    assert.equal(outcomes.paid + outcomes.refused, 12, JSON.stringify(outcomes));
    await assertLedgerSound(t);
    await assertBalanceExplained(t, key);
  });
});
