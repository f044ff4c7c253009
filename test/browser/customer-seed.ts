import type { Page } from 'playwright-core';
import type { Lang } from '../../src/lib/i18n.js';
import { checkoutDictionaries } from '../../src/modules/checkout/i18n.js';
import { storefrontDictionaries } from '../../src/modules/storefront/i18n.js';
import { expectStatus, type TestApp } from '../support/harness.js';
import { act, createIntent } from '../intents/support.js';
import { pay, RICH } from '../checkout/support.js';
import { createProduct } from '../products/support.js';
import { orderAction } from '../orders/support.js';
import { setBusinessContact } from '../../src/modules/businesses/service.js';

/**
 * Every customer page in each of its states, made in a test app: what the browser tests of
 * issue 38 (test/browser/customer-pages.test.ts) check and scripts/screenshots-customer.ts
 * photographs.
 */

/** A cart as the storefront's script keeps it in the browser. */
export interface StoredLine {
  productId: string;
  quantity: number;
  variantId?: string;
  optionIds: string[];
  label: string;
}

export interface CustomerPageState {
  name: string;
  path: string;
  /** The English dictionary of the page: none of its texts may show in French or Arabic. */
  english: Record<string, string>;
  /** The cart the browser holds when the page opens (storefront pages). */
  cart?: StoredLine[];
  /** What shows once the page's script is done. */
  ready?: string;
  /**
   * Where axe-core runs (about a second a page): in every language and size for each page's main
   * states; once (Arabic, phone) for states that only change a message in the same layout.
   */
  axe: 'every' | 'once';
}

export const SIZES = { phone: { width: 390, height: 844 }, laptop: { width: 1280, height: 800 } } as const;

