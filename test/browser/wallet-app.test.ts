import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, test } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { checkAccessibility, launchChromium, skipWithoutChromium } from '../support/browser.js';
import { expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { getIntent } from '../intents/support.js';
import { requestPayment } from '../walletapp/support.js';

const ARTIFACTS = path.resolve('test-artifacts', 'browser');

/**
 * Issue 51: the wallet app on a phone (Chromium, 390×844): sign in with a local number in Arabic,
 * a request arriving while the page is open (the event stream, no reload), approved with the PIN;
 * axe-core finds nothing serious or critical on either page.
 */
describe.skipIf(skipWithoutChromium)('the wallet app in a real browser (issue 51)', () => {
  let t: TestApp;
  let browser: Browser;
  let business: TestBusiness;
  const phone = '+22220000041';
  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    business = await t.createBusiness({ name: 'Épicerie du Port' });
    expectStatus(await t.admin('POST', '/wallets', { phone, pin: '2468', environment: 'test', balance: 500_000 }), 201);
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  async function openPage(url: string, locale: string): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, locale });
    const page = await context.newPage();
    await page.goto(`${t.baseUrl}${url}`);
    return page;
  }

  test('signs in in Arabic, sees a new request arrive without reloading, approves it with the PIN', async () => {
    const page = await openPage('/wallet?mode=test', 'ar');
    assert.equal(await page.locator('html').getAttribute('dir'), 'rtl');
    await checkAccessibility(page, 'wallet sign-in, ar 390×844');
    await page.fill('#phone', '20000041');
    await page.fill('#pin', '2468');
    await page.click('#sign-in button[type=submit]');
    await page.waitForSelector('#balance');
    await page.waitForSelector('#no-pending');
    // Give the page's event stream a moment to open before the request is made.
    await page.waitForTimeout(300);
    const request = await requestPayment(t, business.keys.secretTest, { phone, message: 'طلبية 7' });
    await page.waitForSelector(`#request-${request.id}`, { timeout: 3000 });
    const countdown = page.locator(`#request-${request.id} time.countdown`);
    const first = await countdown.textContent();
    await page.waitForTimeout(1200);
    assert.notEqual(await countdown.textContent(), first, 'the countdown moves');
    await checkAccessibility(page, 'wallet home with a request, ar 390×844');
    await page.screenshot({ path: path.join(ARTIFACTS, 'wallet-app-ar.png'), fullPage: true });
    await page.fill(`#pin-${request.id}`, '2468');
    await page.click(`#request-${request.id} form:first-of-type button[type=submit]`);
    await page.waitForSelector('#notice');
    assert.match((await page.locator('#notice').textContent()) ?? '', /تم الدفع/);
    assert.equal((await getIntent(t, business.keys.secretTest, request.intent)).status, 'PAID');
    await page.context().close();
  });
});
