import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, test } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { checkAccessibility, launchChromium, skipWithoutChromium } from '../support/browser.js';
import { expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { englishAmong } from '../support/i18n.js';
import { RICH, walletBalance } from '../checkout/support.js';
import { createLink, payLink, slugOf } from '../links/support.js';
import { fillText, formatAmount } from '../../src/lib/i18n.js';
import { checkoutDictionaries } from '../../src/modules/checkout/i18n.js';
import { linkPageDictionaries } from '../../src/modules/links/i18n.js';

const ARTIFACTS = path.resolve('test-artifacts', 'browser');
const english = { ...checkoutDictionaries.en, ...linkPageDictionaries.en };

/**
 * Issue 50: a payment link paid in a real browser on a phone (Chromium, 390×844): an OPEN link in
 * Arabic and a FIXED one in French, each to its receipt, with axe-core finding nothing serious or
 * critical and no English left on the page; a link that filled up while its page was open; the poster.
 */
describe.skipIf(skipWithoutChromium)('payment links in a real browser (issue 50)', () => {
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
  async function openPage(url: string, locale: string): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, locale });
    const page = await context.newPage();
    await page.goto(`${t.baseUrl}${url}`);
    return page;
  }
  const shot = (page: Page, name: string) =>
    page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });
  const shownTexts = (page: Page) =>
    page.evaluate(() => {
      const doc = (globalThis as unknown as { document: { body: { innerText: string }; title: string } }).document;
      return [...doc.body.innerText.split('\n').map((line) => line.trim()), doc.title].filter(Boolean);
    });
  const noOverflow = async (page: Page, label: string) => {
    const overflow = await page.evaluate(() => {
      const root = (
        globalThis as unknown as { document: { documentElement: { scrollWidth: number; clientWidth: number } } }
      ).document.documentElement;
      return root.scrollWidth - root.clientWidth;
    });
    assert.ok(overflow <= 0, `${label}: ${overflow}px wider than the screen`);
  };

  test('an OPEN link in Arabic: the amount typed as "1 250.50" within its bounds, a name, a local phone, then the receipt', async () => {
    const ar = { ...checkoutDictionaries.ar, ...linkPageDictionaries.ar };
    const link = await createLink(t, business.keys.secretTest, {
      label: 'تبرع حر',
      amountType: 'OPEN',
      minAmount: 1_000,
      maxAmount: 500_000,
      collect: { name: true, note: true },
    });
    const before = await walletBalance(t, RICH.phone);
    // The browser speaks French; the link was shared in Arabic.
    const page = await openPage(`/l/${slugOf(link)}?lang=ar`, 'fr-FR');
    assert.equal(await page.locator('html').getAttribute('dir'), 'rtl');
    assert.equal(await page.locator('#label').textContent(), 'تبرع حر');
    assert.equal(
      await page.locator('#amount-bounds').textContent(),
      fillText(ar.amountBetween, { min: formatAmount(1_000, 'ar'), max: formatAmount(500_000, 'ar') }),
    );
    await checkAccessibility(page, 'link, OPEN, ar 390×844');
    await noOverflow(page, 'link, OPEN, ar');
    assert.deepEqual(englishAmong(await shownTexts(page), english), []);
    await shot(page, 'link-open-ar');

    // Below the link's minimum: refused on the page, in Arabic, before any request.
    await page.getByLabel(ar.amountToPay).fill('5');
    await page.getByLabel(ar.payerName).fill('عائشة');
    await page.getByLabel(ar.phone).fill('20000001');
    await page.getByLabel(ar.pin, { exact: true }).fill(RICH.pin);
    await page.getByRole('button', { name: ar.pay }).click();
    const alert = page.getByRole('alert');
    await alert.filter({ hasText: ar.errAmountOutOfRange }).waitFor();
    assert.ok((await alert.textContent())!.includes(formatAmount(1_000, 'ar')));
    await checkAccessibility(page, 'link, OPEN, ar, amount refused');

    await page.getByLabel(ar.amountToPay).fill('1 250.50');
    await page.getByLabel(ar.payerNote).fill('شكراً');
    await page.getByRole('button', { name: ar.pay }).click();
    await page.waitForURL(/\/p\/[A-Za-z0-9]+\?lang=ar$/);
    await page.locator('#receipt').waitFor();
    assert.equal(await page.locator('html').getAttribute('dir'), 'rtl');
    assert.equal(await page.locator('#r-amount').textContent(), formatAmount(125_050, 'ar'));
    assert.equal(await page.locator('#r-merchant').textContent(), 'Épicerie du Port');
    await checkAccessibility(page, 'link receipt, ar 390×844');
    assert.deepEqual(englishAmong(await shownTexts(page), english), []);
    await shot(page, 'link-open-ar-receipt');
    // The receipt survives a reload.
    await page.reload();
    assert.equal(await page.locator('#r-amount').textContent(), formatAmount(125_050, 'ar'));
    assert.equal(await walletBalance(t, RICH.phone), before - 125_050);
    const intents = await t.request('GET', `/api/v1/dev/payment-links/${link.referenceNumber}/intents`, {
      key: business.keys.secretTest,
    });
    const [intent] = intents.body.data.items;
    assert.equal(intent.payerName, 'عائشة');
    assert.equal(intent.payerNote, 'شكراً');
    await page.context().close();
  });

  test('a FIXED link in French: paid to the receipt in French, then on to the success URL', async () => {
    const fr = { ...checkoutDictionaries.fr, ...linkPageDictionaries.fr };
    const successUrl = `${t.baseUrl}/health?paid=1`;
    const link = await createLink(t, business.keys.secretTest, {
      label: 'Panier du jour',
      amountType: 'FIXED',
      amount: 25_000,
      successUrl,
    });
    const before = await walletBalance(t, RICH.phone);
    const page = await openPage(`/l/${slugOf(link)}`, 'fr-FR');
    assert.equal(await page.locator('html').getAttribute('lang'), 'fr');
    assert.equal(await page.locator('#amount-due').textContent(), formatAmount(25_000, 'fr'));
    assert.ok(await page.getByText(fr.testMode).isVisible());
    await checkAccessibility(page, 'link, FIXED, fr 390×844');
    await noOverflow(page, 'link, FIXED, fr');
    assert.deepEqual(englishAmong(await shownTexts(page), english), []);
    await shot(page, 'link-fixed-fr');
    await page.getByLabel(fr.phone).fill('20 00 00 01');
    await page.getByLabel(fr.pin, { exact: true }).fill(RICH.pin);
    await page.getByRole('button', { name: fr.pay }).click();
    await page.locator('#receipt').waitFor();
    assert.equal(await page.locator('html').getAttribute('lang'), 'fr');
    assert.equal(await page.locator('#r-amount').textContent(), formatAmount(25_000, 'fr'));
    await shot(page, 'link-fixed-fr-receipt');
    await page.waitForURL(successUrl, { timeout: 10_000 });
    assert.equal(await walletBalance(t, RICH.phone), before - 25_000);
    await page.context().close();
  });

  test('a link that takes its last payment while the page is open: told in French, nothing charged; then the page says so', async () => {
    const fr = { ...checkoutDictionaries.fr, ...linkPageDictionaries.fr };
    const link = await createLink(t, business.keys.secretTest, {
      label: 'Dernière place',
      amountType: 'FIXED',
      amount: 3_000,
      maxPayments: 1,
    });
    const page = await openPage(`/l/${slugOf(link)}?lang=fr`, 'en-US');
    const phone = '+22241234570';
    expectStatus(await t.admin('POST', '/wallets', { phone, pin: '9876', balance: 10_000, environment: 'test' }), 201);
    expectStatus(await payLink(t, link, RICH), 200);
    await page.getByLabel(fr.phone).fill(phone);
    await page.getByLabel(fr.pin, { exact: true }).fill('9876');
    await page.getByRole('button', { name: fr.pay }).click();
    await page.getByRole('alert').filter({ hasText: fr.errUnavailable }).waitFor();
    assert.equal(await walletBalance(t, phone), 10_000);
    await page.reload();
    assert.equal(await page.locator('#state').getAttribute('data-state'), 'PAYMENT_LINK_COMPLETED');
    assert.equal(await page.locator('#pay-form').count(), 0);
    await checkAccessibility(page, 'link completed, fr 390×844');
    assert.deepEqual(englishAmong(await shownTexts(page), english), []);
    await shot(page, 'link-completed-fr');
    await page.context().close();
  });

  test('the poster in Arabic: its QR drawn, accessible, one A5 sheet when printed', async () => {
    const link = await createLink(t, business.keys.secretTest, { label: 'قهوة', amountType: 'FIXED', amount: 5_000 });
    const page = await openPage(`/l/${slugOf(link)}/poster?lang=ar`, 'fr-FR');
    assert.equal(await page.locator('html').getAttribute('dir'), 'rtl');
    const qrWidth = await page
      .locator('#qr')
      .evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth);
    assert.ok(qrWidth > 0, 'the QR image loaded under the page policy');
    await checkAccessibility(page, 'poster, ar 390×844');
    assert.deepEqual(englishAmong(await shownTexts(page), english), []);
    await shot(page, 'link-poster-ar');
    await page.emulateMedia({ media: 'print' });
    assert.equal(await page.locator('nav.langs').isVisible(), false, 'the language links are not printed');
    const pdf = await page.pdf({ preferCSSPageSize: true });
    const pages = pdf.toString('latin1').match(/\/Type\s*\/Page[^s]/g) ?? [];
    assert.equal(pages.length, 1, 'one sheet');
    // A5 is 148 × 210 mm: 419.5 × 595.3 points.
    const box = /\/MediaBox\s*\[\s*0 0 ([\d.]+) ([\d.]+)\s*\]/.exec(pdf.toString('latin1'));
    assert.ok(box, 'a page size');
    assert.ok(Math.abs(Number(box[1]) - 419.5) < 2 && Math.abs(Number(box[2]) - 595.3) < 2, box[0]);
    await page.context().close();
  });
});
