import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { parse } from 'csv-parse/sync';
import { sql } from 'kysely';
import { formatPageAmount } from '../../src/lib/i18n.js';
import { EXPORT_COLUMNS } from '../../src/modules/payments/balance-transactions.js';
import { foldPendingMovements } from '../../src/modules/payments/ledger.js';
import { act, createIntent } from '../intents/support.js';
import { simulate } from '../orders/support.js';
import { createPayout, earn, newPhone, payoutTo } from '../payouts/support.js';
import { createProduct } from '../products/support.js';
import { expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { FormClient, signedIn } from './support.js';

/** The UTC month `back` months before this one, YYYY-MM. */
function monthsAgo(back: number): string {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - back, 1)).toISOString().slice(0, 7);
}

const BALANCE = '/dashboard/balance';
// The page's one money formatter: a negative amount's sign and number isolated (issue 54 item 7).
const mru = (centimes: number) => formatPageAmount(centimes, 'en');

interface Txn {
  id: string;
  type: string;
  amount: number;
  fee: number;
  net: number;
  source: { reference: string; kind: string };
  balanceAfter: number | null;
}

/** The ids of the transaction rows a balance page lists, in its order. */
function rowIds(html: string): string[] {
  return [...html.matchAll(/<tr id="(txn_[^"]+)"/g)].map((match) => match[1]!);
}

/** The HTML of one transaction's row. */
function rowOf(html: string, id: string): string {
  const start = html.indexOf(`<tr id="${id}"`);
  assert(start >= 0, `no row ${id}`);
  return html.slice(start, html.indexOf('</tr>', start));
}

