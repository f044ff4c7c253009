import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, test } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createUser } from '../dashboard/support.js';
import { freshPhone, simulate } from '../orders/support.js';
import { launchChromium, skipWithoutChromium } from '../support/browser.js';
import { expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { DASHBOARD_APP_CONFIG, signInAs } from './dashboard-seed.js';

const ARTIFACTS = path.resolve('test-artifacts', 'dashboard');
const VIEWPORTS = { desktop: { width: 1280, height: 900 }, phone: { width: 390, height: 844 } } as const;
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=',
  'base64',
);

describe.skipIf(skipWithoutChromium)(
  'the dashboard orders, products, webhook endpoint and settings pages in a real browser',
  () => {
    let t: TestApp;
    let browser: Browser;
    let business: TestBusiness;
    let owner: { email: string; password: string };
    beforeAll(async () => {
      mkdirSync(ARTIFACTS, { recursive: true });
      t = await startTestApp({
        config: DASHBOARD_APP_CONFIG,
      });
      business = await t.createBusiness({ name: 'Épicerie du Port', approveLive: false });
      owner = await createUser(t, business.id, 'owner');
      browser = await launchChromium();
    });
    afterAll(async () => {
      await browser?.close();
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

    let productPath = '';
    let endpointId = '';
    let orderRef = '';

    test('an owner creates a product, uploads its image and sees it on the page', async () => {
      const context = await newContext();
      const page = await signIn(context, owner);
      await page.getByRole('link', { name: 'Products', exact: true }).click();
      await page.getByRole('link', { name: 'New product' }).click();
      await page.getByLabel('Name', { exact: true }).fill('Théière en laiton');
      await page.getByLabel('Price (MRU)').fill('450');
      await page.getByLabel('Stock', { exact: true }).fill('12');
      await page.getByLabel('Type 1').fill('COLOR');
      await page.getByLabel('Label 1').fill('Or');
      await page.getByLabel('Price adjustment (MRU) 1').fill('25');
      await shot(page, 'product-new-desktop');
      await page.getByRole('button', { name: 'Create' }).click();
      await page.waitForURL(/\/dashboard\/products\/prod_[A-Za-z0-9]+\?notice=done$/);
      productPath = new URL(page.url()).pathname;
      assert.equal(await page.locator('#images img').count(), 0);
      await page.getByLabel('Image (JPEG, PNG or WebP, at most 5 MB)').setInputFiles({
        name: 'teapot.png',
        mimeType: 'image/png',
        buffer: PNG,
      });
      // Before the upload, the page's script previews the chosen file (a blob: URL the CSP allows).
      const preview = page.locator('#image-preview img');
      await preview.waitFor({ state: 'visible' });
      assert.equal(await preview.getAttribute('alt'), 'teapot.png');
      assert.match(String(await preview.getAttribute('src')), /^blob:/);
      await page.waitForFunction("document.querySelector('#image-preview img').naturalWidth === 1");
      await shot(page, 'product-image-preview-desktop');
      await page.getByRole('button', { name: 'Upload' }).click();
      await page.waitForURL(/notice=done$/);
      const image = page.locator('#images img');
      assert.equal(await image.count(), 1);
      // The browser loaded the stored file: a broken image has no natural width.
      // A string: the test is compiled without the DOM's types.
      const width = await page.evaluate<number>("document.querySelector('#images img').naturalWidth");
      assert.equal(width, 1);
      assert.equal(await page.getByLabel('Label 1').inputValue(), 'Or');
      await shot(page, 'product-desktop');
      const api = await t.request('GET', `/api/v1/dev/store/products/${productPath.split('/').pop()}`, {
        key: business.keys.secretTest,
      });
      expectStatus(api, 200);
      assert.equal(api.body.data.images.length, 1);
      await context.close();
    });

    test('an owner edits a webhook endpoint: events, disable, enable, rotate (secret shown once)', async () => {
      const created = await t.request('POST', '/api/v1/dev/webhooks/endpoints', {
        key: business.keys.secretTest,
        idempotencyKey: true,
        body: { url: 'http://127.0.0.1:9/hook', events: ['payment.created'] },
      });
      expectStatus(created, 201);
      endpointId = created.body.data.id;
      const context = await newContext();
      const page = await signIn(context, owner);
      await page.goto(`${t.baseUrl}/dashboard/developers/webhooks`);
      await page.getByRole('link', { name: 'http://127.0.0.1:9/hook' }).click();
      await page.getByRole('checkbox', { name: 'payment.created' }).uncheck();
      await page.getByRole('checkbox', { name: 'payment.confirmed' }).check();
      await page.getByRole('button', { name: 'Save' }).click();
      await page.waitForURL(/notice=done$/);
      assert.equal(await page.locator('#endpoint-events').textContent(), 'payment.confirmed');
      await page.getByRole('button', { name: 'Disable' }).click();
      await page.waitForURL(/notice=done$/);
      assert.equal(await page.locator('#endpoint-status').textContent(), 'Disabled');
      await shot(page, 'endpoint-disabled-desktop');
      await page.getByRole('button', { name: 'Enable' }).click();
      await page.waitForURL(/notice=done$/);
      assert.equal(await page.locator('#endpoint-status').textContent(), 'Active');
      await page.getByRole('button', { name: 'Rotate the secret' }).click();
      const secret = (await page.locator('#endpoint-secret').textContent()) ?? '';
      const stored = await t.runtime.db
        .selectFrom('webhook_endpoints')
        .select(['secret', 'events', 'active'])
        .where('id', '=', endpointId)
        .executeTakeFirstOrThrow();
      assert.equal(secret, stored.secret);
      assert.deepEqual(stored.events, ['payment.confirmed']);
      assert.equal(stored.active, true);
      await shot(page, 'endpoint-rotated-desktop');
      await page.goto(`${t.baseUrl}/dashboard/developers/webhooks/${endpointId}`);
      assert.ok(!(await page.content()).includes(secret), 'the secret is not shown again');
      await page.getByRole('button', { name: 'Send a test ping' }).click();
      await page.waitForURL(/\/dashboard\/developers\/deliveries\/dlv_/);
      await context.close();
    });

    test('an owner walks an order through its workflow, refunds part of it, and cancels another with a reason', async () => {
      assert.ok(productPath, 'the product test ran');
      const productId = productPath.split('/').pop()!;
      const placed = await simulate(t, business.keys.secretTest, [{ productId, quantity: 2 }], freshPhone());
      expectStatus(placed, 201);
      orderRef = placed.body.data.referenceNumber;
      const context = await newContext();
      const page = await signIn(context, owner);
      await page.getByRole('link', { name: 'Orders', exact: true }).click();
      await page.getByRole('link', { name: orderRef }).click();
      assert.equal(await page.locator('#order-status').getAttribute('data-status'), 'NEW');
      await shot(page, 'order-new-desktop');
      for (const [button, status] of [
        ['Accept', 'PREPARING'],
        ['Mark ready', 'READY'],
        ['Mark picked up', 'PICKED_UP'],
        ['Mark delivered', 'DELIVERED'],
      ] as const) {
        await page.getByRole('button', { name: button, exact: true }).click();
        await page.waitForURL(/notice=done$/);
        assert.equal(await page.locator('#order-status').getAttribute('data-status'), status);
        assert.equal(await page.getByRole('button', { name: button, exact: true }).count(), 0, `${button} is gone`);
      }
      await page.getByLabel('Amount to refund (MRU)').fill('4.50');
      await page.getByLabel('Reason', { exact: true }).fill('late delivery');
      await page.getByRole('button', { name: 'Refund' }).click();
      await page.waitForURL(/notice=done$/);
      assert.equal(await page.locator('#order-status').getAttribute('data-status'), 'REFUNDED');
      assert.match((await page.locator('#order-refunds').textContent()) ?? '', /late delivery/);
      await shot(page, 'order-refunded-desktop');

      const second = await simulate(t, business.keys.secretTest, [{ productId, quantity: 1 }], freshPhone());
      expectStatus(second, 201);
      await page.goto(`${t.baseUrl}/dashboard/orders/${second.body.data.referenceNumber}`);
      await page.getByLabel('Reason for cancelling').fill('closed today');
      await page.getByRole('button', { name: 'Cancel the order' }).click();
      await page.waitForURL(/notice=done$/);
      assert.equal(await page.locator('#order-status').getAttribute('data-status'), 'CANCELLED');
      assert.equal(await page.locator('#cancellation-reason').textContent(), 'closed today');
      await context.close();
    });

    test('screenshots of the new pages, desktop and phone; nothing overflows a 390 px screen', async () => {
      assert.ok(productPath && endpointId && orderRef, 'the tests above ran');
      const today = new Date().toISOString().slice(0, 10);
      const pages: [string, string][] = [
        ['products', '/dashboard/products'],
        ['product-new', '/dashboard/products/new'],
        ['product', productPath],
        ['endpoint', `/dashboard/developers/webhooks/${endpointId}`],
        ['deliveries-dated', `/dashboard/developers/deliveries?from=${today}&to=${today}`],
        ['settings', '/dashboard/settings'],
        ['orders', '/dashboard/orders'],
        ['order', `/dashboard/orders/${orderRef}`],
      ];
      for (const viewport of ['desktop', 'phone'] as const) {
        const context = await newContext(viewport);
        const page = await signIn(context, owner);
        for (const [name, url] of pages) {
          await page.goto(`${t.baseUrl}${url}`);
          await shot(page, `${name}-${viewport}`);
          if (viewport === 'phone') {
            const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
            assert.ok(overflow <= 0, `${name} is ${overflow} px wider than the phone`);
          }
        }
        if (viewport === 'desktop') {
          // The import's dry-run report, drawn in answer to the form.
          await page.goto(`${t.baseUrl}/dashboard/products`);
          await page.getByLabel('CSV file').setInputFiles({
            name: 'products.csv',
            mimeType: 'text/csv',
            buffer: Buffer.from(
              'externalId,name,price,description,quantity,status,categoryId,costBasis\nT-1,Tajine,900,,3,ACTIVE,,\nT-2,,100,,,,,\n',
            ),
          });
          await page.getByRole('button', { name: 'Import CSV' }).click();
          await page.locator('#import-summary').waitFor();
          assert.equal(await page.locator('#import-errors tbody tr').count(), 1);
          await shot(page, 'import-report-desktop');
        }
        await context.close();
      }
    });
  },
);
