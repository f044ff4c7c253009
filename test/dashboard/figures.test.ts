import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { barChart, chartDates, niceStep } from '../../src/modules/dashboard/chart.js';
import { act, createIntent } from '../intents/support.js';
import { freshPhone, orderAction, simulate } from '../orders/support.js';
import { createProduct } from '../products/support.js';
import { expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { signedIn, type FormClient } from './support.js';

/** The text of the element with this id (tags removed, spaces collapsed). */
function textOf(html: string, id: string): string {
  const start = html.indexOf(`id="${id}"`);
  assert(start >= 0, `no element #${id}`);
  const open = html.lastIndexOf('<', start);
  const tag = /^<(\w+)/.exec(html.slice(open))![1]!;
  const end = html.indexOf(`</${tag}>`, start);
  return html
    .slice(html.indexOf('>', start) + 1, end)
    .replace(/<[^>]+>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/** The count a row of a home status table shows, by its link. */
function countOf(html: string, tableId: string, status: string): number {
  const table = html.slice(html.indexOf(`id="${tableId}"`), html.indexOf('</table>', html.indexOf(`id="${tableId}"`)));
  const match = new RegExp(`status=${status}"[\\s\\S]*?<td class="num">(\\d+)</td>`).exec(table);
  assert(match, `no ${status} row in #${tableId}`);
  return Number(match[1]);
}

/** The total a list's pager shows ("Page 1 of 1 · 3"). */
async function listTotal(client: FormClient, path: string): Promise<number> {
  const page = await client.get(path);
  assert.equal(page.status, 200, page.html.slice(0, 300));
  const match = /Page \d+ of \d+ · (\d+)/.exec(page.html);
  assert(match, `no pager on ${path}`);
  return Number(match[1]);
}

describe('dashboard figures: the home page adds payments and orders up, refunds and fees are spelled out', () => {
  let t: TestApp;
  let business: TestBusiness;
  let owner: FormClient;
  let fixedRef: string;
  let openRef: string;
  let orderRef: string;

  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000', DASHBOARD_LOGIN_PER_MINUTE_IP: '1000' } });
    business = await t.createBusiness({ approveLive: false });
    const fees = await t.admin('PUT', `/businesses/${business.id}/fees`, { providerBps: 200, payerFee: 0 });
    assert.equal(fees.status, 200, fees.text);
    const sk = business.keys.secretTest;
    // 125.00 MRU paid, 50.00 refunded; an open amount paid 150.50; an order of 2 × 10.00.
    const fixed = await createIntent(t, sk, { amount: 12_500, label: 'Donation for the school' });
    fixedRef = fixed.referenceNumber;
    expectStatus(await act(t, sk, fixedRef, 'simulate', { outcome: 'success' }), 200);
    expectStatus(await act(t, sk, fixedRef, 'refund', { amount: 5_000 }), 200);
    const open = await createIntent(t, sk, { amountType: 'OPEN', label: 'Tip jar' });
    openRef = open.referenceNumber;
    expectStatus(await act(t, sk, openRef, 'simulate', { outcome: 'success', amount: 15_050 }), 200);
    await createIntent(t, sk, { amount: 3_000, label: 'Unpaid invoice' });
    const product = await createProduct(t, sk, { name: 'Couscous', price: 1_000, status: 'ACTIVE', quantity: 100 });
    const order = await simulate(t, sk, [{ productId: product.id, quantity: 2 }], freshPhone());
    expectStatus(order, 201);
    orderRef = order.body.data.referenceNumber;
    owner = (await signedIn(t, business.id)).client;
  });
  afterAll(() => t?.close());

  test('today and 30 days count payments and orders; the counts by status are the lists’ totals', async () => {
    const home = await owner.get('/dashboard');
    assert.equal(home.status, 200);
    // 125.00 + 150.50 + 20.00 (the refund does not undo a payment's volume).
    assert.equal(textOf(home.html, 'volume-today'), '295.50 MRU');
    assert.equal(textOf(home.html, 'volume-30'), '295.50 MRU');
    assert.equal(textOf(home.html, 'paid-today'), '3 paid (payments and orders)');
    for (const status of ['PENDING', 'PAID', 'REFUNDED']) {
      const shown = countOf(home.html, 'status-counts', status);
      assert.equal(shown, await listTotal(owner, `/dashboard/payments?status=${status}`), status);
    }
    assert.equal(countOf(home.html, 'status-counts', 'REFUNDED'), 1);
    for (const status of ['NEW', 'CANCELLED']) {
      const shown = countOf(home.html, 'order-status-counts', status);
      assert.equal(shown, await listTotal(owner, `/dashboard/orders?status=${status}`), status);
    }
    assert.equal(countOf(home.html, 'order-status-counts', 'NEW'), 1);
  });

  test('the latest payments show an open amount’s paid amount and a partial refund as such', async () => {
    const home = await owner.get('/dashboard');
    const latest = home.html.slice(home.html.indexOf('id="latest"'));
    const row = (ref: string) => latest.slice(latest.indexOf(ref), latest.indexOf('</tr>', latest.indexOf(ref)));
    assert.match(row(openRef), /150\.50\u00a0MRU/);
    assert.doesNotMatch(latest, /—/);
    // Issue 54 item 4: a "Partly refunded" badge (the API's status stays REFUNDED), how much beside it.
    const partly =
      /data-status="REFUNDED">Partly refunded<\/span><br><span class="muted refund-note">50\.00 of 125\.00\u00a0MRU refunded</;
    assert.match(row(fixedRef), partly);
    const list = await owner.get('/dashboard/payments');
    assert.match(list.html, partly);
  });

  test('the chart has a title, an axis of round values and every day’s value as text', async () => {
    const home = await owner.get('/dashboard');
    const svg = home.html.slice(home.html.indexOf('<svg class="chart"'), home.html.indexOf('</svg>'));
    assert.match(svg, /<title id="chart-title">Paid volume per day over the last 30 days<\/title>/);
    assert.match(svg, /<desc id="chart-desc">Highest day: 295\.50\u00a0MRU/);
    const ticks = [...svg.matchAll(/<text class="tick"[^>]*>([^<]+)<\/text>/g)].map((m) => m[1]);
    assert.deepEqual(ticks, ['0', '100', '200', '300', '400']);
    const values = home.html.slice(
      home.html.indexOf('id="chart-values"'),
      home.html.indexOf('</table>', home.html.indexOf('id="chart-values"')),
    );
    assert.equal([...values.matchAll(/<tr><td data-day=/g)].length, 30);
    const today = new Date().toISOString().slice(0, 10);
    const longToday = chartDates('en').long(today);
    assert.match(
      values,
      new RegExp(
        `<td data-day="${today}">${longToday}</td><td class="num">295\\.50\u00a0MRU</td><td class="num">3</td>`,
      ),
    );
  });

  test("the chart's days in each language's short date (Intl, UTC), not the ISO text's \"11-08\" (issue 54 item 15c)", async () => {
    assert.deepEqual(
      (['en', 'fr', 'ar'] as const).map((lang) => [
        chartDates(lang).short('2026-11-08'),
        chartDates(lang).long('2026-11-08'),
      ]),
      [
        ['Nov 8', 'November 8, 2026'],
        ['8 nov.', '8 novembre 2026'],
        ['8 نوفمبر', '8 نوفمبر 2026'],
      ],
    );
    const today = new Date().toISOString().slice(0, 10);
    for (const lang of ['en', 'fr', 'ar'] as const) {
      const home = await owner.get(`/dashboard?lang=${lang}`);
      const svg = home.html.slice(home.html.indexOf('<svg class="chart"'), home.html.indexOf('</svg>'));
      const labels = [...svg.matchAll(/<text [^>]*class="day" data-day="([0-9-]+)">([^<]+)<\/text>/g)];
      assert.ok(labels.length >= 4, `${lang}: ${labels.length} day labels`);
      for (const [, day, label] of labels) {
        assert.equal(label, chartDates(lang).short(day!), `${lang} ${day}`);
        assert.doesNotMatch(label!, /^\d{2}-\d{2}$/);
      }
      // Today's label ends at its bar rather than running past the chart's right edge.
      assert.match(svg, new RegExp(`<text [^>]*text-anchor="end" [^>]*data-day="${today}"`));
      assert.ok(svg.includes(`${chartDates(lang).long(today)}: `), `${lang}: today's bar names its date`);
      assert.match(svg, new RegExp(`<desc id="chart-desc">[^<]*\\(${chartDates(lang).long(today)}\\)`));
    }
  });

  test('the axis rounds up to 1, 2, 2.5 or 5 times a power of ten', () => {
    assert.equal(niceStep(0), 100);
    assert.equal(niceStep(29_550), 10_000);
    assert.equal(niceStep(90_000), 25_000);
    assert.equal(niceStep(5_930_200), 2_000_000);
    const chart = barChart([
      { day: '2026-01-01', total: 0 },
      { day: '2026-01-02', total: 40_000 },
    ]);
    assert.equal(chart.max, 40_000);
    assert.equal(chart.bars[1]!.y, chart.ticks[4]!.y, 'the largest bar reaches the top tick');
    assert.equal(chart.bars[0]!.height, 0);
  });

  test('a payment page: partial refund beside the status, gross / fee / net with the fee explained', async () => {
    const page = await owner.get(`/dashboard/payments/${fixedRef}`);
    assert.equal(page.status, 200);
    assert.match(
      page.html,
      /<span class="badge PARTLY_REFUNDED" id="status" data-status="REFUNDED">Partly refunded<\/span> <span class="refund-note" id="refund-note">50\.00 of 125\.00\u00a0MRU refunded</,
    );
    // 2 % of 125.00 is 2.50; the refund of 50.00 gives 1.00 of it back: both shown, each labelled
    // (issue 54 item 4), the commission card's 2.50 labelled "at payment" too.
    assert.equal(textOf(page.html, 'amount-gross'), '125.00 MRU');
    assert.equal(textOf(page.html, 'amount-refunded'), '\u2066−50.00\u2069 MRU');
    assert.match(page.html, /<dt>Fee at payment<\/dt><dd id="amount-fee">\u2066−2\.50\u2069\u00a0MRU<\/dd>/);
    assert.match(
      page.html,
      /<dt>Fee returned by refunds<\/dt><dd id="amount-fee-returned">\u2066\+1\.00\u2069\u00a0MRU<\/dd>/,
    );
    assert.match(page.html, /<h2 id="h-commission">Commission at payment<\/h2>/);
    assert.equal(textOf(page.html, 'amount-net'), '73.50 MRU');
    assert.match(textOf(page.html, 'fee-explained'), /TOF and TTE are the taxes/);
    const settings = await owner.get('/dashboard/settings');
    assert.match(textOf(settings.html, 'fee-plan-explained'), /TOF and TTE are the taxes/);
    const open = await owner.get(`/dashboard/payments/${openRef}`);
    assert.equal(textOf(open.html, 'amount-gross'), '150.50 MRU');
    assert.doesNotMatch(open.html, /id="refund-note"|id="amount-fee-returned"/);
    const { client: french } = await signedIn(t, business.id);
    await french.submit('/dashboard', '/dashboard/preferences', { lang: 'fr' });
    const inFrench = await french.get(`/dashboard/payments/${fixedRef}`);
    assert.equal(textOf(inFrench.html, 'status'), 'Remboursé en partie');
    assert.equal(textOf(inFrench.html, 'refund-note'), '50,00 remboursés sur 125,00 MRU');
    assert.match(textOf(inFrench.html, 'fee-explained'), /La TOF et la TTE sont les taxes/);
  });

  test('an order page: gross / fee / net, and a partial refund beside its status', async () => {
    const path = `/dashboard/orders/${orderRef}`;
    let page = await owner.get(path);
    assert.equal(textOf(page.html, 'amount-gross'), '20.00 MRU');
    assert.equal(textOf(page.html, 'amount-fee'), '\u2066−0.40\u2069 MRU');
    assert.equal(textOf(page.html, 'amount-net'), '19.60 MRU');
    expectStatus(await orderAction(t, business.keys.secretTest, `/${orderRef}/refund`, { amount: 500 }), 200);
    page = await owner.get(path);
    assert.equal(textOf(page.html, 'refund-note'), '5.00 of 20.00 MRU refunded');
    assert.equal(textOf(page.html, 'amount-refunded'), '\u2066−5.00\u2069 MRU');
    assert.equal(textOf(page.html, 'amount-fee'), '\u2066−0.40\u2069 MRU');
    assert.equal(textOf(page.html, 'amount-fee-returned'), '\u2066+0.10\u2069 MRU');
    assert.match(textOf(page.html, 'fee-explained'), /TOF and TTE/);
  });

  test("an order page: a later change's charge has its fee apart, not counted as the fee at payment", async () => {
    const sk = business.keys.secretTest;
    const tea = await createProduct(t, sk, { name: 'Tea', price: 1_000, status: 'ACTIVE', quantity: 100 });
    const order = await simulate(t, sk, [{ productId: tea.id, quantity: 2 }], freshPhone());
    expectStatus(order, 201);
    const ref = order.body.data.referenceNumber;
    const raise = { items: [{ productId: tea.id, quantity: 3 }] };
    expectStatus(await orderAction(t, sk, `/${ref}/propose-modification`, raise), 200);
    expectStatus(await orderAction(t, sk, `/${ref}/modification/accept`), 200);
    // 20.00 paid (2 % fee: 0.40), then 10.00 more charged by the change (its fee: 0.20).
    const page = await owner.get(`/dashboard/orders/${ref}`);
    assert.equal(textOf(page.html, 'amount-gross'), '30.00 MRU');
    assert.equal(textOf(page.html, 'amount-fee'), '\u2066−0.40\u2069 MRU');
    assert.match(
      page.html,
      /<dt>Fee on order changes<\/dt><dd id="amount-fee-adjustments">\u2066−0\.20\u2069\u00a0MRU</,
    );
    assert.equal(textOf(page.html, 'amount-net'), '29.40 MRU');
  });
});