describe('the Balance page: balance transactions of the session business, filtered, exported', () => {
  let t: TestApp;
  let business: TestBusiness;
  let client: FormClient;
  let paidRef: string;
  let otherRef: string;
  /** From the API, newest first: the refund, the payment, the other payment. */
  let txns: Txn[];
  const today = new Date().toISOString().slice(0, 10);

  beforeAll(async () => {
    t = await startTestApp();
    business = await t.createBusiness();
    client = (await signedIn(t, business.id)).client;
    const sk = business.keys.secretTest;
    const other = await createIntent(t, sk, { amount: 4_000 });
    expectStatus(await act(t, sk, other.referenceNumber, 'simulate', { outcome: 'success' }), 200);
    const paid = await createIntent(t, sk, { amount: 10_000, label: 'Panier <b>' });
    expectStatus(await act(t, sk, paid.referenceNumber, 'simulate', { outcome: 'success' }), 200);
    expectStatus(await act(t, sk, paid.referenceNumber, 'refund', { amount: 2_500 }), 200);
    paidRef = paid.referenceNumber;
    otherRef = other.referenceNumber;
    const listed = await t.request('GET', '/api/v1/dev/balance/transactions', { key: sk });
    expectStatus(listed, 200);
    txns = listed.body.data.items;
    assert.deepEqual(
      txns.map((txn) => [txn.type, txn.source.reference]),
      [
        ['refund', paidRef],
        ['payment', paidRef],
        ['payment', otherRef],
      ],
    );
    // A business of its own: none of its transactions may show.
    const stranger = await t.createBusiness();
    const theirs = await createIntent(t, stranger.keys.secretTest, { amount: 7_000 });
    expectStatus(await act(t, stranger.keys.secretTest, theirs.referenceNumber, 'simulate', {}), 200);
  });
  afterAll(() => t.close());

  test('the page lists every transaction newest first, with its amounts, net and source link', async () => {
    const page = await client.get(BALANCE);
    assert.equal(page.status, 200, page.html.slice(0, 500));
    assert.deepEqual(
      rowIds(page.html),
      txns.map((txn) => txn.id),
    );
    const available = txns.reduce((sum, txn) => sum + txn.net, 0);
    assert.match(page.html, new RegExp(`<p class="figure" id="available">${mru(available)}</p>`));
    const [refund, payment] = txns;
    assert.equal(refund!.amount, -2_500);
    assert.equal(payment!.amount, 10_000);
    assert.ok(payment!.net < payment!.amount, 'the platform keeps a fee of the payment');
    for (const txn of txns) {
      const row = rowOf(page.html, txn.id);
      assert.ok(row.includes(`<td class="num net" data-label="Net">${mru(txn.net)}</td>`), row);
      assert.ok(row.includes(`<td class="num" data-label="Fee">${mru(txn.fee)}</td>`), row);
      assert.ok(row.includes(`href="/dashboard/payments/${txn.source.reference}"`), row);
      assert.ok(row.includes('<span title="'), 'not folded yet: no balance after');
    }
    assert.match(rowOf(page.html, refund!.id), /<td>Refund<\/td>/);
    assert.match(rowOf(page.html, payment!.id), /<td>Payment<\/td>/);
    assert.ok(rowOf(page.html, payment!.id).includes('Panier &lt;b&gt;'), 'the description, escaped');
    assert.match(page.html, /<a href="\/dashboard\/balance" aria-current="page">Balance<\/a>/);

    // Once the worker folds the movements, each row shows the balance it left.
    await foldPendingMovements(t.runtime.db);
    const folded = await client.get(BALANCE);
    assert.ok(
      rowOf(folded.html, txns[0]!.id).includes(`<td class="num" data-label="Balance after">${mru(available)}</td>`),
    );
    assert.ok(
      rowOf(folded.html, txns[2]!.id).includes(`<td class="num" data-label="Balance after">${mru(txns[2]!.net)}</td>`),
    );
  });

  test('the type and source filters narrow the list and are kept in the form', async () => {
    const refunds = await client.get(`${BALANCE}?type=refund`);
    assert.equal(refunds.status, 200);
    assert.deepEqual(rowIds(refunds.html), [txns[0]!.id]);
    assert.match(refunds.html, /<option value="refund" selected>Refund<\/option>/);

    const payments = await client.get(`${BALANCE}?type=payment&source=`);
    assert.deepEqual(rowIds(payments.html), [txns[1]!.id, txns[2]!.id]);

    // A pasted reference, in lower case with spaces, is read as the reference.
    const one = await client.get(`${BALANCE}?source=${encodeURIComponent(` ${paidRef.toLowerCase()} `)}`);
    assert.equal(one.status, 200);
    assert.deepEqual(rowIds(one.html), [txns[0]!.id, txns[1]!.id]);
    assert.ok(one.html.includes(`name="source" value="${paidRef}"`));
    assert.ok(!one.html.includes(otherRef));

    const both = await client.get(`${BALANCE}?type=payment&source=${otherRef}&from=${today}&to=${today}`);
    assert.deepEqual(rowIds(both.html), [txns[2]!.id]);
    const before = await client.get(`${BALANCE}?from=2020-01-01&to=2020-01-31`);
    assert.deepEqual(rowIds(before.html), []);
    assert.match(before.html, /No balance transactions\./);
  });

  test('a filter the page cannot read shows the page with what is wrong, never a 500', async () => {
    for (const [query, words] of [
      ['from=2024-13-45', 'From'],
      ['to=2024-02-30', 'To'],
      ['from=yesterday', 'From'],
      ['type=payout_to_mars', 'Type'],
      ['source=PI-123', 'Source'],
      ['type=payout_to_mars&from=nope', 'Type, From'],
    ] as const) {
      const page = await client.get(`${BALANCE}?${query}`);
      assert.equal(page.status, 400, `${query}: ${page.html.slice(0, 300)}`);
      assert.ok(
        page.html.includes(`<p class="error" role="alert">These filters are not valid: ${words}.</p>`),
        `${query}: ${page.html.slice(0, 2000)}`,
      );
      assert.match(page.html, /<form class="card filters" method="get" action="\/dashboard\/balance"/);
      assert.deepEqual(rowIds(page.html), []);
      assert.ok(!page.html.includes('id="export-csv"'));
    }
    const reversed = await client.get(`${BALANCE}?from=2024-02-02&to=2024-02-01`);
    assert.equal(reversed.status, 400);
    assert.match(reversed.html, /The start date is after the end date\./);
    // A value no form sends is the dashboard's 400 page, as on the other lists.
    assert.equal((await client.get(`${BALANCE}?page=0`)).status, 400);
  });

  test('the CSV export streams the rows of the filters chosen; the page links to it with all of them', async () => {
    // Issue 47: the export takes the list's filters, the type and the source too.
    const page = await client.get(`${BALANCE}?type=refund&from=${today}&to=${today}`);
    const filtered = `${BALANCE}/export.csv?type=refund&amp;from=${today}&amp;to=${today}`;
    assert.ok(page.html.includes(`<a id="export-csv" href="${filtered}"`), page.html);
    const refunds = await client.get(filtered.replaceAll('&amp;', '&'));
    assert.equal(refunds.status, 200, refunds.html.slice(0, 500));
    assert.deepEqual(
      refunds.html
        .trim()
        .split('\n')
        .slice(1)
        .map((line) => line.split(',')[0]),
      txns.filter((txn) => txn.type === 'refund').map((txn) => txn.id),
    );
    const bySource = await client.get(`${BALANCE}/export.csv?source=${paidRef.toLowerCase()}`);
    assert.equal(bySource.status, 200, bySource.html.slice(0, 500));
    assert.ok(bySource.html.trim().split('\n').slice(1).length >= 2);
    assert.ok(
      bySource.html
        .trim()
        .split('\n')
        .slice(1)
        .every((line) => line.includes(`,${paidRef},`)),
    );
    assert.equal((await client.get(`${BALANCE}/export.csv?type=bogus`)).status, 400);
    assert.equal((await client.get(`${BALANCE}/export.csv?source=XX-1`)).status, 400);
    const href = `${BALANCE}/export.csv?from=${today}&amp;to=${today}`;
    const csv = await client.get(href.replace('&amp;', '&'));
    assert.equal(csv.status, 200, csv.html.slice(0, 500));
    assert.match(csv.headers.get('content-type') ?? '', /^text\/csv/);
    assert.match(
      csv.headers.get('content-disposition') ?? '',
      /^attachment; filename="balance-transactions-test\.csv"$/,
    );
    const lines = csv.html.trim().split('\n');
    assert.equal(lines[0], EXPORT_COLUMNS.join(','));
    assert.deepEqual(
      lines.slice(1).map((line) => line.split(',')[0]),
      txns.map((txn) => txn.id),
    );
    const refundLine = lines.find((line) => line.startsWith(`${txns[0]!.id},`))!;
    assert.ok(refundLine.startsWith(`${txns[0]!.id},refund,-2500,${txns[0]!.fee},${txns[0]!.net},MRU,${paidRef},`));

    const none = await client.get(`${BALANCE}/export.csv?from=2020-01-01&to=2020-01-31`);
    assert.equal(none.html.trim(), EXPORT_COLUMNS.join(','));
    assert.equal((await client.get(`${BALANCE}/export.csv?from=2024-02-30`)).status, 400);
    assert.equal((await client.get(`${BALANCE}/export.csv?from=2024-02-02&to=2024-02-01`)).status, 400);
    // Signed out: the sign-in page, never the file.
    const stranger = await new FormClient(t).get(`${BALANCE}/export.csv`);
    assert.equal(stranger.status, 303);
  });

  test('a paid payment page links to its balance transactions; an unpaid one does not', async () => {
    const page = await client.get(`/dashboard/payments/${paidRef}`);
    assert.equal(page.status, 200);
    assert.ok(page.html.includes(`<a id="balance-transactions" href="${BALANCE}?source=${paidRef}">`));
    const pending = await createIntent(t, business.keys.secretTest, { amount: 3_000 });
    const unpaid = await client.get(`/dashboard/payments/${pending.referenceNumber}`);
    assert.ok(!unpaid.html.includes('id="balance-transactions"'));
  });

  test("an order's payment links to the order page, and the order page links back", async () => {
    const sk = business.keys.secretTest;
    const product = await createProduct(t, sk, { name: 'Thé', price: 1_500, status: 'ACTIVE', quantity: 10 });
    const ordered = await simulate(t, sk, [{ productId: product.id, quantity: 2 }]);
    expectStatus(ordered, 201);
    const ref = ordered.body.data.referenceNumber as string;
    const page = await client.get(`${BALANCE}?source=${ref}`);
    assert.equal(page.status, 200, page.html.slice(0, 500));
    const [id] = rowIds(page.html);
    assert.ok(id && rowIds(page.html).length === 1, page.html);
    const row = rowOf(page.html, id);
    assert.match(row, /<td>Order payment<\/td>/);
    assert.ok(row.includes(`href="/dashboard/orders/${ref}"`), row);
    const order = await client.get(`/dashboard/orders/${ref}`);
    assert.ok(order.html.includes(`<a id="balance-transactions" href="${BALANCE}?source=${ref}">`));
  });

  test('statements: this month and the months with transactions, each as CSV and a printable page, behind the session', async () => {
    const shop = await t.createBusiness({ name: 'Statements <shop>' });
    const sk = shop.keys.secretTest;
    for (const amount of [5_000, 7_000]) {
      const intent = await createIntent(t, sk, { amount });
      expectStatus(await act(t, sk, intent.referenceNumber, 'simulate'), 200);
    }
    const [later, earlier] = (await t.request('GET', '/api/v1/dev/balance/transactions', { key: sk })).body.data
      .items as Txn[];
    // The first payment three months back: the months between saw nothing and are not offered.
    await sql`UPDATE balance_transactions SET created_at = ${new Date(`${monthsAgo(3)}-15T10:00:00.000Z`)}::timestamptz
      WHERE id = ${earlier!.id}`.execute(t.runtime.db);
    const { client: own } = await signedIn(t, shop.id);
    const page = await own.get(BALANCE);
    assert.equal(page.status, 200, page.html.slice(0, 500));
    assert.deepEqual(
      [...page.html.matchAll(/<tr data-month="([^"]+)">/g)].map((match) => match[1]),
      [monthsAgo(0), monthsAgo(3)],
    );
    for (const month of [monthsAgo(0), monthsAgo(3)]) {
      assert.ok(
        page.html.includes(`<a class="statement-csv" href="${BALANCE}/statements/${month}.csv" download>CSV</a>`),
      );
      assert.ok(page.html.includes(`<a class="statement-html" href="${BALANCE}/statements/${month}.html"`));
    }
    assert.match(page.html, /\(in progress\)/);
    // Every type of the filter has its label, payouts' included.
    assert.match(page.html, /<option value="payout_reversal">Payout returned<\/option>/);
    assert.ok(!page.html.includes('>undefined<'));

    const csv = await own.get(`${BALANCE}/statements/${monthsAgo(3)}.csv`);
    assert.equal(csv.status, 200, csv.html.slice(0, 500));
    assert.equal(csv.headers.get('content-type'), 'text/csv; charset=utf-8');
    assert.equal(csv.headers.get('content-disposition'), `attachment; filename="statement-${monthsAgo(3)}.csv"`);
    const lines = parse(csv.html, { relax_column_count: true, skip_empty_lines: true }) as string[][];
    assert.deepEqual(lines[0], ['Business', 'Statements <shop>']);
    assert.deepEqual(
      lines.find((line) => line[0] === 'Closing balance (MRU)'),
      ['Closing balance (MRU)', (earlier!.net / 100).toFixed(2)],
    );
    assert.deepEqual(
      lines.filter((line) => line[0]!.startsWith('txn_')).map((line) => line[0]),
      [earlier!.id],
    );

    const html = await own.get(`${BALANCE}/statements/${monthsAgo(0)}.html`);
    assert.equal(html.status, 200);
    assert.match(html.html, /^<!doctype html>\n<html lang="en" dir="ltr">/);
    assert.ok(html.html.includes('Statements &lt;shop&gt;'));
    assert.ok(html.html.includes(`<tr id="${later!.id}">`) && !html.html.includes(`<tr id="${earlier!.id}">`));
    assert.ok(
      html.html.includes(
        `<dd id="opening-balance"><bdi class="money">${formatPageAmount(earlier!.net, 'en')}</bdi></dd>`,
      ),
    );
    // In the dashboard's language.
    assert.equal((await own.submit(BALANCE, '/dashboard/preferences', { lang: 'fr' })).status, 303);
    const french = await own.get(`${BALANCE}/statements/${monthsAgo(0)}.html`);
    assert.match(french.html, /<html lang="fr" dir="ltr">/);
    assert.ok(french.html.includes('<h1>Relevé de solde</h1>'));
    assert.match((await own.get(BALANCE)).html, /<h2 id="h-statements">Relevés<\/h2>/);

    // A month that does not exist, or a file of no known kind, is the dashboard's 400 page.
    assert.equal((await own.get(`${BALANCE}/statements/2026-13.csv`)).status, 400);
    assert.equal((await own.get(`${BALANCE}/statements/${monthsAgo(0)}.pdf`)).status, 400);
    // Signed out: the sign-in page, never the statement.
    for (const file of [`${monthsAgo(0)}.csv`, `${monthsAgo(0)}.html`]) {
      const stranger = await new FormClient(t).get(`${BALANCE}/statements/${file}`);
      assert.equal(stranger.status, 303);
      assert.match(stranger.location ?? '', /^\/dashboard\/login\?next=/);
    }
    // Another business's session sees its own, empty, statement.
    const theirs = await client.get(`${BALANCE}/statements/${monthsAgo(3)}.csv`);
    assert.ok(!theirs.html.includes(earlier!.id));
  });
});

describe('the Balance page links each source to its own page', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  test('a payment, an order and a payout: every source link opens its page (200)', async () => {
    const business = await t.createBusiness();
    const sk = business.keys.secretTest;
    const paid = await earn(t, sk, 50_000);
    const product = await createProduct(t, sk, { name: 'Thé', price: 1_500, quantity: 5, status: 'ACTIVE' });
    const order = await simulate(t, sk, [{ productId: product.id, quantity: 1 }]);
    expectStatus(order, 201);
    const payout = await createPayout(t, sk, payoutTo(newPhone(), 1_000));
    expectStatus(payout, 201);
    const { client } = await signedIn(t, business.id);
    const page = await client.get(BALANCE);
    assert.equal(page.status, 200);
    const links = [...page.html.matchAll(/<a class="mono source" href="([^"]+)"/g)].map((match) => match[1]!);
    assert.deepEqual(links.sort(), [
      `/dashboard/orders/${order.body.data.referenceNumber}`,
      `/dashboard/payments/${paid}`,
      `/dashboard/payouts/${payout.body.data.referenceNumber}`,
    ]);
    for (const link of links) assert.equal((await client.get(link)).status, 200, link);
  });
});
