import type { ErrorCode } from '../../http/errors.js';
import { escapeHtml, scriptJson } from '../../lib/html.js';
import {
  amountHtml,
  fillHtml,
  fillText,
  formatNumber,
  formattingScript,
  isolatedHtml,
  languageLinksHtml,
  ltrHtml,
  textDirection,
  type Dictionary,
  type Lang,
  type LangChoice,
} from '../../lib/i18n.js';
import { MAX_PIN_ATTEMPTS, PIN_LOCK_MINUTES } from '../wallets/service.js';
import { checkoutDictionaries, type CheckoutText } from './i18n.js';
import type { CheckoutView } from './service.js';

type Texts = Dictionary<CheckoutText>;

/** What every page render needs: the language chosen, the page's own path (for the language links), the script nonce. */
export interface PageContext {
  choice: LangChoice;
  path: string;
  nonce: string;
}

/** The texts the browser shows after an answer of the checkout API: a receipt, a button's state. */
function clientTexts(t: Texts) {
  return {
    pay: t.pay,
    paying: t.paying,
    paid: t.paid,
    receipt: t.receipt,
    reference: t.reference,
    amount: t.amount,
    paidAt: t.paidAt,
    payer: t.payer,
    redirecting: t.redirecting,
  };
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

function clientErrors(t: Texts, lang: Lang) {
  const errors: Record<string, string> = {};
  for (const [code, key] of Object.entries(API_ERROR_TEXTS)) errors[code] = text(t, key, lang);
  for (const [field, key] of Object.entries(FIELD_ERROR_TEXTS))
    errors[`VALIDATION_ERROR:${field}`] = text(t, key, lang);
  return { byCode: errors, amount: t.errAmountInvalid, generic: t.errGeneric };
}

const STYLE = `
*{box-sizing:border-box}body{margin:0;font:16px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans Arabic",sans-serif;background:#f4f5f7;color:#1b1f24}
main{max-width:26rem;margin:0 auto;padding:1rem}
.langs{display:flex;gap:.9rem;justify-content:flex-end;font-size:.9rem;margin-bottom:.5rem}.langs a{color:#0b6e4f}.langs span{color:#5a6270}
.card{background:#fff;border-radius:12px;padding:1.25rem;box-shadow:0 1px 3px rgba(0,0,0,.08);margin-top:1rem}
.test{background:#ffe8a3;color:#5c4400;padding:.6rem 1rem;font-weight:700;text-align:center;border-radius:8px}
h1{font-size:1.15rem;margin:0 0 .25rem}.merchant{color:#5a6270;margin:0}.amount{font-size:2rem;font-weight:700;margin:.75rem 0}
label{display:block;font-weight:600;margin:.9rem 0 .3rem}input{width:100%;font-size:1.1rem;padding:.7rem;border:1px solid #c6ccd5;border-radius:8px}
[dir=rtl] input[dir=ltr]{text-align:right}
button{width:100%;margin-top:1.2rem;padding:.85rem;font-size:1.1rem;font-weight:700;border:0;border-radius:8px;background:#0b6e4f;color:#fff}
button[disabled]{opacity:.6}.secondary{display:block;text-align:center;margin-top:.9rem;color:#5a6270}
.error{color:#b3261e;font-weight:600;min-height:1.4rem;margin-top:.8rem}.state{font-size:1.1rem;font-weight:600}
dl{display:grid;grid-template-columns:auto 1fr;gap:.3rem .8rem;margin:.5rem 0 0}dt{color:#5a6270}dd{margin:0;word-break:break-all}
.wallets{font-size:.9rem}.wallets li{margin:.2rem 0}.money{white-space:nowrap}
`;

/**
 * The page's Content-Security-Policy: only the style and scripts carrying this response's nonce
 * run (no 'unsafe-inline'), fetches go to this origin only, and no site may frame the page.
 */
export function pageCsp(nonce: string): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src 'nonce-${nonce}'`,
    "connect-src 'self'",
    "img-src 'self'",
    "form-action 'self'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

function layout(context: PageContext, title: string, body: string): string {
  const { lang } = context.choice;
  return `<!doctype html>
<html lang="${lang}" dir="${textDirection(lang)}">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex"><title>${escapeHtml(title)}</title><style nonce="${context.nonce}">${STYLE}</style></head>
<body><main>${languageLinksHtml(context.path, lang)}${body}</main></body></html>`;
}

/** A message in place of a page (not found, rate limited), with the state the tests and scripts read. */
function stateCard(state: string, messageHtml: string): string {
  return `<section class="card"><p class="state" id="state" data-state="${state}" role="status">${messageHtml}</p></section>`;
}

/** Pays through the checkout API, then shows the receipt; every text comes from the page's data. */
function payScript(lang: Lang): string {
  return `
const DATA=JSON.parse(document.getElementById('page-data').textContent);
const T=DATA.texts;const ERRORS=DATA.errors;
${formattingScript(lang)}
function centimes(text){const m=/^\\s*(\\d{1,9})(?:[.,](\\d{1,2}))?\\s*$/.exec(text||'');return m?Number(m[1])*100+Number((m[2]||'').padEnd(2,'0')):null}
function errorText(json){
  const e=json&&json.error;if(!e)return ERRORS.generic;
  const field=e.details&&e.details[0]&&e.details[0].field;
  return (field&&ERRORS.byCode[e.code+':'+field])||ERRORS.byCode[e.code]||ERRORS.generic;
}
function row(dl,id,label,value,ltr){
  const dt=document.createElement('dt');dt.textContent=label;
  const dd=document.createElement('dd');dd.id=id;const b=document.createElement('bdi');if(ltr)b.dir='ltr';b.textContent=value;dd.appendChild(b);
  dl.append(dt,dd);
}
function receipt(view){
  const r=view.receipt;const el=document.createElement('section');el.className='card';el.id='receipt';el.setAttribute('role','status');
  const state=document.createElement('p');state.className='state';state.textContent=T.paid;
  const title=document.createElement('h2');title.textContent=T.receipt;
  const dl=document.createElement('dl');
  row(dl,'r-ref',T.reference,r.reference,true);row(dl,'r-amount',T.amount,formatAmount(r.amountPaid),false);
  row(dl,'r-at',T.paidAt,formatDateTime(r.paidAt),false);row(dl,'r-payer',T.payer,r.payerPhone,true);
  el.append(state,title,dl);
  if(view.successUrl){const next=document.createElement('p');next.className='secondary';next.id='r-next';next.textContent=T.redirecting;el.append(next);setTimeout(()=>{location.href=view.successUrl},1500)}
  return el;
}
let payKey=null;
function newKey(){return Array.from(crypto.getRandomValues(new Uint8Array(16)),b=>b.toString(16).padStart(2,'0')).join('')}
async function pay(form){
  const error=form.querySelector('.error');const button=form.querySelector('button');error.textContent='';
  const body={phone:form.phone.value.trim(),pin:form.pin.value};
  if(DATA.open){const c=centimes(form.amount.value);if(c===null){error.textContent=ERRORS.amount;return}body.amount=c}
  button.disabled=true;button.textContent=T.paying;
  // One key per attempt: sent again only when no answer came back, so a retry after a lost
  // answer gets the first attempt's answer (the receipt), not "this payment can no longer be paid".
  payKey=payKey||newKey();
  try{
    const res=await fetch('/checkout/intents/'+encodeURIComponent(DATA.shortCode)+'/pay',{method:'POST',headers:{'content-type':'application/json','x-idempotency-key':payKey},body:JSON.stringify(body)});
    payKey=null;
    const json=await res.json();
    if(!res.ok){error.textContent=errorText(json);return}
    form.closest('.card').replaceWith(receipt(json.data));
  }catch(e){error.textContent=ERRORS.generic}
  finally{button.disabled=false;button.textContent=T.pay}
}
const form=document.getElementById('pay-form');
form.addEventListener('submit',e=>{e.preventDefault();pay(form)});`;
}

function testBanner(t: Texts, lang: Lang, view: CheckoutView): string {
  if (!view.sandbox) return '';
  const wallets = view.testWallets
    .map(
      (wallet) =>
        `<li>${fillHtml(t.testWallet, {
          phone: ltrHtml(wallet.phone),
          pin: ltrHtml(wallet.pin),
          state: wallet.locked
            ? escapeHtml(t.walletLocked)
            : fillHtml(t.walletBalance, { amount: amountHtml(wallet.balance, lang) }),
        })}</li>`,
    )
    .join('');
  return `<p class="test" role="note">${escapeHtml(t.testMode)}</p>
<details class="card wallets"><summary>${escapeHtml(t.testWallets)}</summary><ul>${wallets}</ul></details>`;
}

/** The amount a customer types is read as MRU with a dot or a comma; digits read left to right in every language. */
function payForm(t: Texts, view: CheckoutView): string {
  const open = view.amountType === 'OPEN';
  const suggested =
    view.suggestedAmount !== null
      ? `${Math.floor(view.suggestedAmount / 100)}.${String(view.suggestedAmount % 100).padStart(2, '0')}`
      : '';
  return `<form id="pay-form" novalidate>
${open ? `<label for="amount">${escapeHtml(t.amountToPay)}</label><input id="amount" name="amount" dir="ltr" inputmode="decimal" autocomplete="off" required value="${suggested}">` : ''}
<label for="phone">${escapeHtml(t.phone)}</label><input id="phone" name="phone" dir="ltr" type="tel" inputmode="tel" autocomplete="tel" placeholder="+222..." required>
<label for="pin">${escapeHtml(t.pin)}</label><input id="pin" name="pin" dir="ltr" type="password" inputmode="numeric" autocomplete="off" maxlength="6" required>
<div class="error" role="alert" aria-live="assertive"></div>
<button type="submit">${escapeHtml(t.pay)}</button>
${view.cancelUrl ? `<a class="secondary" id="cancel" href="${escapeHtml(view.cancelUrl)}">${escapeHtml(t.cancel)}</a>` : ''}
</form>`;
}

function summary(t: Texts, lang: Lang, view: CheckoutView): string {
  const amount = view.amount !== null ? `<p class="amount" id="amount-due">${amountHtml(view.amount, lang)}</p>` : '';
  const fee =
    view.payerFee > 0
      ? `<p class="merchant" id="fee">${fillHtml(t.feeLine, { amount: amountHtml(view.payerFee, lang) })}</p>`
      : '';
  return `<h1 id="label">${escapeHtml(view.label || view.merchantName)}</h1>
<p class="merchant" id="merchant">${fillHtml(t.merchantLine, { merchant: isolatedHtml(view.merchantName) })}</p>${amount}${fee}`;
}

function stateMessageHtml(t: Texts, lang: Lang, view: CheckoutView): string {
  switch (view.state) {
    case 'PAYABLE':
      return '';
    case 'PAID':
      return escapeHtml(t.alreadyPaid);
    case 'EXPIRED':
      return escapeHtml(t.expired);
    case 'CANCELLED':
      return escapeHtml(t.cancelled);
    case 'REFUNDED': {
      const paid = view.receipt?.amountPaid ?? view.amountRefunded;
      const values = { paid: amountHtml(paid, lang), refunded: amountHtml(view.amountRefunded, lang) };
      return view.amountRefunded < paid ? fillHtml(t.refundedPart, values) : fillHtml(t.refundedFull, values);
    }
  }
}

/** What `GET /p/{shortCode}` shows: the intent, or why there is none to show. */
export type CheckoutPageContent = CheckoutView | 'NOT_FOUND' | 'RATE_LIMITED';

/** `GET /p/{shortCode}`: the hosted checkout page. */
export function checkoutPage(context: PageContext, content: CheckoutPageContent): string {
  const { lang } = context.choice;
  const t = checkoutDictionaries[lang];
  if (content === 'NOT_FOUND') return layout(context, t.pageTitle, stateCard('NOT_FOUND', escapeHtml(t.notFound)));
  if (content === 'RATE_LIMITED')
    return layout(context, t.pageTitle, stateCard('RATE_LIMITED', escapeHtml(t.rateLimited)));
  const view = content;
  const title = fillText(t.pageTitleFor, { merchant: view.merchantName });
  if (view.state !== 'PAYABLE') {
    const state = `<p class="state" id="state" data-state="${view.state}" role="status">${stateMessageHtml(t, lang, view)}</p>`;
    return layout(
      context,
      title,
      `${testBanner(t, lang, view)}<section class="card">${summary(t, lang, view)}${state}</section>`,
    );
  }
  const data = {
    shortCode: view.shortCode,
    open: view.amountType === 'OPEN',
    texts: clientTexts(t),
    errors: clientErrors(t, lang),
  };
  return layout(
    context,
    title,
    `${testBanner(t, lang, view)}<section class="card">${summary(t, lang, view)}${payForm(t, view)}</section>
<script type="application/json" id="page-data" nonce="${context.nonce}">${scriptJson(data)}</script>
<script nonce="${context.nonce}">${payScript(lang)}</script>`,
  );
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
  form: { sandbox: boolean; code?: string | undefined; problem?: CodeProblem | undefined },
): string {
  const { lang } = context.choice;
  const t = checkoutDictionaries[lang];
  const banner = form.sandbox ? `<p class="test" role="note">${escapeHtml(t.testMode)}</p>` : '';
  const hidden = [
    form.sandbox ? '<input type="hidden" name="mode" value="test">' : '',
    context.choice.fromQuery ? `<input type="hidden" name="lang" value="${lang}">` : '',
  ].join('');
  const problem = form.problem ? escapeHtml(t[CODE_PROBLEM_TEXTS[form.problem]]) : '';
  return layout(
    context,
    t.codeTitle,
    `${banner}<section class="card" id="code-card"><h1>${escapeHtml(t.codeTitle)}</h1>
<form id="code-form" action="/pay" method="get" novalidate>${hidden}<label for="code">${escapeHtml(t.code)}</label>
<input id="code" name="code" dir="ltr" inputmode="numeric" maxlength="6" autocomplete="one-time-code" required value="${escapeHtml(form.code ?? '')}">
<div class="error" role="alert" aria-live="assertive"${form.problem ? ` data-problem="${form.problem}"` : ''}>${problem}</div>
<button type="submit">${escapeHtml(t.find)}</button></form></section>`,
  );
}
