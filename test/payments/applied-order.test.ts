import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { parse } from 'csv-parse/sync';
import { sql } from 'kysely';
import { SANDBOX_FAILING_PAYOUT_PHONE } from '../../src/modules/sandbox/sandbox.js';
import { act, createIntent } from '../intents/support.js';
import { createPayout, newPhone, PAYOUTS, payoutTo, sendPayouts } from '../payouts/support.js';
import { expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { signedIn, type FormClient } from '../dashboard/support.js';
import { allBalanceTransactions, assertLedgerSound, BALANCE, fold, setPlan } from './support.js';

interface Txn {
  id: string;
  type: string;
  net: number;
  description: string;
  balanceAfter: number | null;
  createdAt: string;
}

/** Newest first, each row's balance after it is the next older row's plus its net (the first older one opens at 0). */
function assertChains(rows: { id: string; net: number; balanceAfter: number }[], what: string): void {
  for (const [index, row] of rows.entries()) {
    const older = rows[index + 1];
    assert.equal(row.balanceAfter, (older?.balanceAfter ?? 0) + row.net, `${what}: ${row.id} follows ${older?.id}`);
  }
}

/** The ids of the transaction rows of a page, in its order. */
const rowIds = (html: string) => [...html.matchAll(/<tr id="(txn_[^"]+)"/g)].map((match) => match[1]!);

/**
 * Issue 54 items 2, 3, 5 and 6: balance transactions in the order the balance took them (a
 * sequence, not the time: a batch's payouts share theirs), everywhere; descriptions stored as data
 * and worded in the reader's language.
 */
describe('balance transactions in the order the balance took them, described in every language', () => {
  let t: TestApp;
  let business: TestBusiness;
  let sk: string;
  let listed: Txn[];

  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    business = await t.createBusiness({ name: 'Chain shop' });
    sk = business.keys.secretTest;
    await setPlan(t, business.id, { providerBps: 250, payerFee: 0, tofBps: 500, tteBps: 0 });
    expectStatus(
      await t.admin('PUT', `/businesses/${business.id}/fees`, { payoutFeeFlat: 100, payoutFeeBps: 100 }),
      200,
    );
    const paid = await createIntent(t, sk, { amount: 150_000, label: 'Rent' });
    expectStatus(await act(t, sk, paid.referenceNumber, 'simulate'), 200);
    const second = await createIntent(t, sk, { amount: 50_000 });
    expectStatus(await act(t, sk, second.referenceNumber, 'simulate'), 200);
    expectStatus(await act(t, sk, paid.referenceNumber, 'refund', { amount: 12_345 }), 200);
    await fold(t);
    // A batch of five payouts: ten movements (each payout and its fee) in one instant.
    const batch = await t.request('POST', `${PAYOUTS}/batches`, {
      key: sk,
      body: { items: [30_000, 4_000, 12_000, 7_500, 1_000].map((amount) => payoutTo(newPhone(), amount)) },
      idempotencyKey: true,
    });
    expectStatus(batch, 201);
    expectStatus(
      await createPayout(t, sk, payoutTo(SANDBOX_FAILING_PAYOUT_PHONE, 2_000, { description: 'Loyer' })),
      201,
    );
    await sendPayouts(t);
    const more = await createIntent(t, sk, { amount: 9_999 });
    expectStatus(await act(t, sk, more.referenceNumber, 'simulate'), 200);
    await fold(t);
    listed = await allBalanceTransactions(t, sk);
    assert.equal(listed.length, 3 + 10 + 2 + 1 + 1);
  });
  afterAll(() => t.close());

  test("the API's list: each balanceAfter is the next older one's plus the net, the batch's payouts included", async () => {
    const batchTimes = listed.filter((txn) => txn.type === 'payout' || txn.type === 'payout_fee');
    assert.ok(
      new Set(batchTimes.slice(-10).map((txn) => txn.createdAt)).size === 1,
      "the batch's payouts and fees share their createdAt",
    );
    assertChains(
      listed.map((txn) => ({ ...txn, balanceAfter: txn.balanceAfter! })),
      'list',
    );
    const balance = await t.request('GET', BALANCE, { key: sk });
    assert.equal(listed[0]!.balanceAfter, balance.body.data.available);
    // Pages of 4 give the same order.
    const paged: Txn[] = [];
    for (let page = 1; page <= 5; page++) {
      const response = await t.request('GET', `${BALANCE}/transactions?limit=4&page=${page}`, { key: sk });
      paged.push(...response.body.data.items);
    }
    assert.deepEqual(
      paged.map((txn) => txn.id),
      listed.map((txn) => txn.id),
    );
    // A type filter keeps the order.
    const payouts = await allBalanceTransactions(t, sk, '&type=payout');
    assert.deepEqual(
      payouts.map((txn) => txn.id),
      listed.filter((txn) => txn.type === 'payout').map((txn) => txn.id),
    );
    await assertLedgerSound(t);
  });

  test('the export and the statement list them in the same order, with one balance column that chains', async () => {
    const exported = await t.request('GET', `${BALANCE}/transactions/export`, { key: sk });
    expectStatus(exported, 200);
    const lines = parse(exported.text, { columns: true }) as Record<string, string>[];
    assert.deepEqual(
      lines.map((line) => line.id),
      listed.map((txn) => txn.id),
    );
    assertChains(
      lines.map((line) => ({ id: line.id!, net: Number(line.net), balanceAfter: Number(line.balanceAfter) })),
      'export',
    );
    // The export is the API's machine format (decision 086): centimes, English descriptions.
    assert.deepEqual(
      lines.map((line) => line.description),
      listed.map((txn) => txn.description),
    );

    const month = new Date().toISOString().slice(0, 7);
    const csv = await t.request('GET', `${BALANCE}/statements/${month}?format=csv`, { key: sk });
    expectStatus(csv, 200);
    const rows = (parse(csv.text, { relax_column_count: true, skip_empty_lines: true }) as string[][]).filter((row) =>
      row[0]!.startsWith('txn_'),
    );
    // Oldest first; one balance column (the last), in MRU.
    assert.deepEqual(
      rows.map((row) => row[0]),
      [...listed].reverse().map((txn) => txn.id),
    );
    assert.ok(rows.every((row) => row.length === 9));
    assertChains(
      rows.reverse().map((row) => ({
        id: row[0]!,
        net: Math.round(Number(row[7]) * 100),
        balanceAfter: Math.round(Number(row[8]) * 100),
      })),
      'statement CSV',
    );
    const page = await t.request('GET', `${BALANCE}/statements/${month}?format=html`, { key: sk });
    assert.deepEqual(
      rowIds(page.text),
      [...listed].reverse().map((txn) => txn.id),
    );
  });

  test('descriptions are stored as data; the API words them in English as before', async () => {
    const stored = await sql<{ type: string; detail: Record<string, string> }>`
      SELECT type, detail FROM balance_transactions WHERE business_id = ${business.id}`.execute(t.runtime.db);
    for (const row of stored.rows) {
      for (const value of Object.values(row.detail)) {
        assert.doesNotMatch(value, /^(Payment|Refund|Payout|Fee of|Order|Modification)\b/, JSON.stringify(row));
      }
    }
    const byType = (type: string) => listed.filter((txn) => txn.type === type).map((txn) => txn.description);
    assert.ok(byType('payment').some((text) => /^Payment PI-[0-9]{16}: Rent$/.test(text)));
    assert.ok(byType('refund').every((text) => /^Refund \S+ of PI-[0-9]{16}$/.test(text)));
    assert.ok(byType('payout_fee').every((text) => /^Fee of payout PO-\S+$/.test(text)));
    assert.deepEqual(
      byType('payout_reversal').map((text) => text.replace(/PO-\S+/, 'PO-…')),
      ['Payout PO-… failed: amount and fee returned'],
    );
  });

  test('the Balance page words each description and names the return of a failed payout, in French and Arabic', async () => {
    const { client } = await signedIn(t, business.id);
    const wording = async (own: FormClient, lang: 'fr' | 'ar') => {
      assert.equal((await own.submit('/dashboard/balance', '/dashboard/preferences', { lang })).status, 303);
      const page = await own.get('/dashboard/balance');
      assert.equal(page.status, 200);
      assert.deepEqual(
        rowIds(page.html),
        listed.slice(0, 17).map((txn) => txn.id),
      );
      return page.html;
    };
    const cell = (html: string, id: string) => {
      const row = html.slice(html.indexOf(`<tr id="${id}"`), html.indexOf('</tr>', html.indexOf(`<tr id="${id}"`)));
      return [...row.matchAll(/<td>([^<]*)<\/td>/g)].map((match) => match[1]!);
    };
    const reversal = listed.find((txn) => txn.type === 'payout_reversal')!;
    const refund = listed.find((txn) => txn.type === 'refund')!;
    const french = await wording(client, 'fr');
    assert.deepEqual(cell(french, reversal.id).slice(1, 3), [
      'Versement restitué',
      `Versement ${reversal.description.split(' ')[1]} échoué : montant et frais restitués`,
    ]);
    assert.match(cell(french, refund.id)[2]!, /^Remboursement \S+ de PI-[0-9]{16}$/);
    const arabic = await wording(client, 'ar');
    const [, type, description] = cell(arabic, reversal.id);
    assert.equal(type, 'تحويل مُعاد');
    assert.match(description!, /^فشل التحويل \u2068PO-\S+\u2069: أعيد المبلغ والرسوم$/u);
    for (const txn of listed) {
      const words = cell(arabic, txn.id)[2]!;
      assert.ok(words.length > 0, `${txn.id}: a description`);
      assert.doesNotMatch(words, /\b(Payment|Refund|Payout|Fee)\b/, words);
    }
    // One Arabic word for "payout" on the page: تحويل, never سحب.
    assert.ok(!arabic.includes('سحب'));
  });

  test("a cancelled payout's return is not named failed: its type says it came back, its description why", async () => {
    const pending = (await createPayout(t, sk, payoutTo(newPhone(), 1_500))).body.data;
    expectStatus(
      await t.request('POST', `${PAYOUTS}/${pending.referenceNumber}/cancel`, {
        key: sk,
        idempotencyKey: true,
        body: {},
      }),
      200,
    );
    await fold(t);
    const month = new Date().toISOString().slice(0, 7);
    const expected = {
      en: ['Payout returned', /cancelled/, /fail/i],
      fr: ['Versement restitué', /annulé/, /échou/],
      ar: ['تحويل مُعاد', /أُلغي/, /فش?ل/],
    } as const;
    for (const [lang, [type, cancelled, failed]] of Object.entries(expected)) {
      const csv = await t.request('GET', `${BALANCE}/statements/${month}?format=csv&lang=${lang}`, { key: sk });
      expectStatus(csv, 200);
      const rows = (parse(csv.text, { relax_column_count: true, skip_empty_lines: true }) as string[][]).filter(
        (row) => row[0]!.startsWith('txn_') && row[4] === pending.referenceNumber && cancelled.test(row[3]!),
      );
      assert.equal(rows.length, 1, `${lang}: the cancelled payout's return`);
      assert.equal(rows[0]![2], type, lang);
      assert.doesNotMatch(rows[0]![2]!, failed, lang);
    }
  });
});
