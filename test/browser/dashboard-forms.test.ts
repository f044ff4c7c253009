import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import type { Browser, Locator, Page } from 'playwright-core';
import { formatAmount, type Lang } from '../../src/lib/i18n.js';
import { dictionaries } from '../../src/modules/dashboard/i18n.js';
import { createUser } from '../dashboard/support.js';
import { act, createIntent } from '../intents/support.js';
import { freshPhone, simulate } from '../orders/support.js';
import { createProduct } from '../products/support.js';
import { checkAccessibility, launchChromium, skipWithoutChromium } from '../support/browser.js';
import { expectStatus, startTestApp, type TestApp } from '../support/harness.js';
import { DASHBOARD_APP_CONFIG, signInAs, SIZES } from './dashboard-seed.js';

const LOG = '/dashboard/developers/deliveries';
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=',
  'base64',
);

/** What one language's run works on: its own business, since it changes a password and asks for live mode. */
interface FormsSeed {
  owner: { email: string; password: string };
  paymentPath: string;
  orderPath: string;
  /** The product the order modification picks, and the one the products step edits then deletes. */
  picked: { id: string; price: number };
  lamp: { id: string };
  oldStock: { id: string; name: string };
  failingDelivery: string;
}

async function seedForms(t: TestApp): Promise<FormsSeed> {
  const business = await t.createBusiness({ name: 'Épicerie du Port', approveLive: false });
  const key = business.keys.secretTest;
  const owner = await createUser(t, business.id, 'owner');

  // A webhook endpoint first, so that the payments below leave deliveries in its log.
  const endpoint = await t.request('POST', '/api/v1/dev/webhooks/endpoints', {
    key,
    idempotencyKey: true,
    body: { url: 'http://127.0.0.1:9/hook', events: ['payment.created', 'payment.confirmed'] },
  });
  expectStatus(endpoint, 201);

  // 125.00 paid, 50.00 of it refunded: the partial-refund note and the gross/fee/net card.
  const paid = await createIntent(t, key, { amount: 12_500, label: 'Thé vert ×3' });
  expectStatus(await act(t, key, paid.referenceNumber, 'simulate', {}), 200);
  expectStatus(await act(t, key, paid.referenceNumber, 'refund', { amount: 5_000, reason: 'un paquet abîmé' }), 200);

  const tea = await createProduct(t, key, { name: 'Thé', price: 500, status: 'ACTIVE', quantity: 100 });
  const dates = await createProduct(t, key, { name: 'Dattes', price: 1_000, status: 'ACTIVE', quantity: 100 });
  const lamp = await createProduct(t, key, { name: 'Lampe', price: 8_000, status: 'ACTIVE' });
  const oldStock = await createProduct(t, key, { name: 'Vieux stock', price: 1_000, status: 'ACTIVE' });
  const order = await simulate(t, key, [{ productId: tea.id, quantity: 1 }], freshPhone());
  expectStatus(order, 201);

  // No worker runs in tests: the deliveries stay pending; one is made to have failed twice with a
  // 500, its next attempt an hour away (FAILED).
  const [delivery] = await t.runtime.db
    .selectFrom('webhook_deliveries')
    .select('id')
    .where('endpoint_id', '=', endpoint.body.data.id as string)
    .execute();
  assert.ok(delivery, 'the payments made a delivery');
  await t.runtime.db
    .updateTable('webhook_deliveries')
    .set({
      status: 'FAILED',
      attempt_count: 2,
      last_status_code: 500,
      next_attempt_at: new Date(Date.now() + 3_600_000),
    })
    .where('id', '=', delivery.id)
    .execute();

  return {
    owner,
    paymentPath: `/dashboard/payments/${paid.referenceNumber}`,
    orderPath: `/dashboard/orders/${order.body.data.referenceNumber}`,
    picked: { id: dates.id, price: 1_000 },
    lamp: { id: lamp.id },
    oldStock: { id: oldStock.id, name: 'Vieux stock' },
    failingDelivery: delivery.id,
  };
}

/** The runs: Arabic on a phone (every step), French on a laptop (the same steps, the other direction). */
const RUNS = [
  { lang: 'ar', size: 'phone' },
  { lang: 'fr', size: 'laptop' },
] as const satisfies readonly { lang: Lang; size: keyof typeof SIZES }[];

