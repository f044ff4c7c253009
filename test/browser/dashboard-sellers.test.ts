import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, test } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { formatBasisPoints } from '../../src/lib/i18n.js';
import { createUser } from '../dashboard/support.js';
import { act, createIntent } from '../intents/support.js';
import { createSeller } from '../sellers/support.js';
import { checkAccessibility, launchChromium, skipWithoutChromium } from '../support/browser.js';
import { expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { DASHBOARD_APP_CONFIG, signInAs, SIZES } from './dashboard-seed.js';

const ARTIFACTS = path.resolve('test-artifacts', 'dashboard');
const shot = (page: Page, name: string) =>
  page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });

/** The little of the DOM the checks read (the test's types have no DOM). */
type Root = { document: { documentElement: { scrollWidth: number; clientWidth: number } } };

/**
 * Issue 52 item 5 on a phone, in Arabic: an owner adds a seller from the form (a refused field
 * first), edits and disables it, and reads the list as cards: the name on the first line, the
 * balance and the status on the second. Then a seller's page with its activity and payments as
 * cards, and a payout to the seller from its Pay out form (review, confirm), listed with its
 * status. axe-core on each page: nothing serious or critical.
 */
describe.skipIf(skipWithoutChromium)('the Sellers page on a phone, in Arabic (issue 52)', () => {
  let t: TestApp;
  let browser: Browser;
  let owner: { email: string; password: string };
  let business: TestBusiness;

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    t = await startTestApp({ config: DASHBOARD_APP_CONFIG });
    business = await t.createBusiness({ name: 'Marché Capitale', approveLive: false });
    owner = await createUser(t, business.id, 'owner');
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  const overflowOf = (page: Page) =>
    page.evaluate(() => {
      const root = (globalThis as unknown as Root).document.documentElement;
      return root.scrollWidth - root.clientWidth;
    });

  test('create (a refusal at its field first), edit and disable a seller; the list as cards', async () => {
    const context = await browser.newContext({ viewport: SIZES.phone, locale: 'ar', hasTouch: true, isMobile: true });
    try {
      const page = await context.newPage();
      await signInAs(page, t.baseUrl, owner, 'ar');
      await page.getByText('المزيد', { exact: true }).click(); // on a phone, under "More" (issue 54)
      await page.getByRole('link', { name: 'البائعون', exact: true }).click();
      await page.locator('#empty').waitFor();
      await checkAccessibility(page, 'sellers empty ar 390×844');
      await page.getByRole('link', { name: 'بائع جديد' }).click();
      assert.equal(await page.locator('html').getAttribute('dir'), 'rtl');
      await page.getByLabel('الاسم', { exact: true }).fill('خياطة فاطمة');
      await page.getByLabel('الهاتف (حيث تُحوَّل مدفوعاته)').fill('36 00 00 12');
      await page.getByLabel('العمولة (%)').fill('12.345');
      await page.getByRole('button', { name: 'إنشاء' }).click();
      // Three decimals: refused on its field, in Arabic, what was typed kept.
      await page.getByRole('alert').first().waitFor();
      assert.equal(await page.locator('#commission').getAttribute('aria-invalid'), 'true');
      assert.equal(await page.locator('#phone').inputValue(), '36 00 00 12');
      assert.ok((await overflowOf(page)) <= 0, 'the refused form fits the phone');
      await checkAccessibility(page, 'seller-new refused ar 390×844');
      await shot(page, 'seller-new-refused-ar-phone');
      await page.getByLabel('العمولة (%)').fill('12.5');
      await page.getByRole('button', { name: 'إنشاء' }).click();
      await page.waitForURL(/\/dashboard\/sellers\/SL-\d{16}\?notice=done$/);
      assert.equal(await page.locator('#commission-shown').textContent(), formatBasisPoints(1_250, 'ar'));
      assert.equal(await page.locator('#phone-shown').textContent(), '+22236000012');
      assert.ok((await overflowOf(page)) <= 0, 'the seller page fits the phone');
      await checkAccessibility(page, 'seller ar 390×844');
      await shot(page, 'seller-ar-phone');

      await page.getByLabel('الحالة').selectOption('DISABLED');
      await page.getByRole('button', { name: 'حفظ' }).click();
      await page.waitForURL(/\?notice=done$/);
      assert.equal(await page.locator('#status').textContent(), 'معطّل');

      await page.getByText('المزيد', { exact: true }).click(); // on a phone, under "More" (issue 54)
      await page.getByRole('link', { name: 'البائعون', exact: true }).click();
      const row = page.locator('#sellers tbody tr').first();
      const name = await row.locator('td').first().boundingBox();
      const balance = await row.locator('td.num:not(.hide-sm)').boundingBox();
      const status = await row.locator('.badge').boundingBox();
      assert.ok(name && balance && status, 'the card shows its name, balance and status');
      assert.ok(balance.y >= name.y + name.height - 1, 'the balance is below the name');
      assert.ok(Math.abs(balance.y - status.y) < 20, 'the balance and the status share a line');
      assert.ok(!(await row.locator('td.hide-sm').first().isVisible()), 'the phone is left to the seller page');
      assert.match((await row.locator('td.num:not(.hide-sm)').textContent())!, /^0\.00\u00a0أوقية$/);
      assert.ok((await overflowOf(page)) <= 0, 'the list fits the phone');
      await checkAccessibility(page, 'sellers ar 390×844');
      await shot(page, 'sellers-ar-phone');
    } finally {
      await context.close();
    }
  });

  test("a seller's page with its activity as cards; the owner pays it out from it (review, confirm)", async () => {
    const sk = business.keys.secretTest;
    const seller = await createSeller(t, sk, { name: 'بائع الخضار', phone: '+22236000077' });
    const intent = await createIntent(t, sk, { amount: 10_000, splits: [{ seller: seller.id, amount: 6_000 }] });
    expectStatus(await act(t, sk, intent.referenceNumber, 'simulate'), 200);
    const context = await browser.newContext({ viewport: SIZES.phone, locale: 'ar', hasTouch: true, isMobile: true });
    try {
      const page = await context.newPage();
      await signInAs(page, t.baseUrl, owner, 'ar');
      await page.goto(`${t.baseUrl}/dashboard/sellers/${seller.id}`);
      // The activity as cards: its payment linked to the payment's page, the amounts named.
      const row = page.locator('#seller-activity tbody tr').first();
      assert.equal(await row.getAttribute('data-type'), 'payment');
      assert.equal(await row.locator('a.source').getAttribute('href'), `/dashboard/payments/${intent.referenceNumber}`);
      assert.ok(await row.locator('td.net').isVisible());
      // The payment split with it, its share named on the card.
      const payment = page.locator('#seller-payments tbody tr').first();
      assert.equal(await payment.getAttribute('id'), `payment-${intent.referenceNumber}`);
      assert.ok(await payment.locator('td.share').isVisible());
      assert.ok((await overflowOf(page)) <= 0, 'the seller page with its activity fits the phone');
      await checkAccessibility(page, 'seller activity ar 390×844');
      await shot(page, 'seller-activity-ar-phone');

      await page.getByLabel('المبلغ (أوقية)').fill('25');
      await page.getByRole('button', { name: 'مراجعة التحويل' }).click();
      await page.locator('#review-total').waitFor();
      assert.equal(await page.locator('#review-phone').textContent(), '+22236000077');
      assert.ok((await overflowOf(page)) <= 0, 'the review fits the phone');
      await checkAccessibility(page, 'seller payout review ar 390×844');
      await shot(page, 'seller-payout-review-ar-phone');
      await page.getByRole('button', { name: 'تأكيد' }).click();
      await page.waitForURL(/\/dashboard\/payouts\/PO-[0-9]+\?notice=done$/);
      const made = await t.runtime.db
        .selectFrom('payouts')
        .select(['amount', 'destination_phone'])
        .where('seller_id', '=', seller.id)
        .execute();
      assert.deepEqual(made, [{ amount: 2_500, destination_phone: '+22236000077' }]);

      await page.goto(`${t.baseUrl}/dashboard/sellers/${seller.id}`);
      const payout = page.locator('#seller-payouts tbody tr');
      assert.equal(await payout.count(), 1);
      const status = (
        await t.runtime.db
          .selectFrom('payouts')
          .select('status')
          .where('seller_id', '=', seller.id)
          .executeTakeFirstOrThrow()
      ).status;
      assert.equal(await payout.getAttribute('data-status'), status);
      assert.ok(await payout.locator('.badge').isVisible(), 'the payout says its status');
      assert.ok((await overflowOf(page)) <= 0, 'the seller page with its payout fits the phone');
      await shot(page, 'seller-paid-ar-phone');
    } finally {
      await context.close();
    }
  });
});
