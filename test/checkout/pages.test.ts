import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { formatAmount } from '../../src/lib/i18n.js';
import { walletPhone } from '../../src/lib/phone.js';
import { checkoutDictionaries } from '../../src/modules/checkout/i18n.js';
import { expectError, expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { pageDataOf } from '../support/i18n.js';
import { act, createIntent } from '../intents/support.js';
import { pay, RICH, walletBalance } from './support.js';

/** Issue 38: the hosted checkout drawn by templates, its scripts served as files, local phones, the receipt on reload. */
describe('hosted checkout pages (issue 38)', () => {
  let t: TestApp;
  let business: TestBusiness;
  let sk: string;
  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    business = await t.createBusiness({ name: 'Épicerie <du> "Port"' });
    sk = business.keys.secretTest;
  });
  afterAll(() => t.close());

  test('a wallet phone is read as people write it: 8 Mauritanian digits are +222; E.164 as before', () => {
    for (const typed of ['20000001', '20 00 00 01', '20-00-00-01', '222 20000001', '0022220000001', '+222 20 00 00 01'])
      assert.equal(walletPhone(typed), '+22220000001', typed);
    assert.equal(walletPhone('41234567'), '+22241234567');
    assert.equal(walletPhone('+33612345678'), '+33612345678');
    assert.equal(walletPhone('+22212345678'), '+22212345678', 'an E.164 number keeps the shape rule only');
    for (const typed of ['', '2000', '200000011', '12345678', '+0123456789', 'abc', '2000000a', '+', '0612345678'])
      assert.equal(walletPhone(typed), undefined, typed);
  });

  test('the checkout API takes a local number; a number that is none is refused on body.phone', async () => {
    const intent = await createIntent(t, sk, { amount: 700 });
    const before = await walletBalance(t, RICH.phone);
    const refused = await pay(t, intent.shortCode, { phone: '2000000', pin: RICH.pin });
    expectError(refused, 400, 'VALIDATION_ERROR');
    assert.equal(refused.body.error.details[0].field, 'body.phone');
    const paid = await pay(t, intent.shortCode, { phone: '20 00 00 01', pin: RICH.pin });
    expectStatus(paid, 200);
    assert.equal(paid.body.data.receipt.payerPhone, '+222******01');
    assert.equal(await walletBalance(t, RICH.phone), before - 700);
  });

  test('no inline script or style: every script and the stylesheet are files loaded with the nonce of the CSP', async () => {
    const intent = await createIntent(t, sk, { amount: 700, label: '<script>alert(1)</script>' });
    const page = await t.request('GET', `/p/${intent.shortCode}`);
    const csp = page.headers.get('content-security-policy') ?? '';
    const nonce = /script-src 'nonce-([^']+)'/.exec(csp)?.[1];
    assert.ok(nonce, csp);
    // Base64: `+` and `/` are pattern characters.
    const noncePattern = nonce.replace(/[+/=]/g, '\\$&');
    assert.ok(!csp.includes('unsafe'), csp);
    assert.match(csp, new RegExp(`style-src 'nonce-${noncePattern}'`));
    const scripts = [...page.text.matchAll(/<script\b[^>]*>([\s\S]*?)<\/script>/g)];
    assert.deepEqual(
      scripts.map((match) => match[1]),
      ['', ''],
    );
    for (const [tag] of scripts) {
      assert.match(tag, new RegExp(`src="/checkout/assets/[a-z-]+\\.js\\?v=[0-9a-f]{16}" nonce="${noncePattern}"`));
    }
    assert.ok(!page.text.includes('<style'), 'no inline style');
    assert.match(
      page.text,
      new RegExp(
        `<link rel="stylesheet" href="/checkout/assets/customer.css\\?v=[0-9a-f]{16}" nonce="${noncePattern}">`,
      ),
    );
    assert.ok(!/\sstyle="/.test(page.text), 'no style attribute');
    // Merchant text is text, everywhere: the heading, the title, the page's data.
    assert.ok(page.text.includes('<h1 id="label">&lt;script&gt;alert(1)&lt;/script&gt;</h1>'));
    assert.ok(page.text.includes('Épicerie &lt;du&gt; &quot;Port&quot;'));
    assert.ok(!page.text.includes('<script>alert'));
    assert.equal(pageDataOf(page.text)?.shortCode, intent.shortCode);
  });

  test('the scripts and stylesheet: their type, kept a year at their versioned URL, revalidated otherwise, unknown files 404', async () => {
    const page = await t.request('GET', `/p/${(await createIntent(t, sk, { amount: 700 })).shortCode}`);
    const url = /src="(\/checkout\/assets\/checkout\.js\?v=[0-9a-f]+)"/.exec(page.text)![1]!;
    const versioned = await t.request('GET', url);
    expectStatus(versioned, 200);
    assert.equal(versioned.headers.get('content-type'), 'text/javascript; charset=utf-8');
    assert.equal(versioned.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    assert.equal(versioned.headers.get('x-content-type-options'), 'nosniff');
    const plain = await t.request('GET', '/checkout/assets/checkout.js');
    assert.equal(plain.headers.get('cache-control'), 'public, no-cache');
    const etag = plain.headers.get('etag')!;
    const again = await fetch(`${t.baseUrl}/checkout/assets/checkout.js`, { headers: { 'if-none-match': etag } });
    assert.equal(again.status, 304);
    await again.body?.cancel();
    const css = await t.request('GET', '/checkout/assets/customer.css');
    assert.equal(css.headers.get('content-type'), 'text/css; charset=utf-8');
    assert.equal(
      (await t.request('GET', '/storefront/assets/customer.js')).status,
      200,
      'the shared script, for the storefront',
    );
    for (const path of ['/checkout/assets/nope.js', '/checkout/assets/..%2Fi18n.ts', '/checkout/assets/storefront.js'])
      expectError(await t.request('GET', path), 404, 'ENDPOINT_NOT_FOUND');
  });

  test('a paid link shows the receipt (merchant, label, amount, fee, reference) on every visit; expired and cancelled say what to do', async () => {
    expectStatus(
      await t.admin('PUT', `/businesses/${business.id}/fees`, { providerBps: 0, payerFee: 150, tofBps: 0, tteBps: 0 }),
      200,
    );
    const intent = await createIntent(t, sk, { amount: 4_200, label: 'Pain', success_url: 'https://shop.example/ok' });
    expectStatus(await pay(t, intent.shortCode, RICH), 200);
    for (let visit = 0; visit < 2; visit++) {
      const page = await t.request('GET', `/p/${intent.shortCode}?lang=fr`);
      assert.ok(page.text.includes('id="receipt"'));
      assert.ok(page.text.includes('<dd id="r-merchant"><bdi>Épicerie &lt;du&gt; &quot;Port&quot;</bdi></dd>'));
      assert.ok(page.text.includes('<dd id="r-label"><bdi>Pain</bdi></dd>'));
      assert.ok(page.text.includes(`<dd id="r-amount"><bdi class="money">${formatAmount(4_200, 'fr')}</bdi></dd>`));
      assert.ok(page.text.includes(`<dd id="r-fee"><bdi class="money">${formatAmount(150, 'fr')}</bdi></dd>`));
      assert.ok(page.text.includes(`<dd id="r-ref"><bdi dir="ltr">${intent.referenceNumber}</bdi></dd>`));
      assert.ok(page.text.includes('href="https://shop.example/ok"'));
      assert.equal(pageDataOf(page.text)?.successUrl, 'https://shop.example/ok');
    }
    const fr = checkoutDictionaries.fr;
    const expired = await createIntent(t, sk, { amount: 500, cancel_url: 'https://shop.example/cart' });
    expectStatus(await act(t, sk, expired.referenceNumber, 'simulate-expiry'), 200);
    const cancelled = await createIntent(t, sk, { amount: 500 });
    expectStatus(await act(t, sk, cancelled.referenceNumber, 'cancel'), 200);
    const expiredPage = (await t.request('GET', `/p/${expired.shortCode}?lang=fr`)).text;
    assert.ok(expiredPage.includes(fr.nothingCharged));
    assert.ok(expiredPage.includes('<a class="button" id="back" href="https://shop.example/cart">'));
    assert.ok(expiredPage.includes('href="/pay?mode=test&amp;lang=fr"'));
    assert.ok(!expiredPage.includes('class="card wallets"'), 'the test wallets only where one can pay');
    const cancelledPage = (await t.request('GET', `/p/${cancelled.shortCode}`)).text;
    assert.match(cancelledPage, /data-state="CANCELLED"/);
    assert.ok(cancelledPage.includes('cancelled this request. If you still want to pay, ask them for a new one.'));
    assert.ok(!cancelledPage.includes('id="back"'), 'no way back without a cancel_url');
    const missing = await t.request('GET', '/p/nope00?lang=fr');
    assert.ok(missing.text.includes('id="to-code" href="/pay?lang=fr"'));
  });

  test('an open amount shows its suggested amount as the language writes it', async () => {
    const open = await createIntent(t, sk, { amountType: 'OPEN', amount: 10_050 });
    const value = async (lang: string) =>
      /<input id="amount"[^>]* value="([^"]*)"/.exec(
        (await t.request('GET', `/p/${open.shortCode}?lang=${lang}`)).text,
      )?.[1];
    assert.equal(await value('fr'), '100,50');
    assert.equal(await value('en'), '100.50');
    assert.equal(await value('ar'), '100.50');
  });
});
