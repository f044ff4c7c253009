import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { dictionaries } from '../../src/modules/dashboard/i18n.js';
import type { Lang } from '../../src/lib/i18n.js';
import { createUser } from '../dashboard/support.js';
import { createIntent } from '../intents/support.js';
import { checkAccessibility, launchChromium, skipWithoutChromium } from '../support/browser.js';
import { startTestApp, type TestApp } from '../support/harness.js';
import { DASHBOARD_APP_CONFIG, SIZES, signInAs } from './dashboard-seed.js';

/** The page's navigator, as far as the test reads it. */
type BrowserGlobals = { navigator: { clipboard: { readText(): Promise<string> }; share?: unknown } };

const clipboardOf = (page: Page) =>
  page.evaluate(() => (globalThis as unknown as BrowserGlobals).navigator.clipboard.readText());

/** How far the page reaches past the screen's edge. */
const overflowOf = (page: Page) =>
  page.evaluate(() => {
    const root = (
      globalThis as unknown as { document: { documentElement: { scrollWidth: number; clientWidth: number } } }
    ).document.documentElement;
    return root.scrollWidth - root.clientWidth;
  });

/**
 * Issue 54 item 13: every key, signing secret, one-time link and payment address the dashboard
 * shows has Copy (the clipboard, and "Copied" said in the page's language through its status
 * region); a payment's address has Share, WhatsApp's link where the browser has no Web Share API.
 * On a phone (390×844), in Arabic and French, axe-core clean.
 */
describe.skipIf(skipWithoutChromium)('Copy and Share in the dashboard, on a phone (issue 54)', () => {
  let t: TestApp;
  let browser: Browser;
  let owner: { email: string; password: string };
  let secretKey: string;

  beforeAll(async () => {
    t = await startTestApp({ config: DASHBOARD_APP_CONFIG });
    const business = await t.createBusiness({ name: 'Boutique Ksar', approveLive: false });
    secretKey = business.keys.secretTest;
    owner = await createUser(t, business.id, 'owner');
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  /** A phone in `lang`, allowed the clipboard, and without the Web Share API (as most desktops). */
  async function phone(lang: Lang): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext({ viewport: SIZES.phone, locale: lang, hasTouch: true, isMobile: true });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: t.baseUrl });
    await context.addInitScript(() => {
      const navigator = (globalThis as unknown as { Navigator: { prototype: { share?: unknown } } }).Navigator;
      delete navigator.prototype.share;
    });
    const page = await context.newPage();
    await signInAs(page, t.baseUrl, owner, lang);
    return { context, page };
  }

  /** Copy beside `#of`: its text on the clipboard, and the page's "Copied" in its status region. */
  async function copies(page: Page, lang: Lang, of: string, expected: string) {
    const words = dictionaries[lang];
    const button = page.locator(`#${of}-copy`);
    assert.ok(await button.isVisible(), `${of}: the script shows Copy`);
    assert.equal((await button.textContent())?.trim(), words.copy);
    await button.click();
    await page.locator(`#${of}-status[role="status"]`, { hasText: words.copied }).waitFor();
    assert.equal(await clipboardOf(page), expected, `${of}: the clipboard holds it`);
  }

  for (const lang of ['ar', 'fr'] as const) {
    test(`${lang}: a payment's address is copied, and shared through WhatsApp's link`, async () => {
      const words = dictionaries[lang];
      const label = lang === 'ar' ? 'تمر وحليب' : 'Dattes & lait';
      const intent = await createIntent(t, secretKey, { amount: 12_550, label });
      const { context, page } = await phone(lang);
      await page.goto(`${t.baseUrl}/dashboard/payments/${intent.referenceNumber}`);
      assert.equal(await page.locator('html').getAttribute('lang'), lang);
      const url = (await page.locator('#pay-url').textContent())!.trim();
      assert.match(url, /^https?:\/\//);
      await copies(page, lang, 'pay-url', url);

      // No Web Share API: Share is WhatsApp's own link, the label and the address encoded in it.
      const share = page.locator('#pay-url-share');
      assert.equal((await share.textContent())?.trim(), words.shareWhatsApp);
      const href = (await share.getAttribute('href'))!;
      assert.equal(href, `https://wa.me/?text=${encodeURIComponent(`${label}\n${url}`)}`);
      assert.equal(new URL(href).searchParams.get('text'), `${label}\n${url}`);
      assert.ok((await overflowOf(page)) <= 0, 'the page fits the phone');
      await checkAccessibility(page, `payment copy/share ${lang} 390×844`);

      // The storefront's address, in Settings: copied, and shared under the shop's name.
      await page.goto(`${t.baseUrl}/dashboard/settings`);
      const storefront = await page.locator('#storefront-url').inputValue();
      assert.match(storefront, /\/s\/shop_/);
      await copies(page, lang, 'storefront-url', storefront);
      const shareShop = (await page.locator('#storefront-url-share').getAttribute('href'))!;
      assert.equal(new URL(shareShop).searchParams.get('text'), `Boutique Ksar\n${storefront}`);
      assert.ok((await overflowOf(page)) <= 0, 'Settings fit the phone');
      await checkAccessibility(page, `settings storefront ${lang} 390×844`);
      await context.close();
    });

    test(`${lang}: a new key and a new signing secret are copied`, async () => {
      const words = dictionaries[lang];
      const { context, page } = await phone(lang);
      await page.goto(`${t.baseUrl}/dashboard/developers/keys`);
      await page.locator('#key-name').fill(`Caisse ${lang}`);
      await page.getByRole('button', { name: words.createKey, exact: true }).click();
      const key = (await page.locator('#new-key').textContent())!.trim();
      assert.match(key, /^sk_test_/);
      await copies(page, lang, 'new-key', key);
      assert.ok((await overflowOf(page)) <= 0, 'the key page fits the phone');
      await checkAccessibility(page, `key created ${lang} 390×844`);

      await page.goto(`${t.baseUrl}/dashboard/developers/webhooks`);
      await page.locator('#endpoint-url').fill('http://127.0.0.1:9/hook');
      await page.locator('form[action="/dashboard/developers/webhooks"] button[type="submit"]').click();
      const secret = (await page.locator('#endpoint-secret').textContent())!.trim();
      assert.ok(secret.length >= 24, secret);
      await copies(page, lang, 'endpoint-secret', secret);
      assert.ok((await overflowOf(page)) <= 0, 'the secret page fits the phone');
      await checkAccessibility(page, `endpoint created ${lang} 390×844`);
      await context.close();
    });
  }
});
