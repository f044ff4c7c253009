import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import type { Browser } from 'playwright-core';
import { checkAccessibility, launchChromium, skipWithoutChromium } from '../support/browser.js';
import { expectStatus, startTestApp, type TestApp } from '../support/harness.js';
import { act, createIntent } from '../intents/support.js';
import { createPayout, newPhone, payoutTo, sendPayouts } from '../payouts/support.js';
import { SANDBOX_FAILING_PAYOUT_PHONE } from '../../src/modules/sandbox/sandbox.js';
import { BALANCE, fold } from '../payments/support.js';
import { SIZES } from './dashboard-seed.js';

/**
 * Issue 54 item 11: the printable statement on a phone (390×844) is cards, one per transaction,
 * nothing wider than the screen, in Arabic and French, accessible (axe-core); printed, or on a
 * wide screen, it is the table.
 */
describe.skipIf(skipWithoutChromium)('the printable statement on a phone: cards, no sideways scroll', () => {
  let t: TestApp;
  let browser: Browser;
  let sk: string;
  const month = new Date().toISOString().slice(0, 7);

  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    const business = await t.createBusiness({ name: 'Boutique du marché central de Nouakchott' });
    sk = business.keys.secretTest;
    const paid = await createIntent(t, sk, { amount: 1_250_050, label: 'Commande de tissus et de voiles brodés' });
    expectStatus(await act(t, sk, paid.referenceNumber, 'simulate'), 200);
    expectStatus(await act(t, sk, paid.referenceNumber, 'refund', { amount: 12_345 }), 200);
    expectStatus(await createPayout(t, sk, payoutTo(newPhone(), 300_000, { description: 'Loyer du mois' })), 201);
    expectStatus(await createPayout(t, sk, payoutTo(SANDBOX_FAILING_PAYOUT_PHONE, 4_000)), 201);
    await sendPayouts(t);
    await fold(t);
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  for (const lang of ['ar', 'fr'] as const) {
    test(`${lang}: cards on the phone, the table on a wide screen and on paper`, async () => {
      const context = await browser.newContext({
        viewport: SIZES.phone,
        locale: 'en-US',
        extraHTTPHeaders: { authorization: `Bearer ${sk}` },
      });
      try {
        const page = await context.newPage();
        const response = await page.goto(`${t.baseUrl}${BALANCE}/statements/${month}?format=html&lang=${lang}`);
        assert.equal(response?.status(), 200);
        assert.equal(await page.locator('html').getAttribute('dir'), lang === 'ar' ? 'rtl' : 'ltr');
        const overflow = await page.evaluate(() => {
          const root = (globalThis as unknown as { document: { documentElement: Root } }).document.documentElement;
          return root.scrollWidth - root.clientWidth;
        });
        assert.ok(overflow <= 0, `${lang}: ${overflow}px wider than the screen`);
        // Each transaction a card: its cells stacked, each labelled, the header row hidden.
        const rows = page.locator('#transactions tbody tr');
        assert.equal(await rows.count(), 5);
        assert.equal(await page.locator('#transactions thead').isVisible(), false);
        const first = await rows.first().boundingBox();
        assert.ok(first && first.width <= SIZES.phone.width && first.height > 100, JSON.stringify(first));
        const label = await rows
          .first()
          .locator('td.num')
          .last()
          .evaluate((cell) => getComputedStyle(cell, '::before').content);
        assert.ok(label.length > 2 && label !== 'none', label);
        await checkAccessibility(page, `statement, ${lang}, phone`);

        // On paper, and on a wide screen, the table with its header row.
        await page.emulateMedia({ media: 'print' });
        assert.equal(await page.locator('#transactions thead').isVisible(), true);
        await page.emulateMedia({ media: 'screen' });
        await page.setViewportSize(SIZES.laptop);
        assert.equal(await page.locator('#transactions thead').isVisible(), true);
        // A row's cells side by side again: the first and the last on one line.
        const firstCell = await rows.first().locator('td').first().boundingBox();
        const lastCell = await rows.first().locator('td').last().boundingBox();
        assert.ok(
          firstCell && lastCell && Math.abs(firstCell.y - lastCell.y) < 2,
          JSON.stringify([firstCell, lastCell]),
        );
      } finally {
        await context.close();
      }
    });
  }
});

interface Root {
  scrollWidth: number;
  clientWidth: number;
}

declare function getComputedStyle(element: unknown, pseudo?: string): { content: string };
