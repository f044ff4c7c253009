import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { formatAmount, formatPageAmount } from '../../src/lib/i18n.js';
import { act, createIntent } from '../intents/support.js';
import { freshPhone, orderAction, simulate } from '../orders/support.js';
import { createProduct } from '../products/support.js';
import { expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { signedIn, type FormClient } from './support.js';

/** The inner HTML of the element with this id (its first closing tag of the same name ends it). */
function innerOf(html: string, id: string): string {
  const start = html.indexOf(`id="${id}"`);
  assert(start >= 0, `no element #${id}`);
  const tag = /^<(\w+)/.exec(html.slice(html.lastIndexOf('<', start)))![1]!;
  return html.slice(html.indexOf('>', start) + 1, html.indexOf(`</${tag}>`, start));
}

/**
 * A negative amount as an Arabic page must hold it: the minus, then the digits, inside one
 * left-to-right isolate (U+2066 … U+2069), the unit after it.
 */
const ISOLATED_NEGATIVE = /^\u2066\u2212(\d[\d,]*\.\d\d)\u2069\u00a0أوقية$/;

/**
 * Issue 54 items 7 and 4: in Arabic a refund's minus is written before its digits, isolated left to
 * right, on the payment and the order page (one formatter for every page); a partly refunded payment or
 * order says so on its badge, in the list and on its page, while the API's status stays REFUNDED.
 */
describe('money on the Arabic pages: the minus before the digits, "Partly refunded" (issue 54, items 7 and 4)', () => {
  let t: TestApp;
  let business: TestBusiness;
  let arabic: FormClient;
  let paymentRef: string;
  let fullRef: string;
  let orderRef: string;

  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000', DASHBOARD_LOGIN_PER_MINUTE_IP: '1000' } });
    business = await t.createBusiness({ approveLive: false });
    expectStatus(await t.admin('PUT', `/businesses/${business.id}/fees`, { providerBps: 200, payerFee: 0 }), 200);
    const sk = business.keys.secretTest;
    const intent = await createIntent(t, sk, { amount: 125_000 });
    paymentRef = intent.referenceNumber;
    expectStatus(await act(t, sk, paymentRef, 'simulate', { outcome: 'success' }), 200);
    expectStatus(await act(t, sk, paymentRef, 'refund', { amount: 25_050 }), 200);
    const full = await createIntent(t, sk, { amount: 3_000 });
    fullRef = full.referenceNumber;
    expectStatus(await act(t, sk, fullRef, 'simulate', { outcome: 'success' }), 200);
    expectStatus(await act(t, sk, fullRef, 'refund', {}), 200);
    const product = await createProduct(t, sk, { name: 'Thé', price: 150_000, status: 'ACTIVE', quantity: 10 });
    const order = await simulate(t, sk, [{ productId: product.id, quantity: 1 }], freshPhone());
    expectStatus(order, 201);
    orderRef = order.body.data.referenceNumber;
    expectStatus(await orderAction(t, sk, `/${orderRef}/refund`, { amount: 125_050 }), 200);
    arabic = (await signedIn(t, business.id)).client;
    assert.equal((await arabic.submit('/dashboard', '/dashboard/preferences', { lang: 'ar' })).status, 303);
  });
  afterAll(() => t?.close());

  test('the formatter: a negative amount isolated with its minus first on pages, never in plain text', () => {
    assert.equal(formatPageAmount(-125_050, 'ar'), '\u2066\u22121,250.50\u2069\u00a0أوقية');
    assert.equal(formatPageAmount(-125_050, 'fr'), '\u2066\u22121\u202f250,50\u2069\u00a0MRU');
    assert.equal(formatPageAmount(125_050, 'ar'), formatAmount(125_050, 'ar'));
    assert.equal(formatPageAmount(100, 'en', 'always'), '\u2066+1.00\u2069\u00a0MRU');
    assert.equal(formatAmount(-125_050, 'ar'), '-1,250.50\u00a0أوقية');
    assert.doesNotMatch(formatAmount(-125_050, 'ar'), /[\u200e\u200f\u2066-\u2069]/);
  });

  test('the payment page: the refund and the fee with the minus before the digits, in an LTR isolate', async () => {
    const page = await arabic.get(`/dashboard/payments/${paymentRef}`);
    assert.equal(page.status, 200);
    assert.equal(ISOLATED_NEGATIVE.exec(innerOf(page.html, 'amount-refunded'))?.[1], '250.50');
    // 2 % of 1,250.00 at payment; the refund of 250.50 gave 5.01 of it back.
    assert.equal(ISOLATED_NEGATIVE.exec(innerOf(page.html, 'amount-fee'))?.[1], '25.00');
    assert.equal(innerOf(page.html, 'amount-fee-returned'), '\u2066+5.01\u2069\u00a0أوقية');
    assert.match(page.html, /<dt>الرسوم عند الدفع<\/dt><dd id="amount-fee">/);
    assert.match(page.html, /<h2 id="h-commission">العمولة عند الدفع<\/h2>/);
    // The badge: partly refunded, the API's status kept as the data.
    assert.match(
      page.html,
      /<span class="badge PARTLY_REFUNDED" id="status" data-status="REFUNDED">مُسترد جزئيًا<\/span>/,
    );
    const api = await t.request('GET', `/api/v1/dev/intents/${paymentRef}`, { key: business.keys.secretTest });
    assert.equal(api.body.data.status, 'REFUNDED');
    const full = await arabic.get(`/dashboard/payments/${fullRef}`);
    assert.match(full.html, /<span class="badge REFUNDED" id="status" data-status="REFUNDED">مُسترد<\/span>/);
  });

  test('the order page: its refund with the minus before the digits; "Partly refunded" on the page and in the list', async () => {
    const page = await arabic.get(`/dashboard/orders/${orderRef}`);
    assert.equal(page.status, 200);
    assert.equal(ISOLATED_NEGATIVE.exec(innerOf(page.html, 'amount-refunded'))?.[1], '1,250.50');
    assert.match(
      page.html,
      /<span class="badge PARTLY_REFUNDED" id="order-status" data-status="REFUNDED">مُسترد جزئيًا<\/span>/,
    );
    const list = await arabic.get('/dashboard/orders');
    const row = list.html.slice(list.html.indexOf(orderRef), list.html.indexOf('</tr>', list.html.indexOf(orderRef)));
    assert.match(row, /data-status="REFUNDED">مُسترد جزئيًا</);
    const payments = await arabic.get('/dashboard/payments');
    const paymentRow = payments.html.slice(
      payments.html.indexOf(paymentRef),
      payments.html.indexOf('</tr>', payments.html.indexOf(paymentRef)),
    );
    assert.match(paymentRow, /data-status="REFUNDED">مُسترد جزئيًا</);
    // The home's counts are the API's statuses: the card says its "Refunded" holds the partly refunded.
    const home = await arabic.get('/dashboard');
    assert.match(home.html, /id="refunded-counts-partly">تشمل حالة «مُسترد» المدفوعات المستردة جزئيًا أيضًا\.</);
  });
});
