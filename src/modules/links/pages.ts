import type { ErrorCode } from '../../http/errors.js';
import {
  assetFolder,
  besideModule,
  renderView,
  SHARED_ASSETS_DIR,
  templateFolder,
  type CustomerPage,
} from '../../http/views.js';
import {
  fillParts,
  fillText,
  formatPageAmount,
  languageLinks,
  moneyPart,
  textDirection,
  type Dictionary,
  type Lang,
  type LangChoice,
  type TextPart,
} from '../../lib/i18n.js';
import { checkoutDictionaries, type CheckoutText } from '../checkout/i18n.js';
import { clientErrors } from '../checkout/pages.js';
import { SANDBOX_WALLETS } from '../sandbox/sandbox.js';
import { PAYER_NAME_MAX, PAYER_NOTE_MAX } from './pay.js';
import { linkPageDictionaries, type LinkPageText } from './i18n.js';
import type { PayerLinkView } from './views.js';
import { isPayerRefusal, PAYER_REFUSALS, type PayerRefusal } from './state.js';

type CheckoutTexts = Dictionary<CheckoutText>;
type Texts = Dictionary<LinkPageText>;

/** The link page's script and poster stylesheet, with the shared customer ones, served under /l/assets/. */
export const linkAssets = assetFolder('/l/assets', [besideModule(import.meta.url, 'assets'), SHARED_ASSETS_DIR]);
const VIEWS = templateFolder(import.meta.url);
/** The checkout's test-mode banner and test wallets, drawn on a sandbox link's page too. */
const TEST_MODE_PARTIAL = '/modules/checkout/views/test-mode';
/** The shared partial drawing a text's parts (the customer pages' helpers name it too). */
const TEXT_PARTIAL = '/http/views/text';

/** What every page render needs: the language chosen and the page's own path (for the language links). */
export interface PageContext {
  choice: LangChoice;
  path: string;
}

/** A link found at its slug, as its payer sees it. */
export interface FoundLink {
  slug: string;
  view: PayerLinkView;
}

/** What `GET /l/{slug}` shows: the link, or why there is none to show. */
export type LinkPageContent = FoundLink | 'NOT_FOUND' | 'RATE_LIMITED';

/** Why a link takes no payment (`PayerLinkView.refusal`), as its page says it. */
const REFUSAL_TEXTS: Record<PayerRefusal, LinkPageText> = {
  PAYMENT_LINK_INACTIVE: 'inactive',
  PAYMENT_LINK_COMPLETED: 'completed',
  PAYMENT_LINK_EXPIRED: 'expired',
  FEATURE_DISABLED: 'notTaking',
  LIVE_ACCESS_NOT_APPROVED: 'notTaking',
};

/** What the link's API may answer a payment with besides the checkout's errors: the link went away meanwhile. */
const UNAVAILABLE_CODES: readonly ErrorCode[] = ['PAYMENT_LINK_NOT_FOUND', ...PAYER_REFUSALS];

/** An OPEN link's bounds as a text ("From 10.00 MRU to 500.00 MRU"), or null when it has none. */
function boundsParts(t: Texts, view: PayerLinkView, lang: Lang): TextPart[] | null {
  const min = view.minAmount === null ? null : moneyPart(view.minAmount, lang);
  const max = view.maxAmount === null ? null : moneyPart(view.maxAmount, lang);
  if (min && max) return fillParts(t.amountBetween, { min, max });
  if (min) return fillParts(t.amountAtLeast, { min });
  if (max) return fillParts(t.amountAtMost, { max });
  return null;
}

const plain = (parts: readonly TextPart[]) => parts.map((part) => part.text).join('');

/** The texts the page's script shows for an API error or a field it checks itself, in the page's language. */
function linkClientErrors(c: CheckoutTexts, t: Texts, view: PayerLinkView, lang: Lang) {
  const errors = clientErrors(c, lang);
  const byCode: Record<string, string> = {
    ...errors.byCode,
    'VALIDATION_ERROR:body.name': t.errNameRequired,
    'VALIDATION_ERROR:body.note': t.errNoteTooLong,
  };
  for (const code of UNAVAILABLE_CODES) byCode[code] = t.errUnavailable;
  const bounds = boundsParts(t, view, lang);
  if (bounds) byCode.AMOUNT_OUT_OF_RANGE = `${c.errAmountOutOfRange} ${plain(bounds)}`;
  return { byCode, generic: errors.generic };
}

