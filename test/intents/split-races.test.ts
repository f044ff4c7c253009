import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { sql } from 'kysely';
import { expectStatus, startTestApp, type TestApp } from '../support/harness.js';
import { freshPhone } from '../orders/support.js';
import {
  allBalanceTransactions,
  assertBalanceExplained,
  assertLedgerSound,
  fold,
  setPlan,
} from '../payments/support.js';
import { createSeller } from '../sellers/support.js';
import { createPayout, newPhone, payoutTo } from '../payouts/support.js';
import { act, createIntent } from './support.js';

/**
 * Issue 52 "Bad input and races" for intents (decision 080): payments and refunds of intents split
 * between the same three sellers, at once, then at the issue's size (50 and 20) with the business's
 * payouts racing them. Sellers' accounts are shared (appended movements,
 * never locked), the business's is locked by its refunds only. On PostgreSQL they really race;
 * on PGlite they run one after the other.
 */
/** A seller's ledger account: its balance, checked to be the sum of its postings. */
async function sellerAccountBalance(t: TestApp, seller: string): Promise<number> {
  const account = await sql<{ balance: string; posted: string }>`
    SELECT a.balance::text, (SELECT coalesce(sum(p.amount), 0) FROM ledger_postings p WHERE p.account_id = a.id)::text AS posted
    FROM ledger_accounts a WHERE a.kind = 'seller' AND a.owner_id = ${seller}`.execute(t.runtime.db);
  assert.equal(account.rows[0]!.posted, account.rows[0]!.balance, `${seller}: the sum of its postings`);
  return Number(account.rows[0]!.balance);
}

