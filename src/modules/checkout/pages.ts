import type { ErrorCode } from '../../http/errors.js';
import { assetFolder, besideModule, SHARED_ASSETS_DIR, templateFolder, type CustomerPage } from '../../http/views.js';
import { fillText, formatNumber, keepLang, type Dictionary, type Lang, type LangChoice } from '../../lib/i18n.js';
import { MAX_PIN_ATTEMPTS, PIN_LOCK_MINUTES } from '../wallets/service.js';
import { checkoutDictionaries, type CheckoutText } from './i18n.js';
import type { CheckoutView } from './service.js';

type Texts = Dictionary<CheckoutText>;

/** The checkout's scripts and the shared stylesheet, served under /checkout/assets/. */
export const checkoutAssets = assetFolder('/checkout/assets', [
  besideModule(import.meta.url, 'assets'),
  SHARED_ASSETS_DIR,
]);
const VIEWS = templateFolder(import.meta.url);

/** What every page render needs: the language chosen and the page's own path (for the language links). */
export interface PageContext {
  choice: LangChoice;
  path: string;
}

/** The page's text for each error `code` the checkout API answers; the API's English `message` is never shown. */
const API_ERROR_TEXTS: Partial<Record<ErrorCode, CheckoutText>> = {
  INVALID_PIN: 'errInvalidPin',
  // Only when a wallet disappears mid-payment; told apart from a wrong PIN by no one.
  WALLET_NOT_FOUND: 'errInvalidPin',
  WALLET_LOCKED: 'errWalletLocked',
  INSUFFICIENT_BALANCE: 'errInsufficientBalance',
  PAYMENT_FAILED: 'errPaymentFailed',
  INTENT_NOT_PENDING: 'errNotPayable',
  INTENT_NOT_FOUND: 'notFound',
  RATE_LIMITED: 'rateLimited',
  AMOUNT_OUT_OF_RANGE: 'errAmountOutOfRange',
};

/** VALIDATION_ERROR by the field its first detail names. */
const FIELD_ERROR_TEXTS: Record<string, CheckoutText> = {
  'body.phone': 'errPhoneInvalid',
  'body.pin': 'errPinInvalid',
  'body.amount': 'errAmountInvalid',
};

/** A dictionary text with the values every page may quote (the PIN lock rule) filled in. */
function text(t: Texts, key: CheckoutText, lang: Lang): string {
  return fillText(t[key], {
    attempts: formatNumber(MAX_PIN_ATTEMPTS, lang),
    minutes: formatNumber(PIN_LOCK_MINUTES, lang),
  });
}

/** Every API error the checkout words, by code (and field), as a page script reads them. */
export function clientErrors(t: Texts, lang: Lang) {
  const byCode: Record<string, string> = {};
  for (const [code, key] of Object.entries(API_ERROR_TEXTS)) byCode[code] = text(t, key, lang);
  for (const [field, key] of Object.entries(FIELD_ERROR_TEXTS))
    byCode[`VALIDATION_ERROR:${field}`] = text(t, key, lang);
  return { byCode, generic: t.errGeneric };
}

/** Where a customer enters a payment code instead, in the page's language and mode. */
function codePath(context: PageContext, sandbox: boolean): string {
  return keepLang(sandbox ? '/pay?mode=test' : '/pay', context.choice);
}

/** What each checkout template draws: its view model, checked where the page is built. */
interface CheckoutViews {
  checkout: {
    t: Texts;
    view: CheckoutView | null;
    problem: Exclude<CheckoutPageContent, CheckoutView> | null;
    codePath: string;
  };
  'pay-by-code': {
    t: Texts;
    sandbox: boolean;
    langInForm: boolean;
    code: string;
    problem: CodeProblem | null;
    problemText: string;
  };
}

function page<K extends keyof CheckoutViews>(
  context: PageContext,
  template: K,
  title: string,
  rest: Omit<Partial<CustomerPage>, 'data'> & { data: CheckoutViews[K] },
): CustomerPage {
  const t = checkoutDictionaries[context.choice.lang];
  return {
    status: 200,
    template: `${VIEWS}/${template}`,
    choice: context.choice,
    path: context.path,
    title,
    assets: checkoutAssets,
    languagesLabel: t.languages,
    ...rest,
  };
}

/** What `GET /p/{shortCode}` shows: the intent, or why there is none to show. */
export type CheckoutPageContent = CheckoutView | 'NOT_FOUND' | 'RATE_LIMITED';

/**
 * `GET /p/{shortCode}`: the hosted checkout page. Payable: the form, paid through the checkout
 * API by the page's script. Paid or refunded: the receipt, drawn here, so the same link shows it
 * again on every reload. Expired or cancelled: what to do next.
 */
export function checkoutPage(context: PageContext, status: number, content: CheckoutPageContent): CustomerPage {
  const { lang } = context.choice;
  const t = checkoutDictionaries[lang];
  if (content === 'NOT_FOUND' || content === 'RATE_LIMITED') {
    return page(context, 'checkout', t.pageTitle, {
      status,
      data: { t, view: null, problem: content, codePath: codePath(context, false) },
    });
  }
  const view = content;
  const data = { t, view, problem: null, codePath: codePath(context, view.sandbox) };
  const title = fillText(t.pageTitleFor, { merchant: view.merchantName });
  if (view.state === 'PAYABLE') {
    return page(context, 'checkout', title, {
      status,
      data,
      scripts: ['checkout.js'],
      pageData: {
        shortCode: view.shortCode,
        open: view.amountType === 'OPEN',
        texts: { pay: t.pay, paying: t.paying },
        errors: clientErrors(t, lang),
      },
    });
  }
  // A receipt that follows success_url once, right after paying (the script knows it just paid).
  const pageData =
    view.receipt && view.successUrl ? { shortCode: view.shortCode, successUrl: view.successUrl } : undefined;
  return page(context, 'checkout', title, {
    status,
    data,
    ...(pageData ? { pageData, scripts: ['checkout.js'] } : {}),
  });
}

/** Why a code could not be followed: the page says so in its language. */
export type CodeProblem = 'INVALID' | 'NOT_FOUND' | 'RATE_LIMITED';

const CODE_PROBLEM_TEXTS: Record<CodeProblem, CheckoutText> = {
  INVALID: 'codeInvalid',
  NOT_FOUND: 'codeNotFound',
  RATE_LIMITED: 'rateLimited',
};

/**
 * `GET /pay`: enter the 6-digit code. A plain form (no script): the server looks the code up and
 * redirects to the intent's checkout page, or shows this form again with what went wrong.
 */
export function payByCodePage(
  context: PageContext,
  status: number,
  form: { sandbox: boolean; code?: string | undefined; problem?: CodeProblem | undefined },
): CustomerPage {
  const t = checkoutDictionaries[context.choice.lang];
  return page(context, 'pay-by-code', t.codeTitle, {
    status,
    data: {
      t,
      sandbox: form.sandbox,
      langInForm: context.choice.fromQuery,
      code: form.code ?? '',
      problem: form.problem ?? null,
      problemText: form.problem ? t[CODE_PROBLEM_TEXTS[form.problem]] : '',
    },
  });
}
