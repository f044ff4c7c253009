import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { formatAmount } from '../../src/lib/i18n.js';
import { storefrontDictionaries } from '../../src/modules/storefront/i18n.js';
import { expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { englishLeaks, pageDataOf } from '../support/i18n.js';
import { createProduct } from '../products/support.js';
import { orderAction } from '../orders/support.js';

/** Issue 11 with issue 19's rules: every state of the storefront and order page speaks French and Arabic throughout. */
describe('storefront and order pages: languages, states, headers', () => {
  let t: TestApp;
  let business: TestBusiness;
  const wallet = { phone: '+22245000777', pin: '1357' };
  const pages: Record<string, string> = {};
  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    business = await t.createBusiness({ name: 'Souk Nour' });
    const sk = business.keys.secretTest;
    expectStatus(await t.admin('POST', '/wallets', { ...wallet, balance: 1_000_000, environment: 'test' }), 201);
    const tea = await createProduct(t, sk, {
      name: 'Thé',
      price: 1500,
      quantity: 50,
      status: 'ACTIVE',
      variants: [
        { type: 'SIZE', label: 'Grand', priceAdjustment: 500, quantity: 5 },
        { type: 'SIZE', label: 'Géant', priceAdjustment: 900, quantity: 0 },
      ],
      options: [{ name: 'Menthe', priceAdjustment: 200 }],
    });
    await createProduct(t, sk, { name: 'Pourboire', price: 500, isFlexiblePrice: true, status: 'ACTIVE' });
    await createProduct(t, sk, { name: 'Dattes', price: 800, quantity: 0, status: 'ACTIVE' });
    const place = async () => {
      const response = await t.request('POST', `/storefront/shops/${business.shopId}/orders`, {
        body: { items: [{ productId: tea.id, quantity: 1 }], customerName: 'Aicha', ...wallet },
      });
      expectStatus(response, 201);
      return response.body.data;
    };
    const fresh = await place();
    const modified = await place();
    await orderAction(t, sk, `/${modified.referenceNumber}/propose-modification`, {
      items: [{ productId: tea.id, quantity: 2 }],
    });
    const cancelled = await place();
    await t.request('POST', `/storefront/orders/${cancelled.orderRef}/cancel`, { body: {} });
    const refunded = await place();
    await orderAction(t, sk, `/${refunded.referenceNumber}/accept`);
    await orderAction(t, sk, `/${refunded.referenceNumber}/refund`, { amount: 500 });
    pages.catalog = `/s/${business.shopId}`;
    pages.emptySearch = `/s/${business.shopId}?search=introuvable`;
    pages.missingShop = '/s/shop_nope';
    pages.newOrder = `/o/${fresh.orderRef}`;
    pages.modification = `/o/${modified.orderRef}`;
    pages.cancelled = `/o/${cancelled.orderRef}`;
    pages.refunded = `/o/${refunded.orderRef}`;
    pages.missingOrder = '/o/nope';
  });
  afterAll(() => t.close());

  const withLang = (path: string, lang: string) => `${path}${path.includes('?') ? '&' : '?'}lang=${lang}`;

  test('French and Arabic pages show no English text, in every state', async () => {
    for (const lang of ['fr', 'ar']) {
      for (const [state, path] of Object.entries(pages)) {
        const response = await t.request('GET', withLang(path, lang));
        assert.ok([200, 404].includes(response.status), `${state}: ${response.status}`);
        assert.match(response.text, new RegExp(`<html lang="${lang}" dir="${lang === 'ar' ? 'rtl' : 'ltr'}">`));
        assert.deepEqual(englishLeaks(response.text, storefrontDictionaries.en), [], `${lang} ${state}`);
      }
    }
  });

  test('amounts in the language, states in the page, Vary and the security headers', async () => {
    const catalog = await t.request('GET', withLang(pages.catalog!, 'ar'));
    assert.ok(catalog.text.includes(formatAmount(1500, 'ar')));
    assert.equal(catalog.headers.get('vary'), 'Accept-Language');
    assert.match(catalog.headers.get('content-security-policy') ?? '', /script-src 'nonce-/);
    assert.equal(catalog.headers.get('x-frame-options'), 'DENY');
    assert.ok(catalog.text.includes('disabled>Géant'), 'the out-of-stock variant cannot be chosen');
    assert.equal((await t.request('GET', pages.missingShop!)).status, 404);
    const order = await t.request('GET', withLang(pages.modification!, 'fr'));
    assert.ok(order.text.includes('id="modification"'));
    assert.ok(order.text.includes(formatAmount(1500, 'fr')), 'the difference to pay');
    const cancelled = await t.request('GET', withLang(pages.cancelled!, 'fr'));
    assert.ok(cancelled.text.includes(storefrontDictionaries.fr.cancelledByYou));
    assert.ok(!cancelled.text.includes('id="cancel-order"'));
  });

  test('issue 38: variants are a choice after "Regular"; prices typed as the language writes them; the order page says what comes next and whom to ask', async () => {
    const fr = storefrontDictionaries.fr;
    const catalog = (await t.request('GET', withLang(pages.catalog!, 'fr'))).text;
    assert.ok(catalog.includes(`<select name="variant"><option value="">${fr.variantNone}</option>`));
    assert.match(catalog, /<input name="price" dir="ltr" inputmode="decimal" value="5,00">/);
    assert.match(catalog, /<body class="wide" data-page="/);
    assert.ok(catalog.includes('<a href="#cart" id="cart-link">'), 'the cart count on top');
    const order = (await t.request('GET', withLang(pages.newOrder!, 'fr'))).text;
    assert.ok(order.includes(`<a id="back-to-shop" href="/s/${business.shopId}?lang=fr">`));
    assert.ok(order.includes('<p id="order-next"><bdi>Souk Nour</bdi> a reçu votre commande'));
    assert.match(order, /<section class="card" id="contact"[^>]*>/);
    assert.match(
      order,
      /Contactez <bdi>Souk Nour<\/bdi> en donnant la référence de votre commande, <bdi dir="ltr">OR-\d+<\/bdi>\./,
    );
    const cancelled = (await t.request('GET', withLang(pages.cancelled!, 'ar'))).text;
    assert.ok(cancelled.includes(storefrontDictionaries.ar.nextCancelled));
  });

  test('Accept-Language with q-values picks the language; ?lang= wins and is kept in the links', async () => {
    const negotiated = await t.request('GET', pages.catalog!, { headers: { 'accept-language': 'en;q=0.1, ar-MR' } });
    assert.match(negotiated.text, /<html lang="ar" dir="rtl">/);
    const chosen = await t.request('GET', withLang(pages.catalog!, 'fr'), {
      headers: { 'accept-language': 'ar' },
    });
    assert.match(chosen.text, /<html lang="fr"/);
    assert.ok(chosen.text.includes('name="lang" value="fr"'), 'the search keeps the chosen language');
    assert.equal(pageDataOf(chosen.text)?.orderPath, '/o/{ref}?lang=fr');
  });
});