describe('split races (issue 52)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '1000000' } });
  });
  afterAll(() => t.close());

  test('20 payments and 10 refunds racing on three sellers: every balance is the sum of its transactions', async () => {
    const business = await t.createBusiness({ name: 'Racing stalls' });
    const key = business.keys.secretTest;
    await setPlan(t, business.id, { providerBps: 175, payerFee: 9, tofBps: 500, tteBps: 100 });
    const sellers: string[] = [];
    for (const name of ['A', 'B', 'C']) sellers.push((await createSeller(t, key, { name })).id);
    const [a, b, c] = sellers as [string, string, string];
    const split = (i: number) =>
      i % 2 === 0
        ? {
            amount: 10_000 + i * 37,
            splits: [
              { seller: a, amount: 3_001 },
              { seller: b, amount: 2_003 },
              { seller: c, amount: 1_007 },
            ],
          }
        : {
            amount: 9_999 + i * 41,
            feeBearer: 'PROPORTIONAL',
            splits: [
              { seller: a, bps: 3_333 },
              { seller: b, bps: 2_500 },
              { seller: c, bps: 1_111 },
            ],
          };
    // The business's own sale, so that its refunds of split payments always have its share to give.
    const own = await createIntent(t, key, { amount: 50_000 });
    expectStatus(await act(t, key, own.referenceNumber, 'simulate', { payerPhone: freshPhone() }), 200);
    const paidFirst: string[] = [];
    for (let i = 0; i < 10; i++) {
      const intent = await createIntent(t, key, split(i));
      expectStatus(await act(t, key, intent.referenceNumber, 'simulate', { payerPhone: freshPhone() }), 200);
      paidFirst.push(intent.referenceNumber);
    }
    const toPay: string[] = [];
    for (let i = 0; i < 20; i++) toPay.push((await createIntent(t, key, split(i + 10))).referenceNumber);

    const responses = await Promise.all([
      ...toPay.map((ref) => act(t, key, ref, 'simulate', { payerPhone: freshPhone() })),
      ...paidFirst.map((ref, i) => act(t, key, ref, 'refund', i % 3 === 0 ? {} : { amount: 1_234 + i })),
    ]);
    for (const response of responses) expectStatus(response, 200);

    await fold(t);
    await assertLedgerSound(t);
    await assertBalanceExplained(t, key);
    const intents = await sql<{
      split_shares: { seller: string; net: number }[];
      amount_paid: string;
      total_amount_refunded: string;
    }>`SELECT split_shares, amount_paid, total_amount_refunded FROM payment_intents
      WHERE business_id = ${business.id} AND split_shares IS NOT NULL`.execute(t.runtime.db);
    assert.equal(intents.rows.length, 30);
    for (const seller of sellers) {
      // What each refund takes back rounds either way (decision 080's running totals): the balance
      // lies between the shares less their reversals rounded up and rounded down.
      let low = 0;
      let high = 0;
      for (const row of intents.rows) {
        const share = row.split_shares.find((line) => line.seller === seller)!;
        const taken = (share.net * Number(row.total_amount_refunded)) / Number(row.amount_paid);
        low += share.net - Math.ceil(taken);
        high += share.net - Math.floor(taken);
      }
      const balance = await sellerAccountBalance(t, seller);
      assert.ok(
        balance >= low && balance <= high,
        `${seller}: ${balance} outside its shares less its reversals [${low}, ${high}]`,
      );
    }
  });

  test('50 payments, 20 refunds and business payouts racing on three sellers and the business: balances are their transactions', async () => {
    const business = await t.createBusiness({ name: 'Racing market' });
    const key = business.keys.secretTest;
    await setPlan(t, business.id, { providerBps: 175, payerFee: 9, tofBps: 500, tteBps: 100 });
    expectStatus(await t.admin('PUT', `/businesses/${business.id}/fees`, { payoutFeeFlat: 25 }), 200);
    const sellers: string[] = [];
    for (const name of ['A', 'B', 'C']) sellers.push((await createSeller(t, key, { name })).id);
    const [a, b, c] = sellers as [string, string, string];
    const split = (i: number) =>
      i % 3 === 0
        ? { amount: 5_000 + i * 13 }
        : i % 3 === 1
          ? {
              amount: 10_000 + i * 37,
              splits: [
                { seller: a, amount: 3_001 + i },
                { seller: b, amount: 2_003 },
                { seller: c, amount: 1_007 },
              ],
            }
          : {
              amount: 9_999 + i * 41,
              feeBearer: 'PROPORTIONAL',
              splits: [
                { seller: a, bps: 3_333 },
                { seller: b, bps: 2_500 + i },
                { seller: c, bps: 1_111 },
              ],
            };
    // The business's own sale: enough for its refunds' part and its payouts whatever order they take.
    const own = await createIntent(t, key, { amount: 2_000_000 });
    expectStatus(await act(t, key, own.referenceNumber, 'simulate', { payerPhone: freshPhone() }), 200);
    const paidFirst: string[] = [];
    for (let i = 0; i < 20; i++) {
      const intent = await createIntent(t, key, split(i + 1));
      expectStatus(await act(t, key, intent.referenceNumber, 'simulate', { payerPhone: freshPhone() }), 200);
      paidFirst.push(intent.referenceNumber);
    }
    const toPay: string[] = [];
    for (let i = 0; i < 50; i++) toPay.push((await createIntent(t, key, split(i + 100))).referenceNumber);

    const splitCount = [...paidFirst.keys()]
      .map((i) => i + 1)
      .concat([...toPay.keys()].map((i) => i + 100))
      .filter((i) => i % 3 !== 0).length;
    const started = Date.now();
    const responses = await Promise.all([
      ...toPay.map((ref) => act(t, key, ref, 'simulate', { payerPhone: freshPhone() })),
      ...paidFirst.map((ref, i) => act(t, key, ref, 'refund', i % 4 === 0 ? {} : { amount: 997 + 31 * i })),
      ...Array.from({ length: 10 }, (_, i) => createPayout(t, key, payoutTo(newPhone(), 5_000 + i))),
    ]);
    const statuses = responses.map((response) => response.status);
    assert.deepEqual(
      statuses,
      [...Array(70).fill(200), ...Array(10).fill(201)],
      JSON.stringify(responses.filter((r) => r.status >= 300).map((r) => r.body)),
    );
    assert.ok(Date.now() - started < 30_000, `the race took ${Date.now() - started} ms`);

    await fold(t);
    await assertLedgerSound(t);
    await assertBalanceExplained(t, key);
    for (const seller of sellers) {
      const items = await allBalanceTransactions(t, key, `&seller=${seller}`);
      const balance = await t.request('GET', `/api/v1/dev/sellers/${seller}/balance`, { key });
      expectStatus(balance, 200);
      assert.equal(
        items.reduce((sum, item) => sum + item.net, 0),
        balance.body.data.available,
        `${seller}: its balance is the sum of its transactions`,
      );
      assert.equal(await sellerAccountBalance(t, seller), balance.body.data.available);
      // Every split payment gave every seller a share, and each its own balance transaction.
      assert.equal(items.filter((item) => item.type === 'payment').length, splitCount, seller);
    }
  });
});
