import type { Page } from 'playwright-core';
import { dictionaries, errorTexts } from '../../src/modules/dashboard/i18n.js';
import { LANGS, type Dictionary, type Lang } from '../../src/lib/i18n.js';
import { createUser } from '../dashboard/support.js';
import { act, createIntent } from '../intents/support.js';
import { freshPhone, simulate } from '../orders/support.js';
import { createPayout, payoutTo } from '../payouts/support.js';
import { createProduct } from '../products/support.js';
import { expectStatus, type TestApp } from '../support/harness.js';

/**
 * One business with something on every dashboard page (a paid and partly refunded payment, a
 * pending one, an order, a product, a seller, a payout, a webhook endpoint with a delivery), and its owner:
 * what the dashboard's browser test (dashboard-pages.test.ts) and the screenshots script
 * (scripts/screenshots-dashboard.ts) visit.
 */

/** A test app whose dashboard a browser signs in to again and again, its webhooks sent to a local receiver. */
export const DASHBOARD_APP_CONFIG: Record<string, string> = {
  RATE_LIMIT_TEST_PER_MINUTE: '100000',
  WEBHOOK_ALLOW_PRIVATE: 'true',
  DASHBOARD_LOGIN_PER_MINUTE_EMAIL: '1000',
  DASHBOARD_LOGIN_PER_MINUTE_IP: '1000',
};

export const SIZES = { phone: { width: 390, height: 844 }, laptop: { width: 1280, height: 800 } } as const;

export interface DashboardPageUnderTest {
  name: string;
  path: string;
}

export interface DashboardSeed {
  owner: { email: string; password: string };
  pages: DashboardPageUnderTest[];
}

