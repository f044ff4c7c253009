import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, test } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { verifyWebhook, type WebhookEvent } from '@commerce-developer-api/sdk/webhooks';
import { checkAccessibility, launchChromium, skipWithoutChromium } from '../support/browser.js';
import { expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { getIntent } from '../intents/support.js';
import { requestPayment } from '../walletapp/support.js';
import { webhookHelpers } from '../webhooks/support.js';
import { startWorker, type Worker } from '../../src/worker/worker.js';

const ARTIFACTS = path.resolve('test-artifacts', 'browser');

/**
 * Issue 51's proof: the wallet app on a phone (Chromium, 390×844): sign in with a local number in
 * Arabic, a request made through the API arriving while the page is open (the event stream, no
 * reload), approved with the PIN; the intent PAID, and the merchant's own server (a real local
 * receiver registered through the API) verifying `payment_request.approved` and `payment.confirmed`
 * with the SDK; axe-core finds nothing serious or critical on the wallet app's pages.
 */
describe.skipIf(skipWithoutChromium)('the wallet app in a real browser (issue 51)', () => {
  let t: TestApp;
  let browser: Browser;
  let business: TestBusiness;
  let hooks: ReturnType<typeof webhookHelpers>;
  let worker: Worker;
  const phone = '+22220000041';
  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000', WEBHOOK_ALLOW_PRIVATE: 'true' } });
    business = await t.createBusiness({ name: 'Épicerie du Port' });
    expectStatus(await t.admin('POST', '/wallets', { phone, pin: '2468', environment: 'test', balance: 500_000 }), 201);
    browser = await launchChromium();
    hooks = webhookHelpers(t);
    // The delivery engine that carries events to the merchant (no periodic tasks: none is needed here).
    worker = startWorker(t.runtime, pino({ level: 'silent' }), [], 60_000);
  });
  afterAll(async () => {
    await browser?.close();
    await worker?.stop();
    await hooks?.closeAll();
    await t?.close();
  });

  async function openPage(url: string, locale: string): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, locale });
    const page = await context.newPage();
    await page.goto(`${t.baseUrl}${url}`);
    return page;
  }

  test('signs in in Arabic, sees a new request arrive without reloading, approves it with the PIN; the merchant hears it', async () => {
    // The merchant's server, registered as the business's webhook endpoint through the API.
    const { receiver, endpoint } = await hooks.receiverWithEndpoint(business.keys.secretTest, [
      'payment_request.approved',
      'payment.confirmed',
    ]);
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
    // It ticks every second; a loaded machine may delay a tick, so give it a few.
    let moved = false;
    for (const deadline = Date.now() + 5000; !moved && Date.now() < deadline;) {
      await page.waitForTimeout(250);
      moved = (await countdown.textContent()) !== first;
    }
    assert.ok(moved, 'the countdown moves');
    await checkAccessibility(page, 'wallet home with a request, ar 390×844');
    await page.screenshot({ path: path.join(ARTIFACTS, 'wallet-app-ar.png'), fullPage: true });
    await page.fill(`#pin-${request.id}`, '2468');
    await page.click(`#request-${request.id} form:first-of-type button[type=submit]`);
    await page.waitForSelector('#notice');
    assert.match((await page.locator('#notice').textContent()) ?? '', /تم الدفع/);
    assert.equal((await getIntent(t, business.keys.secretTest, request.intent)).status, 'PAID');
    assert.equal(await page.locator(`#request-${request.id}`).count(), 0, 'an answered request leaves the list');
    await checkAccessibility(page, 'wallet home after an approval, ar 390×844');
    await page.context().close();

    // Each delivery verified as the merchant's server does it: the SDK, the raw body, the endpoint's secret.
    const delivered = await receiver.waitFor(2);
    const events: WebhookEvent[] = [];
    for (const received of delivered)
      events.push(await verifyWebhook(received.body, received.headers, endpoint.secret));
    const byName = new Map(events.map((event) => [event.event, event]));
    assert.deepEqual([...byName.keys()].sort(), ['payment.confirmed', 'payment_request.approved']);
    const approved = byName.get('payment_request.approved') as WebhookEvent & { data: Record<string, unknown> };
    assert.deepEqual(
      [approved.data.id, approved.data.intent, approved.data.status],
      [request.id, request.intent, 'APPROVED'],
    );
    const confirmed = byName.get('payment.confirmed') as WebhookEvent & { data: Record<string, unknown> };
    assert.equal(confirmed.data.reference_number, request.intent);
    await assert.rejects(
      verifyWebhook(delivered[0]!.body, delivered[0]!.headers, 'whsec_not_the_secret'),
      'a wrong secret does not verify',
    );
  });
});
