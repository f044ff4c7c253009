import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { fillText, formatAmount, formatNumber } from '../../src/lib/i18n.js';
import { checkoutDictionaries } from '../../src/modules/checkout/i18n.js';
import { storefrontDictionaries } from '../../src/modules/storefront/i18n.js';
import { launchChromium, skipWithoutChromium } from '../support/browser.js';
import { expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { act, createIntent } from '../intents/support.js';
import { walletBalance } from '../checkout/support.js';
import { createProduct, write } from '../products/support.js';

const PHONE = { width: 390, height: 844 };
const LAPTOP = { width: 1280, height: 800 };

/** How many keys the page's session storage holds (the tests' types have no DOM). */
const sessionKeys = (page: Page) =>
  page.evaluate(() => (globalThis as unknown as { sessionStorage: { length: number } }).sessionStorage.length);

/** Issue 38, what a customer does: the fixes of the checkout, the storefront and the order page, in a real browser. */
describe.skipIf(skipWithoutChromium)('customer flows in a real browser (issue 38)', () => {
  let t: TestApp;
  let browser: Browser;
  let business: TestBusiness;
  let sk: string;
  const wallet = { phone: '+22245000999', local: '45 00 09 99', pin: '2468' };

  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    business = await t.createBusiness({ name: 'Épicerie du Port' });
    sk = business.keys.secretTest;
    expectStatus(
      await t.admin('POST', '/wallets', {
        phone: wallet.phone,
        pin: wallet.pin,
        balance: 1_000_000,
        environment: 'test',
      }),
      201,
    );
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  async function openPage(path: string, viewport = PHONE): Promise<Page> {
    const context = await browser.newContext({ viewport, locale: 'en-US' });
    const page = await context.newPage();
    page.on('dialog', (dialog) => void dialog.accept());
    await page.goto(`${t.baseUrl}${path}`);
    return page;
  }

  test('checkout: a local number pays, the receipt names merchant, label and amount and survives a reload; French amounts; next steps', async () => {
    const fr = checkoutDictionaries.fr;
    const successUrl = `${t.baseUrl}/health?paid=1`;
    const intent = await createIntent(t, sk, { amount: 12_500, label: 'Panier du jour', success_url: successUrl });
    const page = await openPage(`/p/${intent.shortCode}?lang=fr`);
    // A number that is none: the page's own French text, nothing charged.
    await page.getByLabel(fr.phone).fill('2000');
    await page.getByLabel(fr.pin, { exact: true }).fill(wallet.pin);
    await page.getByRole('button', { name: fr.pay }).click();
    await page.getByRole('alert').filter({ hasText: fr.errPhoneInvalid }).waitFor();
    // The 8 digits as people write them: shown back as the +222 wallet, and paid from it.
    await page.getByLabel(fr.phone).fill(wallet.local);
    await page.getByLabel(fr.pin, { exact: true }).focus();
    assert.equal(await page.getByLabel(fr.phone).inputValue(), '+222 45 00 09 99');
    await page.getByRole('button', { name: fr.pay }).click();
    await page.locator('#receipt').waitFor();
    assert.equal(await page.locator('#r-merchant').textContent(), 'Épicerie du Port');
    assert.equal(await page.locator('#r-label').textContent(), 'Panier du jour');
    assert.equal(await page.locator('#r-amount').textContent(), formatAmount(12_500, 'fr'));
    assert.equal(await page.locator('#r-payer').textContent(), '+222******99');
    // Right after paying, the merchant's page follows, once.
    await page.waitForURL(successUrl, { timeout: 10_000 });
    await page.goto(`${t.baseUrl}/p/${intent.shortCode}?lang=fr`);
    await page.locator('#receipt').waitFor();
    assert.equal(await page.locator('#state').getAttribute('data-state'), 'PAID');
    assert.equal(await page.locator('#r-ref').textContent(), intent.referenceNumber);
    assert.equal(await page.locator('#r-next').isVisible(), false, 'a later visit is not sent anywhere');
    assert.equal(await page.locator('#back').getAttribute('href'), successUrl);
    assert.equal(await sessionKeys(page), 0, 'the mark of having just paid is gone');
    await page.reload();
    assert.equal(await page.locator('#r-amount').textContent(), formatAmount(12_500, 'fr'));
    assert.equal(await walletBalance(t, wallet.phone), 1_000_000 - 12_500);
    await page.context().close();

    // An open amount on the French page: shown and typed with a comma.
    const open = await createIntent(t, sk, { amountType: 'OPEN', amount: 10_050 });
    const openAmount = await openPage(`/p/${open.shortCode}?lang=fr`, LAPTOP);
    const amount = openAmount.getByLabel(fr.amountToPay);
    assert.equal(await amount.inputValue(), '100,50');
    await amount.fill('12,5');
    await openAmount.getByLabel(fr.phone).fill(wallet.local);
    await openAmount.getByLabel(fr.pin, { exact: true }).fill(wallet.pin);
    await openAmount.getByRole('button', { name: fr.pay }).click();
    await openAmount.locator('#receipt').waitFor();
    assert.equal(await openAmount.locator('#r-amount').textContent(), formatAmount(1_250, 'fr'));
    const stored = await t.request('GET', `/api/v1/dev/intents/${open.referenceNumber}`, { key: sk });
    assert.equal(stored.body.data.payment.amountPaid, 1_250);
    await openAmount.context().close();

    // Expired: what to do next, the way back to the merchant, and a code instead.
    const expired = await createIntent(t, sk, { amount: 500, cancel_url: `${t.baseUrl}/health?back=1` });
    expectStatus(await act(t, sk, expired.referenceNumber, 'simulate-expiry'), 200);
    const ar = checkoutDictionaries.ar;
    const expiredPage = await openPage(`/p/${expired.shortCode}?lang=ar`);
    assert.equal(
      await expiredPage.locator('#next').textContent(),
      fillText(ar.expiredNext, { merchant: 'Épicerie du Port' }),
    );
    assert.equal(await expiredPage.locator('#back').getAttribute('href'), `${t.baseUrl}/health?back=1`);
    await expiredPage.getByRole('link', { name: ar.anotherCode }).click();
    await expiredPage.waitForURL(`${t.baseUrl}/pay?mode=test&lang=ar`);
    await expiredPage.getByLabel(ar.code).waitFor();
    await expiredPage.context().close();
  });

  test('storefront: variants optional, stock problems named with what is left, the cart kept across reloads and counted on top; the order page', async () => {
    const fr = storefrontDictionaries.fr;
    const shopId = business.shopId!;
    const tea = await createProduct(t, sk, {
      name: 'Thé vert',
      price: 1500,
      quantity: 50,
      status: 'ACTIVE',
      variants: [{ type: 'SIZE', label: 'Grand', priceAdjustment: 500, quantity: 10 }],
    });
    const jar = await createProduct(t, sk, { name: 'Bocal', price: 400, quantity: 3, status: 'ACTIVE' });
    for (let i = 0; i < 6; i++) await createProduct(t, sk, { name: `Article ${i}`, price: 100, status: 'ACTIVE' });
    const page = await openPage(`/s/${shopId}?lang=fr`);
    const teaCard = page.locator(`.product[data-id="${tea.id}"]`);
    const jarCard = page.locator(`.product[data-id="${jar.id}"]`);
    // A product with one variant is bought without it by default, at its own price.
    assert.equal(await teaCard.locator('select[name=variant]').inputValue(), '');
    assert.equal(await teaCard.locator('select[name=variant] option').first().textContent(), fr.variantNone);
    await teaCard.locator('button.add').click();
    await page
      .locator('#total-to-pay')
      .filter({ hasText: formatAmount(1_500, 'fr') })
      .waitFor();
    // More than the stock: the line says what is left, and no total leaves it out.
    await jarCard.locator('input[name=quantity]').fill('5');
    await jarCard.locator('button.add').click();
    const problem = page.locator('#cart-lines li').nth(1).locator('.line-problem');
    await problem.filter({ hasText: fillText(fr.stockLeft, { count: formatNumber(3, 'fr') }) }).waitFor();
    assert.equal(await page.locator('#cart-totals').isVisible(), false);
    assert.equal(await page.locator('#checkout-form').isVisible(), false);
    assert.ok(await page.locator('#totals-pending').isVisible());
    await problem.getByRole('button', { name: fillText(fr.keepCount, { count: formatNumber(3, 'fr') }) }).click();
    await page
      .locator('#total-to-pay')
      .filter({ hasText: formatAmount(1_500 + 3 * 400, 'fr') })
      .waitFor();

    // Reloaded: the same cart, its count in the header that stays on top.
    await page.reload();
    await page
      .locator('#total-to-pay')
      .filter({ hasText: formatAmount(2_700, 'fr') })
      .waitFor();
    assert.equal(await page.locator('#cart-lines li').count(), 2);
    assert.equal(await page.locator('#cart-count').textContent(), '4');
    await page.locator('#checkout-form button').scrollIntoViewIfNeeded();
    const header = await page.locator('#cart-link').boundingBox();
    assert.ok(header && header.y >= 0 && header.y < 60, `the cart count stays on top (y=${header?.y})`);

    // The stock goes while the customer types: the order is refused and the line named.
    expectStatus(await write(t, sk, 'PATCH', `/${jar.id}/inventory`, { quantity: 1 }), 200);
    await page.locator('#customerName').fill('Mariem');
    await page.locator('#phone').fill(wallet.local);
    await page.locator('#pin').fill(wallet.pin);
    await page.locator('#place-order').click();
    const left = page.locator('#cart-lines li').nth(1).locator('.line-problem');
    await left.filter({ hasText: fillText(fr.stockLeft, { count: formatNumber(1, 'fr') }) }).waitFor();
    assert.equal(await page.getByRole('alert').textContent(), fr.errStock);
    await left.getByRole('button').click();
    await page
      .locator('#total-to-pay')
      .filter({ hasText: formatAmount(1_900, 'fr') })
      .waitFor();
    const before = await walletBalance(t, wallet.phone);
    await page.locator('#place-order').click();
    await page.waitForURL(/\/o\/[0-9A-Za-z]{32}\?lang=fr$/);
    assert.equal(await walletBalance(t, wallet.phone), before - 1_900);

    // The order page: what happens next, whom to ask, the way back to a shop whose cart is now empty.
    await page.locator('#order-status[data-status="NEW"]').waitFor();
    const reference = (await page.locator('#order-reference').textContent())!;
    assert.equal(await page.locator('#order-next').textContent(), fillText(fr.nextNew, { shop: 'Épicerie du Port' }));
    assert.equal(
      await page.locator('#contact p').textContent(),
      fillText(fr.contactText, { shop: 'Épicerie du Port', reference }),
    );
    await page.locator('#back-to-shop').click();
    await page.waitForURL(`${t.baseUrl}/s/${shopId}?lang=fr`);
    await page.locator('#cart-empty').waitFor();
    assert.equal(await page.locator('#cart-count').textContent(), '0');
    await page.context().close();
  });
});
