import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, test } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { createUser } from '../dashboard/support.js';
import { checkAccessibility, launchChromium, skipWithoutChromium } from '../support/browser.js';
import { startTestApp, type TestApp } from '../support/harness.js';
import { DASHBOARD_APP_CONFIG, signInAs } from './dashboard-seed.js';

const PHONE = { width: 390, height: 844 } as const;
const ARTIFACTS = path.resolve('test-artifacts', 'dashboard');
const shot = (page: Page, name: string) =>
  page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });

/** The page's navigator, as far as the test reads it. */
type BrowserGlobals = { navigator: { clipboard: { readText(): Promise<string> }; share?: unknown } };

/** What the page's Share sheet was given, when the test stands in for the browser's Web Share API. */
interface SharedData {
  title?: string;
  text?: string;
  url?: string;
}

/**
 * Issue 50 item 5 on a phone: an owner makes an open link from the form in Arabic, then copies and
 * shares it: the Web Share API where the browser has one, else WhatsApp's own link.
 */
describe.skipIf(skipWithoutChromium)('payment links in the dashboard, on a phone (issue 50)', () => {
  let t: TestApp;
  let browser: Browser;
  let owner: { email: string; password: string };

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    t = await startTestApp({ config: DASHBOARD_APP_CONFIG });
    const business = await t.createBusiness({ name: 'Boulangerie Tevragh Zeina', approveLive: false });
    owner = await createUser(t, business.id, 'owner');
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  const overflowOf = (page: Page) =>
    page.evaluate(() => {
      const root = (
        globalThis as unknown as { document: { documentElement: { scrollWidth: number; clientWidth: number } } }
      ).document.documentElement;
      return root.scrollWidth - root.clientWidth;
    });

  test('in Arabic: create an open link, copy its address, and share it without the Web Share API', async () => {
    const context = await browser.newContext({ viewport: PHONE, locale: 'ar', hasTouch: true, isMobile: true });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: t.baseUrl });
    const page = await context.newPage();
    await signInAs(page, t.baseUrl, owner, 'ar');
    // On a phone the payment links are under the header's "More" (issue 54).
    await page.getByText('المزيد', { exact: true }).click();
    await page.getByRole('link', { name: 'روابط الدفع', exact: true }).click();
    await page.getByRole('link', { name: 'رابط دفع جديد' }).click();
    assert.equal(await page.locator('html').getAttribute('dir'), 'rtl');
    await page.getByLabel('الوصف', { exact: true }).fill('خبز وحلويات');
    await page.getByLabel('مبلغ يختاره الدافع').check();
    await page.getByLabel('الحد الأدنى (أوقية)').fill('20');
    await page.getByLabel('الحد الأقصى (أوقية)').fill('1500,5');
    await page.getByRole('button', { name: 'إنشاء' }).click();
    // In Arabic "," only groups digits: "1500,5" is not an amount, refused on its field, in Arabic.
    await page.getByRole('alert').first().waitFor();
    assert.equal(await page.locator('#maxAmount').getAttribute('aria-invalid'), 'true');
    assert.ok((await overflowOf(page)) <= 0, 'the refused form fits the phone');
    await checkAccessibility(page, 'link-new refused ar 390×844');
    await shot(page, 'link-new-refused-ar-phone');
    await page.getByLabel('الحد الأقصى (أوقية)').fill('1500.50');
    await page.locator('#advanced summary').click();
    await page.getByLabel('البيانات الوصفية', { exact: true }).fill('rayon=pain');
    await page.getByRole('button', { name: 'إنشاء' }).click();
    await page.waitForURL(/\/dashboard\/links\/PL-\d+\?notice=done$/);

    assert.ok((await overflowOf(page)) <= 0, 'the link page fits the phone');
    await checkAccessibility(page, 'link ar 390×844');
    await shot(page, 'link-ar-phone');
    const url = await page.locator('#link-url').inputValue();
    assert.match(url, /\/l\/[0-9A-Za-z]{12}$/);
    // The script shows Copy; it copies the address.
    await page.getByRole('button', { name: 'نسخ' }).click();
    await page.locator('#link-url-status', { hasText: 'تم النسخ.' }).waitFor();
    assert.equal(
      await page.evaluate(() => (globalThis as unknown as BrowserGlobals).navigator.clipboard.readText()),
      url,
    );
    // No Web Share API in this browser: Share is WhatsApp's link, with the label and the address.
    const hasShare = await page.evaluate(
      () => typeof (globalThis as unknown as BrowserGlobals).navigator.share === 'function',
    );
    const share = page.locator('#link-url-share');
    if (!hasShare) {
      assert.equal(await share.textContent(), 'مشاركة على واتساب');
      const href = new URL((await share.getAttribute('href'))!);
      assert.equal(href.origin + href.pathname, 'https://wa.me/');
      assert.equal(href.searchParams.get('text'), `خبز وحلويات\n${url}`);
    }
    assert.match((await page.locator('#download-poster').getAttribute('href'))!, /\/poster\?lang=ar$/);
    await context.close();
  });

  test('where the browser has the Web Share API, Share opens it with the label and the address', async () => {
    const context = await browser.newContext({ viewport: PHONE, locale: 'fr' });
    // The browser's share sheet, stood in for: what it is given is kept for the test to read.
    await context.addInitScript(() => {
      const holder = globalThis as unknown as { shared?: SharedData; navigator: { share?: unknown } };
      holder.navigator.share = (data: SharedData) => {
        holder.shared = data;
        return Promise.resolve();
      };
    });
    const page = await context.newPage();
    await signInAs(page, t.baseUrl, owner, 'fr');
    await page.goto(`${t.baseUrl}/dashboard/links/new`);
    await page.getByLabel('Libellé', { exact: true }).fill('Pain au chocolat');
    await page.getByLabel('Montant (MRU)').fill('25');
    await page.getByRole('button', { name: 'Créer' }).click();
    await page.waitForURL(/\/dashboard\/links\/PL-\d+\?notice=done$/);
    await shot(page, 'link-fr-phone');
    const url = await page.locator('#link-url').inputValue();
    const before = page.url();
    await page.getByRole('link', { name: 'Partager', exact: true }).click();
    await page.waitForFunction(() => 'shared' in globalThis);
    const shared = await page.evaluate(() => (globalThis as unknown as { shared: SharedData }).shared);
    assert.deepEqual(shared, { title: 'Pain au chocolat', text: 'Pain au chocolat', url });
    assert.equal(page.url(), before, 'the page stays');
    assert.equal(context.pages().length, 1, 'no WhatsApp tab opened');
    await context.close();
  });
});
