/**
 * The README's two pictures, made again from the code: `npm run screenshots`.
 *
 * Starts the app in this process (the test harness, an embedded database thrown away at the end),
 * makes a demo business with a few payments, then drives Debian's Chromium (playwright-core) to
 * take docs/images/dashboard.png (the dashboard's home in a 1280×800 window, the whole page) and docs/images/checkout.png
 * (the hosted checkout page of a PENDING intent, a 390×844 phone at 2× pixel density).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { CHROMIUM, launchChromium } from '../test/support/browser.js';
import { createUser } from '../test/dashboard/support.js';
import { expectStatus, startTestApp, type TestApp } from '../test/support/harness.js';

const OUT = path.resolve('docs', 'images');
const INTENTS = '/api/v1/dev/intents';

function say(line: string): void {
  process.stdout.write(`screenshots: ${line}\n`);
}

/** Chromium may still be on its way (apt-get): wait up to 10 minutes for it. */
async function waitForChromium(): Promise<void> {
  const deadline = Date.now() + 10 * 60_000;
  if (!existsSync(CHROMIUM)) say(`waiting for ${CHROMIUM} (set CHROMIUM_PATH to use another one)`);
  while (!existsSync(CHROMIUM)) {
    if (Date.now() > deadline) throw new Error(`no Chromium at ${CHROMIUM} after 10 minutes`);
    await new Promise((resolve) => setTimeout(resolve, 5000));
  }
}

/** A PENDING intent of `amount` ouguiyas (MRU × 100); answers its reference number and payUrl. */
async function createIntent(t: TestApp, key: string, amount: number, label: string, order: string) {
  const response = await t.request('POST', INTENTS, {
    key,
    body: { amount, label, metadata: { order } },
    idempotencyKey: true,
  });
  expectStatus(response, 201);
  return { reference: response.body.data.referenceNumber as string, payUrl: response.body.data.payUrl as string };
}

async function act(t: TestApp, key: string, reference: string, action: 'simulate' | 'refund', body: unknown = {}) {
  expectStatus(await t.request('POST', `${INTENTS}/${reference}/${action}`, { key, body, idempotencyKey: true }), 200);
}

async function main(): Promise<void> {
  await waitForChromium();
  mkdirSync(OUT, { recursive: true });
  const t = await startTestApp();
  try {
    const business = await t.createBusiness({ name: 'Boutique Nouakchott', approveLive: false });
    const key = business.keys.secretTest;

    const paid: [number, string, string][] = [
      [185_000, 'Melhfa en voile de coton, indigo', 'BN-1041'],
      [42_500, 'Thé vert et menthe, coffret 3 boîtes', 'BN-1042'],
      [96_000, 'Sandales en cuir, pointure 41', 'BN-1043'],
      [27_500, 'Encens et brûle-parfum', 'BN-1045'],
      [310_000, 'Coussins brodés, lot de 4', 'BN-1046'],
    ];
    const references: string[] = [];
    for (const [amount, label, order] of paid) {
      const { reference } = await createIntent(t, key, amount, label, order);
      await act(t, key, reference, 'simulate');
      references.push(reference);
    }
    // The sandals came back in the wrong size: part of that payment is refunded.
    await act(t, key, references[2]!, 'refund', { amount: 48_000, reason: 'Pointure échangée' });
    const pending = await createIntent(t, key, 64_500, 'Bracelet en argent, gravure «\u00a0Aïcha\u00a0»', 'BN-1047');
    say(`demo business ${business.id}: ${paid.length} paid payments, 1 refund, ${pending.reference} pending`);

    const owner = await createUser(t, business.id, 'owner');
    const browser = await launchChromium();
    try {
      const desktop = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: 'en-US' });
      const page = await desktop.newPage();
      await page.goto(`${t.baseUrl}/dashboard/login`);
      await page.getByLabel('Email').fill(owner.email);
      await page.getByLabel('Password').fill(owner.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(`${t.baseUrl}/dashboard`);
      await page.locator('#latest').waitFor();
      // The home page is short (about 1200 px at this width): the whole page, so the latest
      // payments are not cut in the middle of a row.
      await page.screenshot({ path: path.join(OUT, 'dashboard.png'), fullPage: true });
      await desktop.close();

      // The payUrl points at this app's own address (no PUBLIC_URL is set here).
      assert.ok(pending.payUrl.startsWith(`${t.baseUrl}/p/`), `unexpected payUrl ${pending.payUrl}`);
      const phone = await browser.newContext({
        viewport: { width: 390, height: 844 },
        deviceScaleFactor: 2,
        isMobile: true,
        hasTouch: true,
        locale: 'en-US',
      });
      const checkout = await phone.newPage();
      await checkout.goto(pending.payUrl);
      await checkout.locator('#amount-due').waitFor();
      await checkout.screenshot({ path: path.join(OUT, 'checkout.png') });
      await phone.close();
    } finally {
      await browser.close();
    }
  } finally {
    await t.close();
  }
  for (const name of ['dashboard.png', 'checkout.png']) {
    const size = statSync(path.join(OUT, name)).size;
    say(`wrote docs/images/${name} (${Math.round(size / 1024)} KB)`);
  }
}

await main();
