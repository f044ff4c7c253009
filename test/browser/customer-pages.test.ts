import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { LANGS, type Lang } from '../../src/lib/i18n.js';
import { checkoutDictionaries } from '../../src/modules/checkout/i18n.js';
import { storefrontDictionaries } from '../../src/modules/storefront/i18n.js';
import { checkAccessibility, launchChromium, skipWithoutChromium } from '../support/browser.js';
import { expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { englishAmong } from '../support/i18n.js';
import { act, createIntent } from '../intents/support.js';
import { pay, RICH } from '../checkout/support.js';
import { createProduct } from '../products/support.js';
import { orderAction } from '../orders/support.js';

const SIZES = { phone: { width: 390, height: 844 }, laptop: { width: 1280, height: 800 } } as const;

/** A cart as the storefront's script keeps it in the browser. */
interface StoredLine {
  productId: string;
  quantity: number;
  variantId?: string;
  optionIds: string[];
  label: string;
}

interface CustomerPageUnderTest {
  name: string;
  path: string;
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

/**
 * Issue 38: every customer page in each of its states, in Arabic, French and English, on a phone
 * (390×844) and a laptop (1280×800), in a real browser: no serious or critical accessibility
 * finding (axe-core),
 * nothing wider than the screen, the direction of its language, and no English text left on the
 * French and Arabic pages (among what the browser shows, the script's texts included).
 */
describe(
  'customer pages in every language and size: accessible, no English left (issue 38)',
  { skip: skipWithoutChromium },
  () => {
    let t: TestApp;
    let browser: Browser;
    let business: TestBusiness;
    let shopId: string;
    const pages: CustomerPageUnderTest[] = [];

    before(async () => {
      t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
      business = await t.createBusiness({ name: 'Épicerie du Port' });
      shopId = business.shopId!;
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
        { name: 'checkout, open amount', axe: 'every', path: `/p/${open.shortCode}`, english: checkout },
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
      browser = await launchChromium();
    });
    after(async () => {
      await browser?.close();
      await t?.close();
    });

    const withLang = (path: string, lang: Lang) => `${path}${path.includes('?') ? '&' : '?'}lang=${lang}`;

    /** What the browser shows of the page: its rendered text and the attributes read aloud or shown. */
    const shownTexts = (page: Page) =>
      page.evaluate(() => {
        const doc = (globalThis as unknown as { document: ShownDocument }).document;
        const texts = doc.body.innerText.split('\n').map((line) => line.trim());
        for (const element of doc.querySelectorAll('[placeholder], [aria-label], [title], [alt]'))
          for (const name of ['placeholder', 'aria-label', 'title', 'alt'])
            texts.push(element.getAttribute(name) ?? '');
        texts.push(doc.title);
        return texts.filter(Boolean);
      });

    async function open(page: Page, under: CustomerPageUnderTest, lang: Lang): Promise<void> {
      if (under.cart) {
        // The cart this browser keeps for the shop, as its script stores it.
        await page.evaluate(
          ([key, cart]) =>
            (globalThis as unknown as { localStorage: { setItem(k: string, v: string): void } }).localStorage.setItem(
              key,
              cart,
            ),
          [`storefront-cart:${shopId}`, JSON.stringify(under.cart)] as const,
        );
      }
      const response = await page.goto(`${t.baseUrl}${withLang(under.path, lang)}`);
      assert.ok(response, under.name);
      if (under.ready) await page.locator(under.ready).first().waitFor();
    }

    for (const [size, viewport] of Object.entries(SIZES)) {
      test(`every customer page on a ${size} (${viewport.width}×${viewport.height}), in ${LANGS.join(', ')}`, async () => {
        let context: BrowserContext | undefined;
        try {
          context = await browser.newContext({ viewport, locale: 'en-US' });
          const page = await context.newPage();
          // A first visit of the origin, so the storefront's stored carts can be written before their pages open.
          await page.goto(`${t.baseUrl}/pay`);
          for (const lang of LANGS) {
            for (const under of pages) {
              const label = `${under.name}, ${lang}, ${size}`;
              await open(page, under, lang);
              assert.equal(await page.locator('html').getAttribute('lang'), lang, label);
              assert.equal(await page.locator('html').getAttribute('dir'), lang === 'ar' ? 'rtl' : 'ltr', label);
              if (under.axe === 'every' || (lang === 'ar' && size === 'phone')) await checkAccessibility(page, label);
              const overflow = await page.evaluate(() => {
                const root = (globalThis as unknown as { document: ShownDocument }).document.documentElement;
                return root.scrollWidth - root.clientWidth;
              });
              assert.ok(overflow <= 0, `${label}: ${overflow}px wider than the screen`);
              if (lang !== 'en') {
                assert.deepEqual(englishAmong(await shownTexts(page), under.english), [], `English left on ${label}`);
              }
            }
          }
          // The check can fail: the English pages show English.
          await open(page, pages[0]!, 'en');
          assert.notDeepEqual(englishAmong(await shownTexts(page), pages[0]!.english), []);
        } finally {
          await context?.close();
        }
      });
    }
  },
);

/** The little of the DOM the checks read (the test's types have no DOM). */
interface ShownDocument {
  body: { innerText: string };
  title: string;
  documentElement: { scrollWidth: number; clientWidth: number };
  querySelectorAll(selector: string): Iterable<{ getAttribute(name: string): string | null }>;
}
