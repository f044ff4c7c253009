import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { dictionaries } from '../../src/modules/dashboard/i18n.js';
import { checkAccessibility, launchChromium, skipWithoutChromium } from '../support/browser.js';
import { startTestApp, type TestApp } from '../support/harness.js';
import { createUser, PASSWORD } from '../dashboard/support.js';
import { DASHBOARD_APP_CONFIG, SIZES, signInAs } from './dashboard-seed.js';

const ar = dictionaries.ar;

/** How far the page reaches past the screen's edge (right to left: its left one). */
const overflowOf = (page: Page) =>
  page.evaluate(() => {
    const root = (
      globalThis as unknown as { document: { documentElement: { scrollWidth: number; clientWidth: number } } }
    ).document.documentElement;
    return root.scrollWidth - root.clientWidth;
  });

async function checkArabicPhone(page: Page, label: string) {
  assert.equal(await page.locator('html').getAttribute('lang'), 'ar', label);
  assert.equal(await page.locator('html').getAttribute('dir'), 'rtl', label);
  const overflow = await overflowOf(page);
  assert.ok(overflow <= 0, `${label}: ${overflow}px wider than the screen`);
  await checkAccessibility(page, `${label} ar 390×844`);
}

/**
 * Issue 53 "Proof": an owner invites a support member on a phone in Arabic, the member opens the
 * link, chooses a password and lands on a dashboard limited to the support role; every page
 * axe-core clean, right to left, nothing wider than the screen.
 */
describe.skipIf(skipWithoutChromium)('a team in a real browser: invite, accept, a support member', () => {
  let t: TestApp;
  let browser: Browser;
  let owner: { email: string; password: string };
  beforeAll(async () => {
    t = await startTestApp({ config: DASHBOARD_APP_CONFIG });
    const business = await t.createBusiness({ name: 'بقالة الميناء', approveLive: false });
    owner = await createUser(t, business.id, 'owner');
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  test('invite → accept → the support member sees what the role allows, at 390×844 in Arabic', async () => {
    const ownerContext = await browser.newContext({ viewport: SIZES.phone, locale: 'ar' });
    const ownerPage = await ownerContext.newPage();
    await signInAs(ownerPage, t.baseUrl, owner, 'ar');
    await ownerPage.goto(`${t.baseUrl}/dashboard/team`);
    await checkArabicPhone(ownerPage, 'team');
    const email = `support-${Date.now()}@example.com`;
    await ownerPage.getByLabel(ar.email, { exact: true }).fill(email);
    await ownerPage.getByLabel(ar.role, { exact: true }).selectOption('support');
    await ownerPage.getByRole('button', { name: ar.invite, exact: true }).click();
    await ownerPage.locator('#invitation-link').waitFor();
    const link = await ownerPage.locator('#invitation-link').inputValue();
    assert.match(link, /\/dashboard\/invitations\/[A-Za-z0-9_-]{43}$/);
    assert.ok(await ownerPage.locator('#invitation-link-copy').isVisible(), 'the script shows Copy');
    await checkArabicPhone(ownerPage, 'invitation created');
    await ownerContext.close();

    const memberContext = await browser.newContext({ viewport: SIZES.phone, locale: 'ar' });
    const page = await memberContext.newPage();
    await page.goto(`${link}?lang=ar`);
    await checkArabicPhone(page, 'invitation');
    await page.getByLabel(ar.password, { exact: true }).fill(PASSWORD);
    await page.getByLabel(ar.passwordAgain, { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: ar.join, exact: true }).click();
    await page.waitForURL(`${t.baseUrl}/dashboard`);
    await checkArabicPhone(page, 'home of a support member');
    const menu = await page
      .locator('nav.main a')
      .evaluateAll((links) =>
        links.map((link) => (link as unknown as { getAttribute(name: string): string | null }).getAttribute('href')),
      );
    assert.ok(menu.includes('/dashboard/payments') && menu.includes('/dashboard/orders'), menu.join());
    for (const hidden of [
      '/dashboard/balance',
      '/dashboard/payouts',
      '/dashboard/team',
      '/dashboard/developers/keys',
    ]) {
      assert.ok(!menu.includes(hidden), `${hidden} is not in a support member's menu`);
    }
    assert.equal(await page.locator('#balance').count(), 0, 'no balance on the home page');
    await page.goto(`${t.baseUrl}/dashboard/orders`);
    await checkArabicPhone(page, 'orders');
    const refused = await page.goto(`${t.baseUrl}/dashboard/payouts/new`);
    assert.equal(refused?.status(), 403);
    assert.equal((await page.locator('#message h1').textContent())?.trim(), ar.notAllowed);
    await checkArabicPhone(page, 'payout refused');
    await memberContext.close();
  });
});
