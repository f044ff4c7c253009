import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, test } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchChromium, skipWithoutChromium } from '../support/browser.js';
import { formatAmount } from '../../src/lib/i18n.js';
import { expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { createProduct } from '../products/support.js';
import { orderAction, walletBalance } from '../orders/support.js';

const skip = skipWithoutChromium;
const ARTIFACTS = path.resolve('test-artifacts', 'browser');

const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 900 };

describe.skipIf(skip)('hosted storefront and order page in a real browser (issue 11)', () => {
  let t: TestApp;
  let browser: Browser;
  let business: TestBusiness;
  let tea: any;
  let sold: any;
  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    business = await t.createBusiness({ name: 'Épicerie du Port' });
    const sk = business.keys.secretTest;
    tea = await createProduct(t, sk, {
      name: 'Thé vert',
      description: 'Gunpowder, 250 g',
      price: 1500,
      quantity: 50,
      status: 'ACTIVE',
      variants: [
        { type: 'SIZE', label: 'Grand', priceAdjustment: 500, quantity: 10 },
        { type: 'SIZE', label: 'Géant', priceAdjustment: 900, quantity: 0 },
      ],
      options: [{ name: 'Menthe', priceAdjustment: 200 }],
    });
    sold = await createProduct(t, sk, { name: 'Dattes', price: 800, quantity: 0, status: 'ACTIVE' });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  async function openPage(url: string, viewport: { width: number; height: number }, locale = 'en-US'): Promise<Page> {
    const context = await browser.newContext({ viewport, locale });
    const page = await context.newPage();
    page.on('dialog', (dialog) => void dialog.accept());
    await page.goto(`${t.baseUrl}${url}`);
    return page;
  }
  const shot = (page: Page, name: string) =>
    page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });

  for (const [lang, viewport, size] of [
    ['en', PHONE, 'phone'],
    ['ar', PHONE, 'phone'],
    ['en', DESKTOP, 'desktop'],
    ['ar', DESKTOP, 'desktop'],
  ] as const) {
    test(`${lang} on a ${size}: order from the storefront, see it on the order page, cancel, money back`, async () => {
      const phone = `+2224300${lang === 'en' ? 1 : 2}${size === 'phone' ? 1 : 2}00`;
      expectStatus(
        await t.admin('POST', '/wallets', { phone, pin: '2468', balance: 100_000, environment: 'test' }),
        201,
      );
      const page = await openPage(`/s/${business.shopId}?lang=${lang}`, viewport);
      assert.equal(await page.locator('html').getAttribute('lang'), lang);
      assert.equal(await page.locator('html').getAttribute('dir'), lang === 'ar' ? 'rtl' : 'ltr');
      assert.equal(await page.locator('#shop-name').textContent(), 'Épicerie du Port');
      assert.ok(await page.locator('.test').isVisible(), 'TEST MODE banner');
      // Out of stock: shown, not orderable.
      const dates = page.locator(`.product[data-id="${sold.id}"]`);
      assert.equal(await dates.locator('.add-form').count(), 0);
      assert.equal(await dates.locator('.out').count(), 1);
      const card = page.locator(`.product[data-id="${tea.id}"]`);
      assert.equal(await card.locator('option[disabled]').count(), 1, 'the out-of-stock variant cannot be chosen');
      await card.locator('select[name=variant]').selectOption(tea.variants[0]._id);
      await card.locator('input[name=option]').check();
      await card.locator('input[name=quantity]').fill('2');
      await card.locator('button.add').click();
      // (1500 + 500 + 200) × 2 = 4400
      await page
        .locator('#total-to-pay')
        .filter({ hasText: formatAmount(4400, lang) })
        .waitFor();
      await shot(page, `storefront-${lang}-${size}-cart`);
      await page.locator('#customerName').fill('Mariem');
      await page.locator('#phone').fill(phone);
      await page.locator('#pin').fill('2468');
      await page.locator('#place-order').click();
      await page.waitForURL(/\/o\/[0-9A-Za-z]{32}/);
      await page.locator('#order-status[data-status="NEW"]').waitFor();
      assert.equal(await page.locator('#order-total').textContent(), formatAmount(4400, lang));
      assert.equal(await walletBalance(t, phone), 100_000 - 4400);
      await shot(page, `order-${lang}-${size}-new`);
      await page.locator('#cancel-order').click();
      await page.locator('#order-status[data-status="CANCELLED"]').waitFor();
      assert.equal(await walletBalance(t, phone), 100_000, 'the money is back in the wallet');
      await shot(page, `order-${lang}-${size}-cancelled`);
      await page.context().close();
    });
  }

  test('the order page: accept a proposed change with the PIN; search; an unknown link is a 404 page', async () => {
    const phone = '+22243009900';
    expectStatus(await t.admin('POST', '/wallets', { phone, pin: '2468', balance: 100_000, environment: 'test' }), 201);
    const placed = await t.request('POST', `/storefront/shops/${business.shopId}/orders`, {
      body: { items: [{ productId: tea.id, quantity: 1 }], customerName: 'Sidi', phone, pin: '2468' },
    });
    expectStatus(placed, 201);
    await orderAction(t, business.keys.secretTest, `/${placed.body.data.referenceNumber}/propose-modification`, {
      items: [{ productId: tea.id, quantity: 3 }],
    });
    const page = await openPage(`/o/${placed.body.data.orderRef}`, PHONE, 'fr-FR');
    assert.equal(await page.locator('html').getAttribute('lang'), 'fr', 'Accept-Language picks French');
    await page.locator('#modification').waitFor();
    await shot(page, 'order-fr-phone-modification');
    await page.locator('#accept-form input[name=pin]').fill('2468');
    await page.locator('#accept').click();
    await page
      .locator('#order-total')
      .filter({ hasText: formatAmount(4500, 'fr') })
      .waitFor();
    assert.equal(await page.locator('#modification').count(), 0);
    assert.equal(await walletBalance(t, phone), 100_000 - 4500);
    await page.context().close();

    const search = await openPage(`/s/${business.shopId}?search=dattes`, DESKTOP);
    assert.equal(await search.locator('.product').count(), 1);
    await search.context().close();
    const missing = await openPage('/o/nope', PHONE);
    assert.equal(await missing.locator('#state').count(), 1);
    await missing.context().close();
  });
});
