import type { OrderStatus } from '../../db/schema.js';
import type { ErrorCode } from '../../http/errors.js';
import { assetFolder, besideModule, SHARED_ASSETS_DIR, templateFolder, type CustomerPage } from '../../http/views.js';
import { formatPageAmount, keepLang, type Dictionary, type Lang, type LangChoice } from '../../lib/i18n.js';
import { storefrontDictionaries, type StorefrontText } from './i18n.js';
import type { CatalogProduct, CatalogView, CustomerOrderView } from './service.js';
import type { BusinessContact } from '../businesses/service.js';

type Texts = Dictionary<StorefrontText>;

/** The storefront's scripts and the shared stylesheet, served under /storefront/assets/. */
export const storefrontAssets = assetFolder('/storefront/assets', [
  besideModule(import.meta.url, 'assets'),
  SHARED_ASSETS_DIR,
]);
const VIEWS = templateFolder(import.meta.url);

/** What every page render needs: the language chosen and the page's own path (for the language links). */
export interface PageContext {
  choice: LangChoice;
  path: string;
}

/** The stored reason of a cancel the customer made without one (the merchant reads it in English). */
export const CUSTOMER_CANCEL_REASON = 'Cancelled by the customer';

const STATUS_TEXTS: Record<OrderStatus, StorefrontText> = {
  NEW: 'statusNew',
  PREPARING: 'statusPreparing',
  READY: 'statusReady',
  PICKED_UP: 'statusPickedUp',
  DELIVERED: 'statusDelivered',
  CANCELLED: 'statusCancelled',
  REFUNDED: 'statusRefunded',
};

/** What happens next, by status: where and how the customer gets the order. */
const NEXT_TEXTS: Record<OrderStatus, StorefrontText> = {
  NEW: 'nextNew',
  PREPARING: 'nextPreparing',
  READY: 'nextReady',
  PICKED_UP: 'nextPickedUp',
  DELIVERED: 'nextDelivered',
  CANCELLED: 'nextCancelled',
  REFUNDED: 'nextRefunded',
};

/** The page's text for each error `code` the storefront API answers; the API's English `message` is never shown. */
const API_ERROR_TEXTS: Partial<Record<ErrorCode, StorefrontText>> = {
  INVALID_PIN: 'errInvalidPin',
  WALLET_NOT_FOUND: 'errInvalidPin',
  WALLET_LOCKED: 'errWalletLocked',
  INSUFFICIENT_BALANCE: 'errInsufficientBalance',
  // A customer's cancel of a paid order, or a lower total, that the shop's balance cannot refund.
  INSUFFICIENT_FUNDS: 'errShopCannotRefund',
  INSUFFICIENT_STOCK: 'errStock',
  PRODUCT_NOT_FOUND: 'errProductGone',
  VARIANT_NOT_FOUND: 'errProductGone',
  ORDER_INVALID_TRANSITION: 'errOrderChanged',
  ORDER_NOT_FOUND: 'orderNotFound',
  SHOP_NOT_FOUND: 'shopNotFound',
  AMOUNT_OUT_OF_RANGE: 'errAmountOutOfRange',
  RATE_LIMITED: 'rateLimited',
};

/** VALIDATION_ERROR by the field its first detail names (a line's price: `price`). */
const FIELD_ERROR_TEXTS: Record<string, StorefrontText> = {
  'body.phone': 'errPhoneInvalid',
  'body.pin': 'errPinInvalid',
  'body.customerName': 'errNameMissing',
  price: 'errPriceInvalid',
};

function clientErrors(t: Texts) {
  const byCode: Record<string, string> = {};
  for (const [code, key] of Object.entries(API_ERROR_TEXTS)) byCode[code] = t[key];
  for (const [field, key] of Object.entries(FIELD_ERROR_TEXTS)) byCode[`VALIDATION_ERROR:${field}`] = t[key];
  return { byCode, generic: t.errGeneric };
}

/** What each storefront template draws: its view model, checked where the page is built. */
interface StorefrontViews {
  /** A shop or an order that cannot be shown, and why. */
  state: { t: Texts; message: string };
  storefront: {
    t: Texts;
    view: CatalogView;
    search: string;
    mode: 'test' | 'live';
    langInForm: boolean;
    products: ReturnType<typeof productCard>[];
  };
  order: {
    t: Texts;
    view: CustomerOrderView;
    statusText: string;
    nextText: string;
    cancelledByYou: boolean;
    shopPath: string;
    contact: BusinessContact | null;
  };
}

