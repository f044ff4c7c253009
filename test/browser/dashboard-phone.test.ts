import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { checkAccessibility, launchChromium, skipWithoutChromium } from '../support/browser.js';
import { startTestApp, type TestApp } from '../support/harness.js';
import { DASHBOARD_APP_CONFIG, seedDashboard, signInAs, SIZES, type DashboardSeed } from './dashboard-seed.js';

/**
 * Issue 54, items 8 to 10: the dashboard on a 390×844 phone, in Arabic and French. The lists'
 * cards carry a second line (label, customer, recipient) and the date; the product form's variant
 * and option fields are labelled in their cards; every section of the header is on the screen or
 * under "More", none cut in half. axe-core finds nothing serious on any of them.
 */
const PHONE = SIZES.phone;
const PHONE_LANGS = ['ar', 'fr'] as const;

describe.skipIf(skipWithoutChromium)('the dashboard on a phone (issue 54, items 8 to 10)', () => {
  let t: TestApp;
  let browser: Browser;
  let seed: DashboardSeed;

  beforeAll(async () => {
    t = await startTestApp({ config: DASHBOARD_APP_CONFIG });
    seed = await seedDashboard(t);
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  /** Each language's session on a phone, signed in from that language's sign-in page. */
  async function inEachLanguage(check: (page: Page, lang: (typeof PHONE_LANGS)[number]) => Promise<void>) {
    for (const lang of PHONE_LANGS) {
      const context: BrowserContext = await browser.newContext({ viewport: PHONE, locale: 'en-US' });
      try {
        const page = await context.newPage();
        await signInAs(page, t.baseUrl, seed.owner, lang);
        await check(page, lang);
      } finally {
        await context.close();
      }
    }
  }

  /** Whether the element is drawn, whole, inside the phone's screen width. */
  async function onScreen(element: Locator): Promise<boolean> {
    if (!(await element.isVisible())) return false;
    const box = await element.boundingBox();
    return box !== null && box.width > 0 && box.x >= 0 && box.x + box.width <= PHONE.width + 0.5;
  }

  const fontSize = (element: Locator) => element.evaluate((node) => parseFloat(getComputedStyle(node).fontSize));

  test('the payments, orders and payouts cards show their second line and their date in small type (item 8)', async () => {
    const lists = [
      { path: '/dashboard/payments', table: '#payments', second: 'Thé vert ×3' },
      { path: '/dashboard/orders', table: '#orders', second: 'Aicha' },
      { path: '/dashboard/payouts', table: '#payouts', second: /^\+222\d{8}$/ },
    ];
    await inEachLanguage(async (page, lang) => {
      for (const list of lists) {
        const label = `${list.path}, ${lang}`;
        await page.goto(`${t.baseUrl}${list.path}`);
        const rows = await page.locator(`${list.table} tbody tr`).all();
        assert.ok(rows.length > 0, label);
        const seconds: string[] = [];
        for (const row of rows) {
          const reference = row.locator('td').first();
          const second = row.locator('td.sub');
          const date = row.locator('td.when');
          const text = (await second.innerText()).trim();
          if (text) {
            assert.ok(await onScreen(second), `${label}: the second line "${text}" is not on the screen`);
            const [referenceBox, secondBox] = [await reference.boundingBox(), await second.boundingBox()];
            assert.ok(
              referenceBox && secondBox && secondBox.y > referenceBox.y,
              `${label}: "${text}" under the reference`,
            );
            seconds.push(text);
          }
          assert.ok(await onScreen(date), `${label}: a card's date is not on the screen`);
          assert.ok((await date.innerText()).trim() !== '', label);
          assert.ok((await fontSize(date)) < (await fontSize(reference)), `${label}: the date is not in small type`);
          for (const cell of [reference, row.locator('td.num').first(), row.locator('td.state')])
            assert.ok(await onScreen(cell), `${label}: reference, amount and status on the screen`);
        }
        assert.ok(
          seconds.some((text) => (typeof list.second === 'string' ? text === list.second : list.second.test(text))),
          `${label}: ${seconds.join(' | ')}`,
        );
        await checkAccessibility(page, label);
      }
    });
  });

  test("the product form's variant and option fields each show their label in the card (item 9)", async () => {
    const product = seed.pages.find((under) => under.name === 'product')!;
    await inEachLanguage(async (page, lang) => {
      await page.goto(`${t.baseUrl}${product.path}`);
      for (const table of ['#variants', '#options']) {
        const heads = (await page.locator(`${table} thead th`).allInnerTexts()).map((head) => head.trim());
        const rows = await page.locator(`${table} tbody tr`).all();
        assert.ok(rows.length > 0, `${table}, ${lang}`);
        for (const row of rows) {
          const inputs = await row.locator('input:not([type="hidden"])').all();
          assert.equal(inputs.length, heads.length, `${table}, ${lang}: one field a column`);
          for (const [column, input] of inputs.entries()) {
            const id = (await input.getAttribute('id'))!;
            const shown = page.locator(`label[for="${id}"]`);
            const where = `${table} ${id}, ${lang}`;
            assert.ok(await onScreen(shown), `${where}: its label is not shown`);
            assert.ok(await onScreen(input), `${where}: the field is off the screen`);
            // The label says what the column's head (hidden on a phone) says (its row's number is
            // read aloud only), above its field.
            const text = (await shown.innerText()).trim();
            assert.ok(text.startsWith(heads[column]!), `${where}: "${text}" under "${heads[column]}"`);
            const [labelBox, inputBox] = [await shown.boundingBox(), await input.boundingBox()];
            assert.ok(labelBox && inputBox && labelBox.y + labelBox.height <= inputBox.y + 1, `${where}: label above`);
          }
        }
      }
      await checkAccessibility(page, `product, ${lang}`);
    });
  });

  test('every section of the header is on the screen or under "More", none cut off (item 10)', async () => {
    await inEachLanguage(async (page, lang) => {
      await page.goto(`${t.baseUrl}/dashboard`);
      // The owner's sections, as the markup lists them (the row's and the menu's links).
      const sections = new Set(
        await page.locator('nav.main a').evaluateAll((links) => links.map((link) => link.getAttribute('href') ?? '')),
      );
      assert.equal(sections.size, 12, `${lang}: ${[...sections].join(' ')}`);
      const row = page.locator('nav.main > ul > li > a');
      const inRow = new Set<string>();
      for (const link of await row.all()) {
        if (!(await link.isVisible())) continue;
        assert.ok(await onScreen(link), `${lang}: ${await link.getAttribute('href')} is cut off at the screen's edge`);
        inRow.add((await link.getAttribute('href'))!);
      }
      const more = page.locator('nav.main summary');
      assert.ok(await onScreen(more), `${lang}: "More" is on the screen`);
      await more.click();
      const inMenu = new Set<string>();
      for (const link of await page.locator('nav.main details a').all()) {
        assert.ok(await onScreen(link), `${lang}: ${await link.getAttribute('href')} in "More" is on the screen`);
        inMenu.add((await link.getAttribute('href'))!);
      }
      assert.deepEqual(
        [...sections].filter((href) => !inRow.has(href) && !inMenu.has(href)),
        [],
        `${lang}: sections neither in the row nor under "More"`,
      );
      assert.deepEqual(
        [...inRow].filter((href) => inMenu.has(href)),
        [],
        `${lang}: a section shown twice`,
      );
      await checkAccessibility(page, `header with "More" open, ${lang}`);
      // A section reached through "More" is marked as the current one on its page, on the summary too.
      await page.locator('nav.main details a[href="/dashboard/team"]').click();
      await page.waitForURL(`${t.baseUrl}/dashboard/team`);
      assert.equal(await page.locator('nav.main summary').getAttribute('class'), 'current', lang);
      assert.equal(
        await page.locator('nav.main details a[href="/dashboard/team"]').getAttribute('aria-current'),
        'page',
        lang,
      );
    });
    // On a laptop the whole row shows and "More" does not.
    const context = await browser.newContext({ viewport: SIZES.laptop, locale: 'en-US' });
    try {
      const page = await context.newPage();
      await signInAs(page, t.baseUrl, seed.owner, 'fr');
      assert.equal(await page.locator('nav.main summary').isVisible(), false);
      for (const link of await page.locator('nav.main > ul > li > a').all()) {
        const box = await link.boundingBox();
        assert.ok(
          box && box.x >= 0 && box.x + box.width <= SIZES.laptop.width,
          `laptop: ${await link.getAttribute('href')}`,
        );
      }
    } finally {
      await context.close();
    }
  });
});

declare function getComputedStyle(element: unknown): { fontSize: string };
