import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { formatAmount, formatUtcDateTime, type Lang } from '../../src/lib/i18n.js';
import { act, createIntent } from '../intents/support.js';
import { createProduct } from '../products/support.js';
import { expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { signedIn, type FormClient } from './support.js';

/** The attempts a page's timeline shows, newest first: each `<li>` of `#payment-attempts`, by payment id. */
function attemptsOf(html: string): { id: string; html: string }[] {
  const list = /<ol class="timeline" id="payment-attempts">([\s\S]*?)<\/ol>/.exec(html);
  assert.ok(list, 'the page has its attempts timeline');
  return [...list[1]!.matchAll(/<li data-payment="([^"]+)">([\s\S]*?)<\/li>/g)].map((match) => ({
    id: match[1]!,
    html: match[2]!,
  }));
}

/** Issue 48 item 2: a payment's and an order's page show every attempt to pay, in the page's language. */
describe('the dashboard shows the attempts to pay as a timeline', () => {
  let t: TestApp;
  let business: TestBusiness;
  let sk: string;
  let owner: FormClient;
  beforeAll(async () => {
    t = await startTestApp();
    business = await t.createBusiness();
    sk = business.keys.secretTest;
    owner = (await signedIn(t, business.id)).client;
  });
  afterAll(() => t.close());

  async function inLanguage(lang: Lang) {
    const switched = await owner.submit('/dashboard', '/dashboard/preferences', { lang });
    assert.equal(switched.status, 303, switched.html.slice(0, 500));
  }

  test('in French: a failed attempt (too little in the wallet) and the one that paid, with when, method and amount', async () => {
    const intent = await createIntent(t, sk, { amount: 123_456 });
    const poor = await act(t, sk, intent.referenceNumber, 'simulate', { payerPhone: '+22220000002' });
    expectStatus(poor, 200);
    expectStatus(await act(t, sk, intent.referenceNumber, 'simulate'), 200);
    const payments = await t.request('GET', `/api/v1/dev/intents/${intent.referenceNumber}/payments`, { key: sk });
    const [succeeded, failed] = payments.body.data.items;

    await inLanguage('fr');
    const page = await owner.get(`/dashboard/payments/${intent.referenceNumber}`);
    assert.equal(page.status, 200, page.html.slice(0, 500));
    assert.match(page.html, /<h2 id="h-attempts">Tentatives de paiement<\/h2>/);
    const attempts = attemptsOf(page.html);
    assert.deepEqual(
      attempts.map((attempt) => attempt.id),
      [succeeded.id, failed.id],
    );
    const [paid, refused] = attempts;
    assert.match(paid!.html, /data-status="SUCCEEDED">Réussi</);
    assert.match(refused!.html, /data-status="FAILED">Échoué</);
    assert.match(refused!.html, /data-code="INSUFFICIENT_BALANCE">Solde du payeur insuffisant</);
    assert.doesNotMatch(paid!.html, /attempt-failure/);
    for (const [attempt, payment] of [
      [paid!, succeeded],
      [refused!, failed],
    ] as const) {
      assert.ok(attempt.html.includes(formatAmount(123_456, 'fr')), 'the amount as the French page writes it');
      assert.ok(attempt.html.includes(formatUtcDateTime(new Date(payment.createdAt), 'fr')), 'when, as the page dates');
      assert.match(attempt.html, /Simulation \(bac à sable\)/);
    }
    assert.match(refused!.html, /\+222\*\*\*\*\*\*02/);
    assert.doesNotMatch(page.html, /Succeeded|Sandbox simulation|balance was too low/, 'no English left');
  });

  test('in Arabic: a locked wallet and a simulated failure on a payment still pending', async () => {
    const intent = await createIntent(t, sk, { amount: 5_000 });
    const locked = await act(t, sk, intent.referenceNumber, 'simulate', { payerPhone: '+22220000003' });
    assert.equal(locked.status, 403, locked.text);
    expectStatus(await act(t, sk, intent.referenceNumber, 'simulate', { outcome: 'failure' }), 200);

    await inLanguage('ar');
    const page = await owner.get(`/dashboard/payments/${intent.referenceNumber}`);
    assert.equal(page.status, 200, page.html.slice(0, 500));
    const attempts = attemptsOf(page.html);
    assert.equal(attempts.length, 2);
    assert.match(attempts[0]!.html, /data-code="SIMULATED_FAILURE">فشل محاكى</);
    assert.match(attempts[1]!.html, /data-code="WALLET_LOCKED">كانت محفظة الدافع مقفلة</);
    for (const attempt of attempts) {
      assert.match(attempt.html, /data-status="FAILED">فاشل</);
      assert.ok(attempt.html.includes(formatAmount(5_000, 'ar')));
    }
    // The summary's last failure is worded by the same vocabulary.
    assert.match(page.html, /<dd id="last-failure">فشل محاكى<\/dd>/);
  });

  test("an order's page in Arabic shows its payment; an intent never paid says so", async () => {
    const product = await createProduct(t, sk, { name: 'Couscous', price: 2_500, status: 'ACTIVE', quantity: 5 });
    const order = await t.request('POST', '/api/v1/dev/store/orders/simulate', {
      key: sk,
      idempotencyKey: true,
      body: { items: [{ productId: product.id, quantity: 2 }], customerName: 'Mariem' },
    });
    expectStatus(order, 201);
    const ref = order.body.data.referenceNumber;

    await inLanguage('ar');
    const page = await owner.get(`/dashboard/orders/${ref}`);
    assert.equal(page.status, 200, page.html.slice(0, 500));
    assert.match(page.html, /<h2 id="h-attempts">محاولات الدفع<\/h2>/);
    const [attempt, ...others] = attemptsOf(page.html);
    assert.equal(others.length, 0);
    assert.match(attempt!.html, /data-status="SUCCEEDED">ناجح</);
    assert.match(attempt!.html, /محاكاة تجريبية/);
    assert.ok(attempt!.html.includes(formatAmount(5_000, 'ar')));

    await inLanguage('en');
    const unpaid = await createIntent(t, sk, { amount: 700 });
    const empty = await owner.get(`/dashboard/payments/${unpaid.referenceNumber}`);
    assert.match(empty.html, /<p id="no-attempts">No attempt to pay yet\.<\/p>/);
  });
});