/** What the link template draws: its view model, checked where the page is built. */
// A type, not an interface: a page's data is a plain record.
type LinkViewData = {
  t: Texts;
  c: CheckoutTexts;
  link: PayerLinkView | null;
  problem: 'NOT_FOUND' | 'RATE_LIMITED' | null;
  stateText: string;
  bounds: TextPart[] | null;
  /** The checkout's test-mode partial reads an intent's view: what of it a link has. */
  testView: { sandbox: boolean; state: string; testWallets: typeof SANDBOX_WALLETS } | null;
  testModePartial: string;
  nameMax: number;
  noteMax: number;
};

/**
 * `GET /l/{slug}`: a payment link's page. Taking payments: what to pay and to whom, then the
 * wallet form, paid through the link's API by the page's script, which then opens the receipt
 * at the checkout's `/p/{shortCode}` (it survives reload and follows the merchant's success URL).
 * Taking none: why, and no form.
 */
export function linkPage(context: PageContext, status: number, content: LinkPageContent): CustomerPage {
  const { lang } = context.choice;
  const c = checkoutDictionaries[lang];
  const t = linkPageDictionaries[lang];
  const base = {
    status,
    template: `${VIEWS}/link`,
    choice: context.choice,
    path: context.path,
    assets: linkAssets,
    languagesLabel: c.languages,
  };
  const data: LinkViewData = {
    t,
    c,
    link: null,
    problem: null,
    stateText: '',
    bounds: null,
    testView: null,
    testModePartial: TEST_MODE_PARTIAL,
    nameMax: PAYER_NAME_MAX,
    noteMax: PAYER_NOTE_MAX,
  };
  if (content === 'NOT_FOUND' || content === 'RATE_LIMITED') {
    return { ...base, title: c.pageTitle, data: { ...data, problem: content } };
  }
  const { slug, view } = content;
  const payable = view.refusal === null;
  const refusalText =
    view.refusal === null ? undefined : isPayerRefusal(view.refusal) ? REFUSAL_TEXTS[view.refusal] : 'notTaking';
  const page: CustomerPage = {
    ...base,
    title: fillText(c.pageTitleFor, { merchant: view.merchantName }),
    data: {
      ...data,
      link: view,
      stateText: refusalText ? fillText(t[refusalText], { merchant: view.merchantName }) : '',
      bounds: view.amountType === 'OPEN' ? boundsParts(t, view, lang) : null,
      testView: {
        sandbox: view.sandbox,
        state: payable ? 'PAYABLE' : 'CLOSED',
        testWallets: view.sandbox ? SANDBOX_WALLETS : [],
      },
    } satisfies LinkViewData,
  };
  if (!payable) return page;
  return {
    ...page,
    scripts: ['link.js'],
    pageData: {
      slug,
      lang,
      open: view.amountType === 'OPEN',
      minAmount: view.minAmount,
      maxAmount: view.maxAmount,
      collectName: view.collect.name,
      texts: { pay: c.pay, paying: c.paying },
      errors: linkClientErrors(c, t, view, lang),
    },
  };
}

/** What the poster draws, besides the page helpers: the link, its QR and its address. */
export interface PosterContent {
  slug: string;
  url: string;
  view: PayerLinkView;
}

/**
 * `GET /l/{slug}/poster`: an A5 page to print and stick by the till: the shop, the label, the
 * amount (or "amount of your choice"), the QR code, the address, and how to pay, in one language.
 * No script; its own stylesheet, with the page size for print.
 */
export function posterHtml(context: PageContext, poster: PosterContent, nonce: string): string {
  const { lang } = context.choice;
  const c = checkoutDictionaries[lang];
  const t = linkPageDictionaries[lang];
  const { view } = poster;
  return renderView(`${VIEWS}/poster`, {
    t,
    c,
    lang,
    dir: textDirection(lang),
    nonce,
    title: fillText(t.posterTitle, { label: view.label }),
    stylesheet: linkAssets.url('poster.css'),
    languages: languageLinks(context.path, lang).map((link) => ({ ...link, dir: textDirection(link.lang) })),
    link: view,
    amount: view.amountType === 'FIXED' && view.amount !== null ? formatPageAmount(view.amount, lang) : null,
    qrSrc: `/l/${encodeURIComponent(poster.slug)}/qr.svg`,
    url: poster.url,
    bounds: view.amountType === 'OPEN' ? boundsParts(t, view, lang) : null,
    textPartial: TEXT_PARTIAL,
  });
}