/** A business with a payer fee, payments in every state, a shop with products and orders in several states. */
export async function seedCustomerPages(t: TestApp): Promise<{ shopId: string; pages: CustomerPageState[] }> {
  const business = await t.createBusiness({ name: 'Épicerie du Port' });
  const shopId = business.shopId!;
  // The order pages show the shop's contact (what an owner enters in the dashboard's settings).
  await setBusinessContact(t.runtime.db, business.id, {
    phone: '+22222123456',
    email: 'port@example.com',
    pickupAddress: 'Port de pêche, étal 4, Nouakchott',
    delivers: true,
  });
  const pages: CustomerPageState[] = [];
  const sk = business.keys.secretTest;
  expectStatus(
    await t.admin('PUT', `/businesses/${business.id}/fees`, {
      providerBps: 0,
      payerFee: 200,
      tofBps: 0,
      tteBps: 0,
    }),
    200,
  );
  const checkout = checkoutDictionaries.en;
  const storefront = storefrontDictionaries.en;
  const fixed = await createIntent(t, sk, { amount: 12_500, label: 'Panier du jour' });
  const open = await createIntent(t, sk, { amountType: 'OPEN', amount: 10_050 });
  const paid = await createIntent(t, sk, {
    amount: 7_500,
    label: 'Thé',
    success_url: 'https://shop.example/merci',
  });
  expectStatus(await pay(t, paid.shortCode, RICH), 200);
  const refunded = await createIntent(t, sk, { amount: 12_500 });
  expectStatus(await pay(t, refunded.shortCode, RICH), 200);
  expectStatus(await act(t, sk, refunded.referenceNumber, 'refund', { amount: 4_500 }), 200);
  const expired = await createIntent(t, sk, { amount: 500, cancel_url: 'https://shop.example/panier' });
  expectStatus(await act(t, sk, expired.referenceNumber, 'simulate-expiry'), 200);
  const cancelled = await createIntent(t, sk, { amount: 500 });
  expectStatus(await act(t, sk, cancelled.referenceNumber, 'cancel'), 200);
  pages.push(
    { name: 'checkout, payable', axe: 'every', path: `/p/${fixed.shortCode}`, english: checkout },
    { name: 'checkout, open amount', axe: 'once', path: `/p/${open.shortCode}`, english: checkout },
    { name: 'checkout, receipt', axe: 'every', path: `/p/${paid.shortCode}`, english: checkout },
    { name: 'checkout, refunded in part', axe: 'once', path: `/p/${refunded.shortCode}`, english: checkout },
    { name: 'checkout, expired', axe: 'every', path: `/p/${expired.shortCode}`, english: checkout },
    { name: 'checkout, cancelled', axe: 'once', path: `/p/${cancelled.shortCode}`, english: checkout },
    { name: 'checkout, unknown link', axe: 'once', path: '/p/nope00', english: checkout },
    { name: 'pay-by-code', axe: 'every', path: '/pay?mode=test', english: checkout },
    {
      name: 'pay-by-code, unknown code',
      axe: 'once',
      path: `/pay?mode=live&code=${fixed.code}`,
      english: checkout,
    },
  );

  const tea = await createProduct(t, sk, {
    name: 'Thé vert',
    description: 'Gunpowder, 250 g',
    price: 1500,
    quantity: 50,
    status: 'ACTIVE',
    variants: [
      { type: 'SIZE', label: 'Grand', priceAdjustment: 500, quantity: 10 },
      { type: 'SIZE', label: 'Géant', priceAdjustment: 900, quantity: 0 },
    ],
    options: [{ name: 'Menthe', priceAdjustment: 200 }],
  });
  const tip = await createProduct(t, sk, {
    name: 'Pourboire',
    price: 500,
    isFlexiblePrice: true,
    status: 'ACTIVE',
  });
  const dates = await createProduct(t, sk, {
    name: 'Dattes',
    price: 800,
    quantity: 2,
    status: 'ACTIVE',
  });
  await createProduct(t, sk, { name: 'Sucre', price: 300, quantity: 0, status: 'ACTIVE' });
  const teaLine: StoredLine = {
    productId: tea.id,
    quantity: 2,
    variantId: tea.variants[0]._id,
    optionIds: [tea.options[0]._id],
    label: 'Thé vert (Grand) + Menthe',
  };
  const tipLine: StoredLine = { productId: tip.id, quantity: 1, optionIds: [], label: 'Pourboire' };
  const tooManyDates: StoredLine = { productId: dates.id, quantity: 5, optionIds: [], label: 'Dattes' };

  const wallet = { phone: '+22245000888', pin: '1357' };
  expectStatus(await t.admin('POST', '/wallets', { ...wallet, balance: 1_000_000, environment: 'test' }), 201);
  const place = async () => {
    const placed = await t.request('POST', `/storefront/shops/${shopId}/orders`, {
      body: { items: [{ productId: tea.id, quantity: 1 }], customerName: 'Aicha', ...wallet },
    });
    expectStatus(placed, 201);
    return placed.body.data;
  };
  const fresh = await place();
  const modified = await place();
  await orderAction(t, sk, `/${modified.referenceNumber}/propose-modification`, {
    items: [{ productId: tea.id, quantity: 2 }],
  });
  const cancelledOrder = await place();
  expectStatus(await t.request('POST', `/storefront/orders/${cancelledOrder.orderRef}/cancel`, { body: {} }), 200);
  const ready = await place();
  for (const step of ['accept', 'ready']) await orderAction(t, sk, `/${ready.referenceNumber}/${step}`);
  pages.push(
    {
      name: 'storefront, empty cart',
      axe: 'once',
      path: `/s/${shopId}`,
      english: storefront,
      cart: [],
      ready: '#cart-empty',
    },
    {
      name: 'storefront, cart',
      axe: 'every',
      path: `/s/${shopId}`,
      english: storefront,
      cart: [teaLine, tipLine],
      ready: '#total-to-pay:not(:empty)',
    },
    {
      name: 'storefront, cart short of stock',
      axe: 'every',
      path: `/s/${shopId}`,
      english: storefront,
      cart: [teaLine, tooManyDates],
      ready: '.line-problem',
    },
    {
      name: 'storefront, search finds nothing',
      axe: 'once',
      path: `/s/${shopId}?search=introuvable`,
      english: storefront,
    },
    { name: 'storefront, unknown shop', axe: 'once', path: '/s/shop_nope', english: storefront },
    { name: 'order, new', axe: 'once', path: `/o/${fresh.orderRef}`, english: storefront },
    { name: 'order, change proposed', axe: 'every', path: `/o/${modified.orderRef}`, english: storefront },
    { name: 'order, cancelled', axe: 'once', path: `/o/${cancelledOrder.orderRef}`, english: storefront },
    { name: 'order, ready', axe: 'once', path: `/o/${ready.orderRef}`, english: storefront },
    { name: 'order, unknown link', axe: 'once', path: '/o/nope', english: storefront },
  );
  return { shopId, pages };
}

export const withLang = (path: string, lang: Lang) => `${path}${path.includes('?') ? '&' : '?'}lang=${lang}`;

/** Opens a page state in a language: its cart written first (the page must be on the app's origin), then its script awaited. */
export async function openState(
  page: Page,
  baseUrl: string,
  shopId: string,
  state: CustomerPageState,
  lang: Lang,
): Promise<void> {
  if (state.cart) {
    await page.evaluate(
      ([key, cart]) =>
        (globalThis as unknown as { localStorage: { setItem(k: string, v: string): void } }).localStorage.setItem(
          key,
          cart,
        ),
      [`storefront-cart:${shopId}`, JSON.stringify(state.cart)] as const,
    );
  }
  await page.goto(`${baseUrl}${withLang(state.path, lang)}`);
  if (state.ready) await page.locator(state.ready).first().waitFor();
}