function page<K extends keyof StorefrontViews>(
  context: PageContext,
  template: K,
  title: string,
  rest: Omit<Partial<CustomerPage>, 'data'> & { data: StorefrontViews[K] },
): CustomerPage {
  return {
    status: 200,
    template: `${VIEWS}/${template}`,
    choice: context.choice,
    path: context.path,
    title,
    assets: storefrontAssets,
    languagesLabel: storefrontDictionaries[context.choice.lang].languages,
    images: 'self-and-https',
    ...rest,
  };
}

/** A signed price adjustment, in the page's amount format. */
function adjustmentText(centimes: number, lang: Lang): string {
  return formatPageAmount(centimes, lang, 'always');
}

/**
 * A product as its card draws it. A product in stock can be bought without a variant (the API
 * prices it at its own price and takes its own stock): its variants are a choice, "Regular" first.
 */
function productCard(t: Texts, lang: Lang, product: CatalogProduct) {
  return {
    ...product,
    orderable: product.inStock,
    variantChoices: product.variants.map((variant) => ({
      id: variant._id,
      inStock: variant.inStock,
      text: [
        variant.label,
        variant.priceAdjustment ? ` (${adjustmentText(variant.priceAdjustment, lang)})` : '',
        variant.inStock ? '' : ` · ${t.outOfStock}`,
      ].join(''),
    })),
    optionChoices: product.options.map((option) => ({
      id: option._id,
      name: option.name,
      adjustment: adjustmentText(option.priceAdjustment, lang),
    })),
  };
}

/** `GET /s/{shopId}`: the hosted storefront (catalog, search, cart, order and pay). */
export function storefrontPage(
  context: PageContext,
  status: number,
  view: CatalogView | null,
  options: { mode: 'test' | 'live'; search: string; rateLimited?: boolean },
): CustomerPage {
  const { lang } = context.choice;
  const t = storefrontDictionaries[lang];
  if (!view) {
    return page(context, 'state', t.shopTitle, {
      status,
      data: { t, message: options.rateLimited ? t.rateLimited : t.shopNotFound },
    });
  }
  return page(context, 'storefront', view.shopName, {
    status,
    wide: true,
    data: {
      t,
      view,
      search: options.search,
      mode: options.mode,
      langInForm: context.choice.fromQuery,
      products: view.items.map((product) => productCard(t, lang, product)),
    },
    scripts: ['storefront.js'],
    pageData: {
      shopId: view.shopId,
      mode: options.mode,
      orderPath: keepLang('/o/{ref}', context.choice).replace('%7Bref%7D', '{ref}'),
      texts: {
        remove: t.remove,
        added: t.added,
        addToCart: t.addToCart,
        placing: t.placing,
        placeOrder: t.placeOrder,
        stockLeft: t.stockLeft,
        stockNone: t.stockNone,
        keepCount: t.keepCount,
        lineGone: t.lineGone,
        priceInvalid: t.errPriceInvalid,
        cartCount: t.cartCount,
      },
      errors: clientErrors(t),
      products: view.items.map((product) => ({
        id: product.id,
        name: product.name,
        variants: product.variants.map((variant) => ({ _id: variant._id, label: variant.label })),
        options: product.options.map((option) => ({ _id: option._id, name: option.name })),
      })),
    },
  });
}

/** `GET /o/{orderRef}`: the customer's order, what happens next, the shop to ask, cancel (while NEW) and the answer to a proposed change. */
export function orderPage(
  context: PageContext,
  status: number,
  view: CustomerOrderView | null,
  rateLimited = false,
  contact: BusinessContact | null = null,
): CustomerPage {
  const t = storefrontDictionaries[context.choice.lang];
  if (!view) {
    return page(context, 'state', t.orderTitle, {
      status,
      data: { t, message: rateLimited ? t.rateLimited : t.orderNotFound },
    });
  }
  const proposal = view.proposedModification;
  return page(context, 'order', `${t.orderTitle} · ${view.shopName}`, {
    status,
    data: {
      t,
      view,
      statusText: t[STATUS_TEXTS[view.status]],
      nextText: t[NEXT_TEXTS[view.status]],
      cancelledByYou: view.cancellationReason === CUSTOMER_CANCEL_REASON,
      shopPath: keepLang(`/s/${encodeURIComponent(view.shopId)}`, context.choice),
      contact,
    },
    scripts: ['order.js'],
    pageData: {
      orderRef: view.orderRef,
      // The proposal this page shows: accepting names it, so a proposal replaced meanwhile is refused.
      proposedAt: proposal?.proposedAt ?? null,
      texts: { confirmCancel: t.confirmCancel },
      errors: clientErrors(t),
    },
  });
}