/**
 * Issue 38, held by a browser test: the dashboard's forms and figures used as a merchant would, in
 * Chromium, in Arabic on a phone and in French on a laptop. Each state reached is checked with axe
 * (no serious or critical finding) and for nothing wider than the screen. The same behaviours are
 * tested over HTTP in test/dashboard/{forms,figures,deliveries,product-manage,live-access}.test.ts;
 * this file holds what only a browser shows: the error read out next to its field, the picker, the
 * collapsed values table, the checkbox that a delete needs, the red badge.
 */
describe.skipIf(skipWithoutChromium)(
  'dashboard forms and figures in a real browser, in Arabic and French (issue 38)',
  () => {
    let t: TestApp;
    let browser: Browser;

    beforeAll(async () => {
      t = await startTestApp({
        config: DASHBOARD_APP_CONFIG,
      });
      browser = await launchChromium();
    });
    afterAll(async () => {
      await browser?.close();
      await t?.close();
    });

    /** How far the page reaches past the screen's edge. */
    const overflowOf = (page: Page) =>
      page.evaluate(() => {
        const root = (globalThis as unknown as { document: { documentElement: Overflowing } }).document.documentElement;
        return root.scrollWidth - root.clientWidth;
      });

    /** Where an amount's minus and its first digit are drawn (x, in CSS pixels). */
    const minusBeforeDigits = (amount: Locator) =>
      amount.evaluate((element) => {
        const doc = element.ownerDocument;
        const walker = doc.createTreeWalker(element, 4);
        let node = walker.nextNode();
        while (node && !/\u2212/.test(node.textContent ?? '')) node = walker.nextNode();
        if (!node) throw new Error(`no minus in "${element.textContent}"`);
        const text = node.textContent!;
        const at = text.indexOf('\u2212');
        const digit = text.slice(at).search(/[0-9]/) + at;
        const box = (start: number) => {
          const range = doc.createRange();
          range.setStart(node!, start);
          range.setEnd(node!, start + 1);
          return range.getBoundingClientRect();
        };
        return { minusRight: box(at).right, digitLeft: box(digit).left };
      });

    /** The checks every state gets: accessible, and nothing cut off or scrolled sideways. */
    async function checkState(page: Page, label: string) {
      const overflow = await overflowOf(page);
      assert.ok(overflow <= 0, `${label}: ${overflow}px wider than the screen`);
      await checkAccessibility(page, label);
    }

    /** The text of the message an input points to by aria-describedby, when it is marked invalid. */
    async function errorOf(page: Page, input: Locator): Promise<string | undefined> {
      if ((await input.getAttribute('aria-invalid')) !== 'true') return undefined;
      const ids = (await input.getAttribute('aria-describedby'))?.split(' ') ?? [];
      for (const id of ids) {
        const message = page.locator(`[id="${id}"].field-error`);
        if ((await message.count()) > 0) {
          assert.ok(await message.isVisible(), `#${id} is shown`);
          return (await message.textContent())?.trim();
        }
      }
      return undefined;
    }

    for (const { lang, size } of RUNS) {
      test(`${lang} on a ${size}: one-time payment refusal, order modification, refunds and figures, products, settings, deliveries`, async () => {
        const seed = await seedForms(t);
        const d = dictionaries[lang];
        const mru = (centimes: number) => formatAmount(centimes, lang);
        const at = (step: string) => `${step}, ${lang}, ${size}`;
        const context = await browser.newContext({ viewport: SIZES[size], locale: 'en-US' });
        try {
          const page = await context.newPage();
          await signInAs(page, t.baseUrl, seed.owner, lang);
          assert.equal(await page.locator('html').getAttribute('dir'), lang === 'ar' ? 'rtl' : 'ltr');

          // 1. A one-time payment with a bad amount: refused on the amount, in the page's language, the label kept.
          const label = lang === 'ar' ? 'تبرع رمضان <خير>' : 'Don du Ramadan <bien>';
          await page.goto(`${t.baseUrl}/dashboard/payments/new`);
          await page.locator('#amount').fill('12,5x');
          await page.locator('#label').fill(label);
          await page.locator('#payment-form button[type="submit"]').click();
          await page.waitForURL(`${t.baseUrl}/dashboard/payments`);
          assert.equal(await page.getByRole('alert').first().textContent(), d.checkFields);
          assert.equal(await errorOf(page, page.locator('#amount')), d.fieldAmount);
          assert.equal(await errorOf(page, page.locator('#label')), undefined);
          assert.equal(await page.locator('#amount').inputValue(), '12,5x');
          assert.equal(await page.locator('#label').inputValue(), label);
          await checkState(page, at('one-time payment refused'));

          // 2. A paid order: a product picked from the picker, a quantity, the modification proposed.
          await page.goto(`${t.baseUrl}${seed.orderPath}`);
          const picker = page.locator('#modification-form select').first();
          const row = (await picker.getAttribute('id'))!.replace('pick-', '');
          await picker.selectOption(seed.picked.id);
          await page.locator(`#quantity-${row}`).fill('2');
          await page.locator('#modification-form button[type="submit"]').click();
          await page.waitForURL(/notice=done/);
          // 1 × 5.00 already in the order, and 2 × 10.00 picked.
          assert.equal(
            await page.locator('#proposed').textContent(),
            d.modificationProposed.replace('{total}', mru(500 + 2 * seed.picked.price)),
          );
          await checkState(page, at('order modification proposed'));

          // 3. The partly refunded payment: its badge says so (issue 54 item 4), the note beside it
          // how much, and gross, fee and net.
          await page.goto(`${t.baseUrl}${seed.paymentPath}`);
          assert.equal(await page.locator('#status').textContent(), d.intentPartlyRefunded);
          assert.equal(await page.locator('#status').getAttribute('data-status'), 'REFUNDED');
          const note = d.refundedOfPaid
            .replace('{refunded}', mru(5_000).replace(/\s\S+$/, ''))
            .replace('{paid}', mru(12_500));
          assert.equal(await page.locator('#refund-note').textContent(), note);
          // Issue 54 item 7: the refund's minus is drawn before its digits, in Arabic too (on the
          // screen: left of them, the number isolated left to right).
          const minus = await minusBeforeDigits(page.locator('#amount-refunded'));
          assert.ok(
            minus.minusRight <= minus.digitLeft + 0.5,
            `the minus left of the digits: ${JSON.stringify(minus)}`,
          );
          for (const figure of ['#amount-gross', '#amount-refunded', '#amount-fee', '#amount-net'])
            assert.ok(await page.locator(figure).isVisible(), `${figure} shown`);
          assert.equal(await page.locator('#amount-gross').textContent(), mru(12_500));
          await checkState(page, at('payment partly refunded'));
          // The home chart's values table, folded under its summary until opened.
          await page.goto(`${t.baseUrl}/dashboard`);
          const values = page.locator('#chart-values');
          assert.equal(await values.isVisible(), false, 'folded at first');
          await page.locator('summary', { hasText: d.chartValues }).click();
          await values.waitFor({ state: 'visible' });
          assert.ok((await values.locator('tbody tr').count()) > 0);
          await checkState(page, at('home, chart values open'));

          // 4. Products: a SKU typed and saved; an image uploaded shows as the list's thumbnail.
          const lampPath = `/dashboard/products/${encodeURIComponent(seed.lamp.id)}`;
          await page.goto(`${t.baseUrl}${lampPath}`);
          const sku = `LAMP-${lang}`;
          await page.locator('#product-sku').fill(sku);
          await page.locator('#product-form button[type="submit"]').click();
          await page.waitForURL(/notice=done/);
          assert.equal(await page.locator('#product-sku').inputValue(), sku);
          await page.locator('input[type="file"][name="file"]').setInputFiles({
            name: 'lampe.png',
            mimeType: 'image/png',
            buffer: PNG,
          });
          await page.locator(`form[action$="/images"] button[type="submit"]`).click();
          await page.locator('#images img').first().waitFor();
          await page.goto(`${t.baseUrl}/dashboard/products`);
          const lampRow = page.locator('tr', { has: page.locator(`a[href="${lampPath}"]`) });
          assert.equal(await lampRow.locator('td.mono').last().textContent(), sku);
          const thumb = lampRow.locator('img.thumb');
          await thumb.waitFor();
          await page.waitForFunction(
            (image) =>
              (image as unknown as { complete: boolean; naturalWidth: number }).complete &&
              (image as unknown as { naturalWidth: number }).naturalWidth > 0,
            await thumb.elementHandle(),
          );
          await checkState(page, at('products with a thumbnail'));
          // A delete only once its box is ticked.
          await page.goto(`${t.baseUrl}/dashboard/products/${encodeURIComponent(seed.oldStock.id)}`);
          // Unticked, the browser itself holds the form back (the box is required).
          const confirm = page.locator('#delete-confirm');
          assert.equal(
            await confirm.evaluate(
              (box) => (box as unknown as { validity: { valueMissing: boolean } }).validity.valueMissing,
            ),
            true,
          );
          await confirm.check();
          await checkState(page, at('product delete confirmed'));
          await page.locator('#delete-form button[type="submit"]').click();
          await page.waitForURL(`${t.baseUrl}/dashboard/products?notice=done`);
          assert.equal(await page.getByRole('status').textContent(), d.done);
          assert.equal(await page.getByText(seed.oldStock.name).count(), 0, 'gone from the list');

          // 5. Settings: the owner's own password changed, then live access requested.
          const fresh = 'une phrase de passe bien plus longue';
          await page.goto(`${t.baseUrl}/dashboard/settings`);
          await page.locator('#current-password').fill(seed.owner.password);
          await page.locator('#new-password').fill(fresh);
          await page.locator('#new-password-again').fill(fresh);
          await page.locator('#password-form button[type="submit"]').click();
          await page.waitForURL(/\/dashboard\/settings\?notice=done/);
          assert.equal(await page.getByRole('status').textContent(), d.done);
          await page.locator('#request-live').click();
          const waiting = d.liveRequested.split('{date}').at(-1)!;
          await page.locator('#live-state').waitFor();
          assert.ok((await page.locator('#live-state').textContent())?.endsWith(waiting));
          assert.equal(await page.locator('#request-live').count(), 0, 'asked once');
          await checkState(page, at('settings, live access requested'));

          // 6. The delivery log: the failing delivery's red badge and last HTTP status; retry now.
          await page.goto(`${t.baseUrl}${LOG}`);
          const deliveryRow = page.locator('#deliveries tr', {
            has: page.locator(`a[href="${LOG}/${seed.failingDelivery}"]`),
          });
          const badge = deliveryRow.locator('.badge');
          assert.equal(await badge.textContent(), d.deliveryFailed);
          const [red, green, blue] = (await badge.evaluate((element) => getComputedStyle(element).color))
            .match(/\d+/g)!
            .map(Number);
          assert.ok(
            red! > green! + 60 && red! > blue! + 60,
            `the failing badge is red: rgb(${red}, ${green}, ${blue})`,
          );
          assert.equal((await deliveryRow.locator('td.last-status').textContent())?.trim(), '500');
          await checkState(page, at('delivery log with a failing delivery'));
          await deliveryRow.getByRole('button', { name: d.retryNow }).click();
          await page.waitForURL(`${t.baseUrl}${LOG}/${seed.failingDelivery}?notice=done`);
          assert.equal(await page.getByRole('status').textContent(), d.done);
          const retried = await t.runtime.db
            .selectFrom('webhook_deliveries')
            .select('next_attempt_at')
            .where('id', '=', seed.failingDelivery)
            .executeTakeFirstOrThrow();
          assert.ok(retried.next_attempt_at.getTime() <= Date.now() + 1_000, 'due now, not in an hour');
          await checkState(page, at('delivery retried'));

          // The new password is the one that signs in now.
          await page.locator('#sign-out').click();
          await page.waitForURL(/\/dashboard\/login/);
          await signInAs(page, t.baseUrl, { ...seed.owner, password: fresh }, lang);
        } finally {
          await context.close();
        }
      });
    }
  },
);

interface Overflowing {
  scrollWidth: number;
  clientWidth: number;
}

declare function getComputedStyle(element: unknown): { color: string };
