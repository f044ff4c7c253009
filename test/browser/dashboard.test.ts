import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, test } from 'vitest';
import pino from 'pino';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchChromium, skipWithoutChromium } from '../support/browser.js';
import { startWorker, type Worker } from '../../src/worker/worker.js';
import { createUser } from '../dashboard/support.js';
import { act, createIntent } from '../intents/support.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { expectStatus, startTestApp, waitUntil, type TestApp, type TestBusiness } from '../support/harness.js';
import { DASHBOARD_APP_CONFIG, signInAs } from './dashboard-seed.js';

const skip = skipWithoutChromium;
const ARTIFACTS = path.resolve('test-artifacts', 'dashboard');
const VIEWPORTS = { desktop: { width: 1280, height: 900 }, phone: { width: 390, height: 844 } } as const;

describe.skipIf(skip)('the merchant dashboard in a real browser', () => {
  let t: TestApp;
  let browser: Browser;
  let business: TestBusiness;
  let worker: Worker;
  let receiver: Receiver;
  let owner: { email: string; password: string };
  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    t = await startTestApp({
      config: DASHBOARD_APP_CONFIG,
    });
    worker = startWorker(t.runtime, pino({ level: 'silent' }), [], 60_000);
    receiver = await startReceiver();
    business = await t.createBusiness({ name: 'Épicerie du Port', approveLive: false });
    owner = await createUser(t, business.id, 'owner');
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await worker?.stop();
    await receiver?.close();
    await t?.close();
  });

  async function newContext(viewport: keyof typeof VIEWPORTS = 'desktop'): Promise<BrowserContext> {
    return browser.newContext({ viewport: VIEWPORTS[viewport], locale: 'en-US' });
  }

  async function signIn(context: BrowserContext, user: { email: string; password: string }): Promise<Page> {
    const page = await context.newPage();
    await signInAs(page, t.baseUrl, user, 'en');
    return page;
  }

  const shot = (page: Page, name: string) =>
    page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });

  async function paidIntent(amount: number, label: string): Promise<string> {
    const intent = await createIntent(t, business.keys.secretTest, { amount, label, metadata: { order: 'A-17' } });
    const paid = await act(t, business.keys.secretTest, intent.referenceNumber, 'simulate', {});
    expectStatus(paid, 200);
    return intent.referenceNumber;
  }

  test('a wrong password is refused with one generic message; the right one opens the home page', async () => {
    const context = await newContext();
    const page = await context.newPage();
    await page.goto(`${t.baseUrl}/dashboard/login`);
    await shot(page, 'login-desktop');
    await page.getByLabel('Email').fill(owner.email);
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').waitFor();
    assert.equal(await page.getByRole('alert').textContent(), 'Wrong email or password.');
    assert.equal(await page.getByLabel('Email').inputValue(), owner.email);
    await page.getByLabel('Password').fill(owner.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${t.baseUrl}/dashboard`);
    assert.match((await page.locator('header .brand').textContent()) ?? '', /Épicerie du Port/);
    assert.match((await page.locator('.testbar').textContent())?.trim() ?? '', /^TEST MODE/);
    const cookies = await context.cookies();
    const session = cookies.find((cookie) => cookie.name === 'dashboard_session');
    assert.ok(session?.httpOnly);
    assert.equal(session?.sameSite, 'Lax');
    await context.close();
  });

  test('an owner creates a one-time payment from the form and sees its code and QR code', async () => {
    const context = await newContext();
    const page = await signIn(context, owner);
    await page.getByRole('link', { name: 'Payments', exact: true }).click();
    await page.getByRole('link', { name: 'New one-time payment' }).click();
    await page.getByLabel('Amount (MRU)').fill('125.50');
    await page.getByLabel('Label').fill('Panier du marché');
    await page.getByLabel('Metadata', { exact: true }).fill('order=B-42');
    await shot(page, 'payment-new-desktop');
    await page.getByRole('button', { name: 'Create' }).click();
    await page.waitForURL(/\/dashboard\/payments\/PI-\d+\?notice=done$/);
    const reference = (await page.locator('#reference').textContent())!;
    assert.match(reference, /^PI-\d{16}$/);
    assert.equal(await page.locator('#status').getAttribute('data-status'), 'PENDING');
    assert.equal(await page.locator('#amount').textContent(), '125.50\u00a0MRU');
    assert.match((await page.locator('#payment-code').textContent()) ?? '', /^\d{6}$/);
    assert.ok(await page.locator('#qr svg').isVisible());
    await shot(page, 'payment-pending-desktop');
    const api = await t.request('GET', `/api/v1/dev/intents/${reference}`, { key: business.keys.secretTest });
    expectStatus(api, 200);
    assert.equal(api.body.data.amount, 12_550);
    assert.deepEqual(api.body.data.metadata, { order: 'B-42' });
    assert.equal(api.body.data.code, await page.locator('#payment-code').textContent());
    await context.close();
  });

  test('an owner refunds part of a payment; the page shows the refund and what is left', async () => {
    const reference = await paidIntent(20_000, 'Commande 17');
    const context = await newContext();
    const page = await signIn(context, owner);
    await page.goto(`${t.baseUrl}/dashboard/payments/${reference}`);
    assert.equal(await page.locator('#refundable').textContent(), '200.00\u00a0MRU');
    await page.getByLabel('Amount to refund (MRU)').fill('50');
    await page.getByLabel('Reason').fill('Article manquant');
    await page.getByRole('button', { name: 'Refund' }).click();
    await page.waitForURL(/notice=done/);
    assert.ok(await page.getByText('Done.').isVisible());
    // decisions: any refund, partial or not, moves the intent to REFUNDED; the rest stays refundable.
    assert.equal(await page.locator('#status').getAttribute('data-status'), 'REFUNDED');
    assert.equal(await page.locator('#refunded').textContent(), '50.00\u00a0MRU');
    assert.equal(await page.locator('#refundable').textContent(), '150.00\u00a0MRU');
    assert.match((await page.locator('#refunds').textContent()) ?? '', /Article manquant/);
    // Issue 54 item 15b: the event in words, its code as the line's title.
    assert.match((await page.locator('#timeline').textContent()) ?? '', /Refund made/);
    assert.equal(
      await page.locator('#timeline [data-event="payment.refunded"]').getAttribute('title'),
      'payment.refunded',
    );
    await shot(page, 'payment-refunded-desktop');
    const api = await t.request('GET', `/api/v1/dev/intents/${reference}`, { key: business.keys.secretTest });
    assert.equal(api.body.data.totalAmountRefunded, 5_000);
    await context.close();
  });

  test('a new API key is shown once, works, and is listed by its hint only', async () => {
    const context = await newContext();
    const page = await signIn(context, owner);
    await page.goto(`${t.baseUrl}/dashboard/developers/keys`);
    await page.getByLabel('Name', { exact: true }).fill('Till 1');
    await page.getByLabel('webhooks:write').uncheck();
    await page.getByLabel('IP allowlist').fill('127.0.0.1, ::1');
    await page.getByRole('button', { name: 'Create a key' }).click();
    const key = (await page.locator('#new-key').textContent())!;
    assert.match(key, /^sk_test_/);
    assert.ok(await page.getByText('it is shown once').isVisible());
    await shot(page, 'key-created-desktop');
    const used = await t.request('GET', '/api/v1/dev/intents', { key });
    expectStatus(used, 200);
    await page.getByRole('link', { name: 'Back to API keys' }).click();
    assert.ok(!(await page.content()).includes(key), 'the key is not shown a second time');
    await page.reload();
    assert.ok(!(await page.content()).includes(key));
    const row = page.locator('#keys tbody tr').first();
    assert.match((await row.textContent()) ?? '', /127\.0\.0\.1, ::1/);
    assert.doesNotMatch((await row.textContent()) ?? '', /webhooks:write/);
    await waitUntil(async () => {
      await page.reload();
      const lastUsed = page.locator('#keys tbody tr').first().locator('[data-last-used]');
      return !(await lastUsed.textContent())?.includes('Never');
    }, 'last used time of the new key');
    await shot(page, 'keys-desktop');
    await context.close();
  });

  test('Retry on a dead delivery sends it again and the new attempt shows', async () => {
    let failing = true;
    receiver.answer = () => (failing ? { status: 500, body: 'boom' } : { status: 200, body: 'ok' });
    const endpoint = await t.request('POST', '/api/v1/dev/webhooks/endpoints', {
      key: business.keys.secretTest,
      idempotencyKey: true,
      body: { url: receiver.url, events: ['payment.created'] },
    });
    expectStatus(endpoint, 201);
    const intent = await createIntent(t, business.keys.secretTest, { amount: 700 });
    const delivery = await waitUntil(
      () =>
        t.runtime.db
          .selectFrom('webhook_deliveries')
          .select(['id', 'attempt_count'])
          .where('endpoint_id', '=', endpoint.body.data.id)
          .where('attempt_count', '>=', 1)
          .where('locked_until', 'is', null)
          .where('last_status_code', '=', 500)
          .executeTakeFirst(),
      'the first failed attempt, its outcome stored',
    );
    // The schedule's last answer, without waiting three days for it.
    await t.runtime.db
      .updateTable('webhook_deliveries')
      .set({ status: 'DEAD', dead_reason: 'MAX_ATTEMPTS', attempt_count: 8, completed_at: new Date() })
      .where('id', '=', delivery.id)
      .execute();
    failing = false;

    const context = await newContext();
    const page = await signIn(context, owner);
    await page.goto(`${t.baseUrl}/dashboard/developers/deliveries?status=DEAD`);
    await shot(page, 'deliveries-desktop');
    await page.locator('#deliveries a').first().click();
    assert.equal(await page.locator('#delivery-status').getAttribute('data-status'), 'DEAD');
    assert.equal(await page.locator('#attempts .attempt').count(), 1);
    assert.equal((await page.locator('.attempt-status').first().textContent())?.trim(), '500');
    await shot(page, 'delivery-dead-desktop');
    await page.getByRole('button', { name: 'Retry' }).click();
    await page.waitForURL(/notice=done/);
    await waitUntil(async () => {
      await page.reload();
      return (await page.locator('#delivery-status').getAttribute('data-status')) === 'SUCCEEDED';
    }, 'the retried delivery to succeed');
    assert.equal(await page.locator('#attempts .attempt').count(), 2);
    assert.equal((await page.locator('.attempt-status').nth(1).textContent())?.trim(), '200');
    assert.equal(await page.getByRole('button', { name: 'Retry' }).count(), 0);
    await shot(page, 'delivery-retried-desktop');
    await page.goto(`${t.baseUrl}/dashboard/payments/${intent.referenceNumber}`);
    assert.ok((await page.locator('#timeline [data-status="SUCCEEDED"]').count()) > 0);
    await context.close();
  });

  test('a viewer sees a payment but has no refund button, and a forced refund is refused', async () => {
    const reference = await paidIntent(3_000, 'Viewer check');
    const viewer = await createUser(t, business.id, 'viewer');
    const context = await newContext();
    const page = await signIn(context, viewer);
    await page.goto(`${t.baseUrl}/dashboard/payments/${reference}`);
    assert.ok(await page.getByText('changes are for other roles of your team').isVisible());
    assert.equal(await page.getByRole('button', { name: 'Refund' }).count(), 0);
    await shot(page, 'payment-viewer-desktop');
    // The owner's form, submitted from the viewer's browser with the viewer's own token.
    const csrf = await page.locator('input[name=_csrf]').first().inputValue();
    const response = await page.request.post(`${t.baseUrl}/dashboard/payments/${reference}/refund`, {
      form: { _csrf: csrf, _idem: 'viewerrefundattempt01', amount: '10' },
      maxRedirects: 0,
    });
    assert.equal(response.status(), 403);
    assert.match(await response.text(), /Your role in this business does not allow this/);
    const api = await t.request('GET', `/api/v1/dev/intents/${reference}`, { key: business.keys.secretTest });
    assert.equal(api.body.data.totalAmountRefunded, 0);
    await context.close();
  });

  test('a form whose CSRF token was removed is refused and changes nothing', async () => {
    const reference = await paidIntent(4_000, 'CSRF check');
    const context = await newContext();
    const page = await signIn(context, owner);
    await page.goto(`${t.baseUrl}/dashboard/payments/${reference}`);
    await page.locator('form[action$="/refund"] input[name=_csrf]').evaluate((input) => input.remove());
    await page.getByLabel('Amount to refund (MRU)').fill('10');
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/refund')),
      page.getByRole('button', { name: 'Refund' }).click(),
    ]);
    assert.equal(response.status(), 403);
    await page.locator('#message').waitFor();
    assert.match((await page.locator('#message').textContent()) ?? '', /form expired/);
    const api = await t.request('GET', `/api/v1/dev/intents/${reference}`, { key: business.keys.secretTest });
    assert.equal(api.body.data.totalAmountRefunded, 0);
    await context.close();
  });

  test('an expired session sends the browser back to sign-in, then on to the page asked for', async () => {
    const context = await newContext();
    const page = await signIn(context, owner);
    const user = await t.runtime.db
      .selectFrom('dashboard_users')
      .select('id')
      .where('email', '=', owner.email)
      .executeTakeFirstOrThrow();
    await t.runtime.db
      .updateTable('dashboard_sessions')
      .set({ last_seen_at: new Date(Date.now() - 2 * 60 * 60_000) })
      .where('user_id', '=', user.id)
      .execute();
    await page.goto(`${t.baseUrl}/dashboard/developers/events`);
    await page.waitForURL(/\/dashboard\/login\?next=/);
    assert.ok(await page.getByText('Your session ended').isVisible());
    await page.getByLabel('Email').fill(owner.email);
    await page.getByLabel('Password').fill(owner.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${t.baseUrl}/dashboard/developers/events`);
    await context.close();
  });

  test('screenshots of every page, desktop and phone; nothing overflows a 390 px screen', async () => {
    const reference = await paidIntent(9_900, 'Capture');
    const pending = await createIntent(t, business.keys.secretTest, { amount: 1_500, label: 'En attente' });
    const pages: [string, string][] = [
      ['home', '/dashboard'],
      ['payments', '/dashboard/payments'],
      ['payment-new', '/dashboard/payments/new'],
      ['payment-paid', `/dashboard/payments/${reference}`],
      ['payment-pending', `/dashboard/payments/${pending.referenceNumber}`],
      ['keys', '/dashboard/developers/keys'],
      ['webhooks', '/dashboard/developers/webhooks'],
      ['deliveries', '/dashboard/developers/deliveries'],
      ['events', '/dashboard/developers/events'],
    ];
    for (const viewport of ['desktop', 'phone'] as const) {
      const context = await newContext(viewport);
      const page = await signIn(context, owner);
      for (const [name, url] of pages) {
        await page.goto(`${t.baseUrl}${url}`);
        await shot(page, `${name}-${viewport}`);
        if (viewport === 'phone') {
          // A string: the test is compiled without the DOM's types.
          const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
          assert.ok(overflow <= 0, `${name} is ${overflow} px wider than the phone`);
        }
      }
      await context.close();
    }
    const context = await newContext('phone');
    const page = await context.newPage();
    await page.goto(`${t.baseUrl}/dashboard/login?lang=fr`);
    assert.ok(await page.getByLabel('Mot de passe').isVisible());
    await shot(page, 'login-phone-fr');
    await context.close();
  });
});
