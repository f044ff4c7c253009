import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { dashboardAccess } from '../../src/modules/dashboard/plugin.js';
import { SANDBOX_FAILING_PAYOUT_PHONE } from '../../src/modules/sandbox/sandbox.js';
import { act, createIntent } from '../intents/support.js';
import { simulate } from '../orders/support.js';
import { createPayout, earn, newPhone, PAYOUTS, payoutTo, sendPayouts } from '../payouts/support.js';
import { createProduct } from '../products/support.js';
import { createSeller } from '../sellers/support.js';
import { expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { signedIn, type FormClient } from './support.js';

/** The dashboard links of a page (`a[href^="/dashboard"]`), their entities decoded. */
function dashboardHrefs(html: string): string[] {
  return [...html.matchAll(/<a\b[^>]*\shref="(\/dashboard[^"]*)"/g)].map((match) =>
    match[1]!
      .replace(/&amp;/g, '&')
      .replace(/&#39;/g, "'")
      .replace(/&quot;/g, '"'),
  );
}

/**
 * Issue 54 items 1 and 15a: every money link goes somewhere, and every page takes the shared
 * parameters. One business with payments, a refund, an order, single payouts (one failed), a batch
 * and a seller paid out.
 */
describe('dashboard links and shared page parameters', () => {
  let t: TestApp;
  let business: TestBusiness;
  let client: FormClient;
  const refs = { payment: '', refunded: '', order: '', payout: '', failed: '', batchPayout: '', sellerPayout: '' };
  let batchId = '';
  let sellerId = '';
  let productId = '';

  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '1000000' } });
    business = await t.createBusiness({ name: 'Link shop' });
    const sk = business.keys.secretTest;
    refs.payment = await earn(t, sk, 500_000);
    refs.refunded = await earn(t, sk, 20_000);
    expectStatus(await act(t, sk, refs.refunded, 'refund', { amount: 5_000 }), 200);
    productId = (await createProduct(t, sk, { name: 'Thé', price: 1_500, status: 'ACTIVE', quantity: 10 })).id;
    const ordered = await simulate(t, sk, [{ productId, quantity: 2 }]);
    expectStatus(ordered, 201);
    refs.order = ordered.body.data.referenceNumber;
    const single = await createPayout(t, sk, payoutTo(newPhone(), 3_000));
    expectStatus(single, 201);
    refs.payout = single.body.data.referenceNumber;
    const failed = await createPayout(t, sk, payoutTo(SANDBOX_FAILING_PAYOUT_PHONE, 2_000));
    expectStatus(failed, 201);
    refs.failed = failed.body.data.referenceNumber;
    const batch = await t.request('POST', `${PAYOUTS}/batches`, {
      key: sk,
      idempotencyKey: true,
      body: { items: [payoutTo(newPhone(), 1_000), payoutTo(newPhone(), 1_500), payoutTo(newPhone(), 2_500)] },
    });
    expectStatus(batch, 201);
    batchId = batch.body.data.id;
    refs.batchPayout = batch.body.data.payouts[0].referenceNumber;
    sellerId = (await createSeller(t, sk, { name: 'Stall L', phone: newPhone() })).id;
    const split = await createIntent(t, sk, { amount: 10_000, splits: [{ seller: sellerId, amount: 6_000 }] });
    expectStatus(await act(t, sk, split.referenceNumber, 'simulate'), 200);
    const sellerPayout = await createPayout(t, sk, { amount: 1_000, seller: sellerId });
    expectStatus(sellerPayout, 201);
    refs.sellerPayout = sellerPayout.body.data.referenceNumber;
    await sendPayouts(t);
    client = (await signedIn(t, business.id)).client;
  });
  afterAll(() => t?.close());

  test('every dashboard link of the money pages answers 200, each source on its own kind of page', async () => {
    const moneyPages = [
      '/dashboard/balance',
      `/dashboard/payments/${refs.payment}`,
      `/dashboard/payments/${refs.refunded}`,
      `/dashboard/orders/${refs.order}`,
      `/dashboard/payouts/${refs.payout}`,
      `/dashboard/payouts/${refs.failed}`,
      `/dashboard/payouts/${refs.batchPayout}`,
      `/dashboard/payouts/${refs.sellerPayout}`,
      `/dashboard/payouts?batch=${batchId}`,
      `/dashboard/sellers/${sellerId}`,
    ];
    const checked = new Map<string, number>();
    const broken: string[] = [];
    for (const page of moneyPages) {
      const drawn = await client.get(page);
      assert.equal(drawn.status, 200, `${page}: ${drawn.html.slice(0, 300)}`);
      for (const href of dashboardHrefs(drawn.html)) {
        if (!checked.has(href)) checked.set(href, (await client.get(href)).status);
        if (checked.get(href) !== 200) broken.push(`${page} -> ${href}: ${checked.get(href)}`);
      }
    }
    assert.deepEqual(broken, []);
    const followed = [...checked.keys()];
    // What the pages must have linked, each by its kind: a payout never under /payments.
    for (const expected of [
      `/dashboard/payments/${refs.payment}`,
      `/dashboard/payments/${refs.refunded}`,
      `/dashboard/orders/${refs.order}`,
      `/dashboard/payouts/${refs.payout}`,
      `/dashboard/payouts/${refs.failed}`,
      `/dashboard/payouts/${refs.batchPayout}`,
      `/dashboard/payouts/${refs.sellerPayout}`,
      `/dashboard/payouts?batch=${batchId}`,
      `/dashboard/sellers/${sellerId}`,
      `/dashboard/balance?source=${refs.refunded}`,
    ]) {
      assert.ok(followed.includes(expected), `${expected} not linked; links: ${followed.join(' ')}`);
    }
    assert.deepEqual(
      followed.filter((href) => /\/dashboard\/(payments|orders)\/PO-/.test(href)),
      [],
    );
  });

  test("a payment's timeline words each event in the page's language, the code as its title", async () => {
    const words = { en: 'Refund made', fr: 'Remboursement effectué', ar: 'تم استرداد مبلغ' };
    for (const [lang, refunded] of Object.entries(words)) {
      const page = await client.get(`/dashboard/payments/${refs.refunded}?lang=${lang}`);
      assert.equal(page.status, 200);
      const timeline = /<ol class="timeline" id="timeline">([\s\S]*?)<\/ol>/.exec(page.html)?.[1] ?? '';
      assert.ok(timeline.includes(`title="payment.refunded">${refunded}</strong>`), `${lang}: ${timeline}`);
      assert.ok(timeline.includes('title="payment.created">'), timeline);
      // The code is the tooltip only: no line shows it as its text.
      assert.doesNotMatch(timeline.replace(/<[^>]*>/g, ' '), /payment\.(created|confirmed|refunded)/);
    }
  });

  test('every GET page takes ?lang=ar&mode=test: none answers 400, and the pages are in Arabic', async () => {
    const month = new Date().toISOString().slice(0, 7);
    /** A real thing for each route's parameters, so that a page answers as it would for a merchant. */
    const concrete = (url: string) =>
      url
        .replace('/payments/:ref', `/payments/${refs.refunded}`)
        .replace('/orders/:ref', `/orders/${refs.order}`)
        .replace('/payouts/:ref', `/payouts/${refs.payout}`)
        .replace('/sellers/:id', `/sellers/${sellerId}`)
        .replace('/products/:id', `/products/${productId}`)
        .replace(':file', `${month}.csv`)
        .replace(/:[A-Za-z]+/g, 'x0');
    const routes = [...dashboardAccess.keys()]
      .filter((route) => route.startsWith('GET '))
      .map((route) => concrete(route.slice('GET '.length)));
    assert.ok(routes.length > 30, `${routes.length} GET routes`);
    const refused: string[] = [];
    for (const path of routes) {
      const answer = await client.get(`${path}?lang=ar&mode=test`);
      if (answer.status === 400 || answer.status >= 500) refused.push(`${path}: ${answer.status}`);
      const html = answer.headers.get('content-type')?.startsWith('text/html') && answer.status !== 303;
      if (html && !path.endsWith('.html')) assert.match(answer.html, /<html lang="ar" dir="rtl">/, path);
    }
    assert.deepEqual(refused, []);
    // The page's own filters still refuse what they cannot read, beside the shared parameters.
    assert.equal((await client.get('/dashboard/balance?lang=fr&mode=test&colour=red')).status, 400);
    // A `?lang=` draws that page only: the session's language stays the footer form's.
    assert.match((await client.get('/dashboard/balance')).html, /<html lang="en"/);
  });

  test("?mode= never switches the session's mode: only the mode bar's form (with its CSRF token) does", async () => {
    const modeOf = async (path: string) => {
      const page = await client.get(path);
      assert.equal(page.status, 200, path);
      return /class="modebar( testbar)?"/.exec(page.html)?.[1] ? 'test' : 'live';
    };
    assert.equal(await modeOf('/dashboard/balance?mode=live'), 'test');
    assert.equal(await modeOf('/dashboard/balance'), 'test', 'the session stayed in test mode');
    await client.submit('/dashboard/balance', '/dashboard/preferences', { environment: 'live' });
    assert.equal(await modeOf('/dashboard/balance'), 'live');
    assert.equal(await modeOf('/dashboard/payouts/new?mode=test'), 'live');
    assert.equal(await modeOf('/dashboard/balance'), 'live', 'the session stayed in live mode');
    await client.submit('/dashboard/balance', '/dashboard/preferences', { environment: 'test' });
    assert.equal(await modeOf('/dashboard/balance'), 'test');
  });
});
