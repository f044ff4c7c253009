import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, test } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchChromium, skipWithoutChromium } from '../support/browser.js';
import { expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { act, createIntent } from '../intents/support.js';
import { pay, RICH, walletBalance } from '../checkout/support.js';
import { formatAmount, formatNumber, fillText } from '../../src/lib/i18n.js';
import { checkoutDictionaries } from '../../src/modules/checkout/i18n.js';
import { MAX_PIN_ATTEMPTS, PIN_LOCK_MINUTES } from '../../src/modules/wallets/service.js';

const skip = skipWithoutChromium;
const ARTIFACTS = path.resolve('test-artifacts', 'browser');

describe.skipIf(skip)('hosted checkout and pay-by-code in a real browser', () => {
  let t: TestApp;
  let browser: Browser;
  let business: TestBusiness;
  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    business = await t.createBusiness({ name: 'Épicerie du Port' });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  /** A phone-sized page; the browser's locale sets its Accept-Language. */
  async function openPage(url: string, locale = 'en-US'): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, locale });
    const page = await context.newPage();
    await page.goto(`${t.baseUrl}${url}`);
    return page;
  }
  const shot = (page: Page, name: string) =>
    page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });

  test('a FIXED intent is paid with a test wallet, the receipt shows, and the browser follows success_url', async () => {
    const successUrl = `${t.baseUrl}/health?paid=1`;
    const intent = await createIntent(t, business.keys.secretTest, {
      amount: 25_000,
      label: 'Panier du jour',
      success_url: successUrl,
    });
    const before = await walletBalance(t, RICH.phone);
    const page = await openPage(`/p/${intent.shortCode}`);
    assert.equal(await page.locator('#amount-due').textContent(), formatAmount(25_000, 'en'));
    assert.equal(await page.locator('#label').textContent(), 'Panier du jour');
    assert.match((await page.locator('#merchant').textContent()) ?? '', /Épicerie du Port/);
    assert.ok(await page.getByText('TEST MODE').isVisible());
    await shot(page, 'fixed-form');
    await page.getByLabel('Wallet phone number').fill(RICH.phone);
    await page.getByLabel('PIN').fill(RICH.pin);
    await page.getByRole('button', { name: 'Pay' }).click();
    await page.locator('#receipt').waitFor();
    assert.equal(await page.locator('#r-ref').textContent(), intent.referenceNumber);
    assert.equal(await page.locator('#r-amount').textContent(), formatAmount(25_000, 'en'));
    await shot(page, 'fixed-receipt');
    await page.waitForURL(successUrl, { timeout: 10_000 });
    assert.equal(await walletBalance(t, RICH.phone), before - 25_000);
    await page.context().close();
  });

  test('an OPEN intent takes the amount the customer types', async () => {
    const intent = await createIntent(t, business.keys.secretTest, { amountType: 'OPEN' });
    const page = await openPage(`/p/${intent.shortCode}?lang=fr`);
    assert.equal(await page.locator('html').getAttribute('lang'), 'fr');
    await page.getByLabel('Montant à payer (MRU)').fill('12.50');
    await page.getByLabel('Numéro du portefeuille').fill(RICH.phone);
    await page.getByLabel('Code secret').fill(RICH.pin);
    await page.getByRole('button', { name: 'Payer' }).click();
    await page.locator('#receipt').waitFor();
    assert.equal(await page.locator('#r-amount').textContent(), formatAmount(1250, 'fr'));
    await shot(page, 'open-receipt-fr');
    const stored = await t.request('GET', `/api/v1/dev/intents/${intent.referenceNumber}`, {
      key: business.keys.secretTest,
    });
    assert.equal(stored.body.data.payment.amountPaid, 1250);
    await page.context().close();
  });

  test('a wrong PIN shows a clear error and charges nothing', async () => {
    const intent = await createIntent(t, business.keys.secretTest, { amount: 500 });
    const phone = '+22241234567';
    expectStatus(await t.admin('POST', '/wallets', { phone, pin: '9876', balance: 10_000, environment: 'test' }), 201);
    const page = await openPage(`/p/${intent.shortCode}`);
    await page.getByLabel('Wallet phone number').fill(phone);
    await page.getByLabel('PIN').fill('1111');
    await page.getByRole('button', { name: 'Pay' }).click();
    const error = page.getByRole('alert');
    await error.filter({ hasText: 'Wrong phone number or PIN' }).waitFor();
    await shot(page, 'wrong-pin');
    assert.equal(await walletBalance(t, phone), 10_000);
    await page.context().close();
  });

  test('an expired intent shows its state instead of the form; Arabic reads right to left', async () => {
    const intent = await createIntent(t, business.keys.secretTest, { amount: 500 });
    await act(t, business.keys.secretTest, intent.referenceNumber, 'simulate-expiry');
    const page = await openPage(`/p/${intent.shortCode}?lang=ar`);
    assert.equal(await page.locator('html').getAttribute('dir'), 'rtl');
    assert.equal(await page.locator('#state').getAttribute('data-state'), 'EXPIRED');
    assert.equal(await page.locator('#pay-form').count(), 0);
    await shot(page, 'expired-ar');
    await page.context().close();
  });

  test('pay-by-code: enter the 6-digit code, check the merchant and amount, confirm with phone and PIN', async () => {
    const intent = await createIntent(t, business.keys.secretTest, { amount: 7_500, label: 'Caisse 2' });
    const page = await openPage('/pay?mode=test');
    await page.getByLabel('6-digit payment code').fill(intent.code);
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.locator('#label').filter({ hasText: 'Caisse 2' }).waitFor();
    assert.equal(await page.locator('#amount-due').textContent(), formatAmount(7_500, 'en'));
    await shot(page, 'code-confirm');
    await page.getByLabel('Wallet phone number').fill(RICH.phone);
    await page.getByLabel('PIN').fill(RICH.pin);
    await page.getByRole('button', { name: 'Pay' }).click();
    await page.locator('#receipt').waitFor();
    assert.equal(await page.locator('#r-ref').textContent(), intent.referenceNumber);
    await shot(page, 'code-receipt');
    await page.context().close();
  });

  test("Arabic, wrong PIN: the error is the page's Arabic text, and phone numbers read left to right", async () => {
    const ar = checkoutDictionaries.ar;
    const intent = await createIntent(t, business.keys.secretTest, { amount: 12_500 });
    const phone = '+22241234568';
    expectStatus(await t.admin('POST', '/wallets', { phone, pin: '9876', balance: 10_000, environment: 'test' }), 201);
    // ?lang=ar wins over the browser's French.
    const page = await openPage(`/p/${intent.shortCode}?lang=ar`, 'fr-FR');
    assert.equal(await page.locator('html').getAttribute('dir'), 'rtl');
    await page.locator('.wallets summary').click();
    // The first wallet's phone: its "+" is drawn left of its last digit (not "22220000001+").
    const [first, last] = await page
      .locator('.wallets bdi[dir=ltr]')
      .first()
      .evaluate((bdi) => {
        // No nested function here: the page runs this code as written.
        const text = bdi.firstChild!;
        const range = bdi.ownerDocument.createRange();
        const lefts = [0, text.textContent!.length - 1].map((i) => {
          range.setStart(text, i);
          range.setEnd(text, i + 1);
          return range.getBoundingClientRect().left;
        });
        return lefts;
      });
    assert.ok(first! < last!, `"+" at x=${first}, last digit at x=${last}`);
    await page.getByLabel(ar.phone).fill(phone);
    await page.getByLabel(ar.pin, { exact: true }).fill('1111');
    await page.getByRole('button', { name: ar.pay }).click();
    const expected = fillText(ar.errInvalidPin, {
      attempts: formatNumber(MAX_PIN_ATTEMPTS, 'ar'),
      minutes: formatNumber(PIN_LOCK_MINUTES, 'ar'),
    });
    await page.getByRole('alert').filter({ hasText: expected }).waitFor();
    assert.equal(await page.getByRole('alert').textContent(), expected);
    await shot(page, 'wrong-pin-ar');
    assert.equal(await walletBalance(t, phone), 10_000);
    await page.context().close();
  });

  test('Arabic, refunded in part: says how much of how much was refunded', async () => {
    const intent = await createIntent(t, business.keys.secretTest, { amount: 12_500 });
    expectStatus(await pay(t, intent.shortCode, RICH), 200);
    expectStatus(await act(t, business.keys.secretTest, intent.referenceNumber, 'refund', { amount: 4_500 }), 200);
    const page = await openPage(`/p/${intent.shortCode}`, 'ar-MR');
    assert.equal(await page.locator('html').getAttribute('lang'), 'ar');
    const state = page.locator('#state');
    assert.equal(await state.getAttribute('data-state'), 'REFUNDED');
    assert.equal(
      await state.textContent(),
      fillText(checkoutDictionaries.ar.refundedPart, {
        refunded: formatAmount(4_500, 'ar'),
        paid: formatAmount(12_500, 'ar'),
      }),
    );
    await shot(page, 'refunded-part-ar');
    await page.context().close();
  });

  test('pay-by-code keeps ?lang= through its redirect and the language links', async () => {
    const ar = checkoutDictionaries.ar;
    const intent = await createIntent(t, business.keys.secretTest, { amount: 7_500 });
    const page = await openPage('/pay?mode=test&lang=ar', 'fr-FR');
    await page.getByLabel(ar.code).fill(intent.code);
    await page.getByRole('button', { name: ar.find }).click();
    await page.waitForURL(`${t.baseUrl}/p/${intent.shortCode}?lang=ar`);
    assert.equal(await page.locator('#amount-due').textContent(), formatAmount(7_500, 'ar'));
    await page.getByRole('link', { name: 'Français' }).click();
    await page.waitForURL(`${t.baseUrl}/p/${intent.shortCode}?lang=fr`);
    assert.equal(await page.locator('html').getAttribute('lang'), 'fr');
    await page.context().close();
  });
});