export async function seedDashboard(t: TestApp): Promise<DashboardSeed> {
  const business = await t.createBusiness({ name: 'Épicerie du Port', approveLive: false });
  const key = business.keys.secretTest;
  const owner = await createUser(t, business.id, 'owner');
  // A second member: the Team page draws its role and removal forms.
  await createUser(t, business.id, 'finance');

  // Payments: one paid then refunded in part, one pending (its code and QR code), one failed.
  const paid = await createIntent(t, key, { amount: 12_500, label: 'Thé vert ×3', metadata: { order: 'A-17' } });
  expectStatus(await act(t, key, paid.referenceNumber, 'simulate', {}), 200);
  expectStatus(await act(t, key, paid.referenceNumber, 'refund', { amount: 5_000, reason: 'un paquet abîmé' }), 200);
  const pending = await createIntent(t, key, { amount: 15_050, label: 'Dattes' });
  for (const amount of [30_000, 45_000]) {
    const more = await createIntent(t, key, { amount, label: 'Menthe' });
    expectStatus(await act(t, key, more.referenceNumber, 'simulate', {}), 200);
  }

  // The shop: a product with a variant, and an order paid through the sandbox.
  const product = await createProduct(t, key, {
    name: 'Théière en laiton',
    price: 45_000,
    status: 'ACTIVE',
    quantity: 12,
    variants: [{ type: 'COLOR', label: 'Or', priceAdjustment: 2_500 }],
  });
  const order = await simulate(t, key, [{ productId: product.id, quantity: 2 }], freshPhone());
  expectStatus(order, 201);

  // A payout out of the balance the payments made.
  const payout = await createPayout(t, key, payoutTo(freshPhone(), 10_000, { description: 'Loyer de novembre' }));
  expectStatus(payout, 201);

  // A webhook endpoint that nothing answers (no worker runs: its deliveries stay pending).
  const endpoint = await t.request('POST', '/api/v1/dev/webhooks/endpoints', {
    key,
    idempotencyKey: true,
    body: { url: 'http://127.0.0.1:9/hook', events: ['payment.created', 'payment.confirmed'] },
  });
  expectStatus(endpoint, 201);
  const afterEndpoint = await createIntent(t, key, { amount: 2_000, label: 'Sucre' });
  expectStatus(await act(t, key, afterEndpoint.referenceNumber, 'simulate', {}), 200);

  // A payment link (issue 50) that one customer paid, giving their name and a note.
  const link = await t.request('POST', '/api/v1/dev/payment-links', {
    key,
    idempotencyKey: true,
    body: {
      label: 'Panier de légumes',
      amountType: 'OPEN',
      minAmount: 5_000,
      maxAmount: 50_000,
      maxPayments: 100,
      collect: { name: true, note: true },
    },
  });
  expectStatus(link, 201);
  const slug = (link.body.data.url as string).split('/l/')[1]!;
  expectStatus(
    await t.request('POST', `/checkout/links/${slug}/pay`, {
      idempotencyKey: true,
      body: { phone: '+22220000001', pin: '1234', amount: 12_000, name: 'Mariem', note: 'sans oignons' },
    }),
    200,
  );

  // A seller (issue 52) with a balance: its share of a split payment.
  const seller = await t.request('POST', '/api/v1/dev/sellers', {
    key,
    idempotencyKey: true,
    body: { name: 'Étal de Aminetou', phone: '+22236000012', commissionBps: 1_050 },
  });
  expectStatus(seller, 201);
  const split = await createIntent(t, key, {
    amount: 60_000,
    label: 'Panier du marché',
    splits: [{ seller: seller.body.data.id, amount: 48_250 }],
  });
  expectStatus(await act(t, key, split.referenceNumber, 'simulate', {}), 200);

  const pages: DashboardPageUnderTest[] = [
    { name: 'home', path: '/dashboard' },
    { name: 'payments', path: '/dashboard/payments' },
    { name: 'payment-refunded', path: `/dashboard/payments/${paid.referenceNumber}` },
    { name: 'payment-pending', path: `/dashboard/payments/${pending.referenceNumber}` },
    { name: 'payment-new', path: '/dashboard/payments/new' },
    { name: 'links', path: '/dashboard/links' },
    { name: 'link', path: `/dashboard/links/${link.body.data.referenceNumber}` },
    { name: 'link-new', path: '/dashboard/links/new' },
    { name: 'orders', path: '/dashboard/orders' },
    { name: 'order', path: `/dashboard/orders/${order.body.data.referenceNumber}` },
    { name: 'products', path: '/dashboard/products' },
    { name: 'product', path: `/dashboard/products/${product.id}` },
    { name: 'sellers', path: '/dashboard/sellers' },
    { name: 'seller', path: `/dashboard/sellers/${seller.body.data.id}` },
    { name: 'seller-new', path: '/dashboard/sellers/new' },
    { name: 'balance', path: '/dashboard/balance' },
    { name: 'payouts', path: '/dashboard/payouts' },
    { name: 'payout', path: `/dashboard/payouts/${payout.body.data.referenceNumber}` },
    { name: 'keys', path: '/dashboard/developers/keys' },
    { name: 'webhooks', path: '/dashboard/developers/webhooks' },
    { name: 'endpoint', path: `/dashboard/developers/webhooks/${endpoint.body.data.id}` },
    { name: 'deliveries', path: '/dashboard/developers/deliveries' },
    { name: 'events', path: '/dashboard/developers/events' },
    { name: 'settings', path: '/dashboard/settings' },
    { name: 'activity', path: '/dashboard/activity' },
    { name: 'team', path: '/dashboard/team' },
  ];
  return { owner, pages };
}

/** Signs the page's browser in from the sign-in page in `lang`: the session then speaks it. */
export async function signInAs(page: Page, baseUrl: string, owner: DashboardSeed['owner'], lang: Lang) {
  await page.goto(`${baseUrl}/dashboard/login?lang=${lang}`);
  const t = dictionaries[lang];
  await page.getByLabel(t.email).fill(owner.email);
  await page.getByLabel(t.password, { exact: true }).fill(owner.password);
  await page.getByRole('button', { name: t.signIn, exact: true }).click();
  await page.waitForURL(`${baseUrl}/dashboard`);
}

/**
 * The English texts an `lang` page must not show: the dashboard's English words and error texts,
 * less those the language writes alike ("Commission", "Stock", "Total" in French; codes such as
 * TOF or CSV in every language).
 */
export function englishFor(lang: Lang): Dictionary {
  const english: Record<string, string> = {};
  for (const [set, name] of [
    [dictionaries, 'text'],
    [errorTexts, 'error'],
  ] as const) {
    const own = set[lang] as Dictionary;
    for (const [key, text] of Object.entries(set.en as Dictionary))
      if (own[key] !== text) english[`${name}.${key}`] = text;
  }
  return english;
}

export { LANGS };
