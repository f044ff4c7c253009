import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { LANGS } from '../../src/lib/i18n.js';
import { checkAccessibility, launchChromium, skipWithoutChromium } from '../support/browser.js';
import { startTestApp, type TestApp } from '../support/harness.js';
import { englishAmong } from '../support/i18n.js';
import { openState, seedCustomerPages, SIZES, type CustomerPageState } from './customer-seed.js';

/**
 * Issue 38: every customer page in each of its states, in Arabic, French and English, on a phone
 * (390×844) and a laptop (1280×800), in a real browser: no serious or critical accessibility
 * finding (axe-core), nothing wider than the screen, the direction of its language, and no
 * English text left on the French and Arabic pages (among what the browser shows, the script's
 * texts included).
 */
describe.skipIf(skipWithoutChromium)(
  'customer pages in every language and size: accessible, no English left (issue 38)',
  () => {
    let t: TestApp;
    let browser: Browser;
    let shopId: string;
    let pages: CustomerPageState[];

    beforeAll(async () => {
      t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
      ({ shopId, pages } = await seedCustomerPages(t));
      browser = await launchChromium();
    });
    afterAll(async () => {
      await browser?.close();
      await t?.close();
    });

    /** What the browser shows of the page: its rendered text and the attributes read aloud or shown. */
    const shownTexts = (page: Page) =>
      page.evaluate(() => {
        const doc = (globalThis as unknown as { document: ShownDocument }).document;
        const texts = doc.body.innerText.split('\n').map((line) => line.trim());
        for (const element of doc.querySelectorAll('[placeholder], [aria-label], [title], [alt]'))
          for (const name of ['placeholder', 'aria-label', 'title', 'alt'])
            texts.push(element.getAttribute(name) ?? '');
        texts.push(doc.title);
        return texts.filter(Boolean);
      });

    for (const [size, viewport] of Object.entries(SIZES)) {
      test(`every customer page on a ${size} (${viewport.width}×${viewport.height}), in ${LANGS.join(', ')}`, async () => {
        let context: BrowserContext | undefined;
        try {
          context = await browser.newContext({ viewport, locale: 'en-US' });
          const page = await context.newPage();
          // A first visit of the origin, so the storefront's stored carts can be written before their pages open.
          await page.goto(`${t.baseUrl}/pay`);
          for (const lang of LANGS) {
            for (const under of pages) {
              const label = `${under.name}, ${lang}, ${size}`;
              await openState(page, t.baseUrl, shopId, under, lang);
              assert.equal(await page.locator('html').getAttribute('lang'), lang, label);
              assert.equal(await page.locator('html').getAttribute('dir'), lang === 'ar' ? 'rtl' : 'ltr', label);
              if (under.axe === 'every' || (lang === 'ar' && size === 'phone')) await checkAccessibility(page, label);
              const overflow = await page.evaluate(() => {
                const root = (globalThis as unknown as { document: ShownDocument }).document.documentElement;
                return root.scrollWidth - root.clientWidth;
              });
              assert.ok(overflow <= 0, `${label}: ${overflow}px wider than the screen`);
              if (lang !== 'en') {
                assert.deepEqual(englishAmong(await shownTexts(page), under.english), [], `English left on ${label}`);
              }
            }
          }
          // The check can fail: the English pages show English.
          await openState(page, t.baseUrl, shopId, pages[0]!, 'en');
          assert.notDeepEqual(englishAmong(await shownTexts(page), pages[0]!.english), []);
        } finally {
          await context?.close();
        }
      });
    }
  },
);

/** The little of the DOM the checks read (the test's types have no DOM). */
interface ShownDocument {
  body: { innerText: string };
  title: string;
  documentElement: { scrollWidth: number; clientWidth: number };
  querySelectorAll(selector: string): Iterable<{ getAttribute(name: string): string | null }>;
}
