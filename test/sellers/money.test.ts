import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
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
import { createSeller, SELLERS } from './support.js';

/**
 * Issue 52 item 4 (decision 082): each movement of a seller's account is a balance transaction of
 * the seller; its list, export and statement read like the business's, which stays its own.
 */

const PAYER = '+22252000081';

async function sellerBalance(t: TestApp, key: string, id: string): Promise<number> {
  const response = await t.request('GET', `${SELLERS}/${id}/balance`, { key });
  expectStatus(response, 200);
  return response.body.data.available;
}

describe("sellers' balance transactions and statements (decision 082)", () => {
  let t: TestApp;
  let shop: TestBusiness;
  let key: string;
  let a: string;
  let b: string;
  let reference: string;
  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '1000000' } });
    shop = await t.createBusiness({ name: 'Three stalls', approveLive: true });
    key = shop.keys.secretTest;
    await setPlan(t, shop.id, { providerBps: 100, payerFee: 0, tofBps: 500, tteBps: 0 });
    expectStatus(
      await t.admin('POST', '/wallets', { phone: PAYER, pin: '1234', balance: 100_000_000, environment: 'test' }),
      201,
    );
    a = (await createSeller(t, key, { name: 'Stall A' })).id;
    b = (await createSeller(t, key, { name: 'Stall B' })).id;
    const intent = await createIntent(t, key, {
      amount: 100_000,
      feeBearer: 'PROPORTIONAL',
      splits: [
        { seller: a, amount: 33_333 },
        { seller: b, amount: 25_001 },
      ],
    });
    reference = intent.referenceNumber;
    expectStatus(await act(t, key, reference, 'simulate', { payerPhone: PAYER }), 200);
    expectStatus(await act(t, key, reference, 'refund', { amount: 40_000 }), 200);
    await fold(t);
  });
  afterAll(() => t.close());

  test("a seller's list: its share (gross, fee, net), the refund's reversal, seller named, balanceAfter chained on its account", async () => {
    const items = await allBalanceTransactions(t, key, `&seller=${a}`);
    assert.deepEqual(
      items.map((item) => [
        item.type,
        item.amount,
        item.fee,
        item.net,
        item.balanceAfter,
        item.seller,
        item.source.reference,
      ]),
      [
        ['refund', -13_200, 0, -13_200, 19_800, a, reference],
        ['payment', 33_333, 333, 33_000, 33_000, a, reference],
      ],
    );
    assert.equal(
      items.reduce((sum, item) => sum + item.net, 0),
      await sellerBalance(t, key, a),
    );
    const itemsB = await allBalanceTransactions(t, key, `&seller=${b}`);
    assert.equal(
      itemsB.reduce((sum, item) => sum + item.net, 0),
      await sellerBalance(t, key, b),
    );
    const one = await t.request('GET', `${BALANCE}/transactions/${items[0].id}`, { key });
    expectStatus(one, 200);
    assert.equal(one.body.data.seller, a);
    const filtered = await allBalanceTransactions(t, key, `&seller=${a}&type=payment&source=${reference}`);
    assert.equal(filtered.length, 1);
  });

  test("the business's own list is unchanged: its rows only, seller null, total from its counts", async () => {
    const items = await assertBalanceExplained(t, key);
    assert.deepEqual(
      items.map((item) => [item.type, item.seller]),
      [
        ['refund', null],
        ['payment', null],
      ],
    );
    const page = await t.request('GET', `${BALANCE}/transactions?limit=1`, { key });
    expectStatus(page, 200);
    assert.equal(page.body.data.total, 2);
    await assertLedgerSound(t);
  });

  test('unknown, another business’s, other environment’s, malformed seller: 404, 404, 403, 400', async () => {
    const other = await t.createBusiness({ name: 'Other market' });
    const theirs = (await createSeller(t, other.keys.secretTest)).id;
    const live = (await createSeller(t, shop.keys.secretLive)).id;
    for (const path of [
      `${BALANCE}/transactions?seller=`,
      `${BALANCE}/transactions/export?seller=`,
      `${BALANCE}/statements/2026-12?seller=`,
      `${BALANCE}/statements/2026-12?format=csv&seller=`,
    ]) {
      expectError(await t.request('GET', `${path}SL-0000000000000000`, { key }), 404, 'SELLER_NOT_FOUND');
      expectError(await t.request('GET', `${path}${theirs}`, { key }), 404, 'SELLER_NOT_FOUND');
      expectError(await t.request('GET', `${path}${live}`, { key }), 403, 'SANDBOX_MISMATCH');
      expectError(await t.request('GET', `${path}nope`, { key }), 400, 'VALIDATION_ERROR');
    }
  });

  test("the export takes seller: the seller's rows only", async () => {
    const response = await t.request('GET', `${BALANCE}/transactions/export?seller=${b}`, { key });
    expectStatus(response, 200);
    const lines = response.text.trim().split('\n');
    assert.equal(lines.length, 3);
    assert.match(lines[2]!, /^txn_[^,]+,payment,25001,250,24751,MRU,/);
  });

  test("a seller's statement: the business's shape, its own figures, JSON and CSV", async () => {
    const month = new Date().toISOString().slice(0, 7);
    const response = await t.request('GET', `${BALANCE}/statements/${month}?seller=${a}`, { key });
    expectStatus(response, 200);
    const statement = response.body.data;
    assert.deepEqual(statement.seller, { id: a, name: 'Stall A' });
    assert.equal(statement.business.id, shop.id);
    assert.equal(statement.openingBalance, 0);
    assert.equal(statement.closingBalance, 19_800);
    assert.equal(statement.transactionCount, 2);
    const payment = statement.totals.find((total: { type: string }) => total.type === 'payment');
    assert.deepEqual(payment, { type: 'payment', count: 1, gross: 33_333, fees: 333, net: 33_000 });

    const own = await t.request('GET', `${BALANCE}/statements/${month}`, { key });
    expectStatus(own, 200);
    assert.equal('seller' in own.body.data, false);
    assert.equal(own.body.data.transactionCount, 2);
    const merchant = await t.request('GET', BALANCE, { key });
    assert.equal(own.body.data.closingBalance, merchant.body.data.available);

    const csv = await t.request('GET', `${BALANCE}/statements/${month}?seller=${a}&format=csv`, { key });
    expectStatus(csv, 200);
    assert.ok(csv.text.includes(`Seller,Stall A,${a}\n`), csv.text);
    // In MRU, the type worded (decision 086).
    assert.ok(csv.text.includes(',Payment,'), csv.text);
    assert.ok(csv.text.includes(',333.33,3.33,330.00,'), csv.text);
  });
});
