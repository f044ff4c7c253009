import type { OrderStatus } from '../../db/schema.js';
import type { ErrorCode } from '../../http/errors.js';
import { escapeHtml, scriptJson } from '../../lib/html.js';
import {
  amountHtml,
  fillHtml,
  formatAmount,
  formattingScript,
  isolatedHtml,
  keepLang,
  languageLinksHtml,
  ltrHtml,
  textDirection,
  type Dictionary,
  type Lang,
  type LangChoice,
} from '../../lib/i18n.js';
import { storefrontDictionaries, type StorefrontText } from './i18n.js';
import type { CatalogView, CustomerOrderView } from './service.js';

type Texts = Dictionary<StorefrontText>;

/** What every page render needs: the language chosen, the page's own path (for the language links), the script nonce. */
export interface PageContext {
  choice: LangChoice;
  path: string;
  nonce: string;
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

/** The page's text for each error `code` the storefront API answers; the API's English `message` is never shown. */
const API_ERROR_TEXTS: Partial<Record<ErrorCode, StorefrontText>> = {
  INVALID_PIN: 'errInvalidPin',
  WALLET_NOT_FOUND: 'errInvalidPin',
  WALLET_LOCKED: 'errWalletLocked',
  INSUFFICIENT_BALANCE: 'errInsufficientBalance',
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

/** Reads an API error answer as the page's own text (in the browser). */
const ERROR_SCRIPT = `function errorText(json){
  const e=json&&json.error;if(!e)return ERRORS.generic;
  let field=e.details&&e.details[0]&&e.details[0].field;if(field&&/^body\\.items\\.\\d+\\.price$/.test(field))field='price';
  return (field&&ERRORS.byCode[e.code+':'+field])||ERRORS.byCode[e.code]||ERRORS.generic;
}`;

/** The hosted checkout's look (src/modules/checkout/pages.ts), widened for a catalog on desktop. */
const STYLE = `
[hidden]{display:none!important}*{box-sizing:border-box}body{margin:0;font:16px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans Arabic",sans-serif;background:#f4f5f7;color:#1b1f24}
main{max-width:26rem;margin:0 auto;padding:1rem}main.wide{max-width:64rem}
.card{background:#fff;border-radius:12px;padding:1.25rem;box-shadow:0 1px 3px rgba(0,0,0,.08);margin-top:1rem}
.test{background:#ffe8a3;color:#5c4400;padding:.6rem 1rem;font-weight:700;text-align:center;border-radius:8px}
h1{font-size:1.15rem;margin:0 0 .25rem}h2{font-size:1.05rem;margin:0 0 .5rem}.muted{color:#5a6270;margin:0}
.amount{font-size:1.6rem;font-weight:700;margin:.5rem 0}
label{display:block;font-weight:600;margin:.9rem 0 .3rem}input,select{width:100%;font-size:1.05rem;padding:.6rem;border:1px solid #c6ccd5;border-radius:8px;background:#fff}
label.check{display:flex;gap:.5rem;align-items:center;font-weight:400;margin:.3rem 0}label.check input{width:auto}
button{width:100%;margin-top:1rem;padding:.8rem;font-size:1.05rem;font-weight:700;border:0;border-radius:8px;background:#0b6e4f;color:#fff;cursor:pointer}
button[disabled]{opacity:.6;cursor:default}button.plain{background:#e8ebef;color:#1b1f24}button.danger{background:#b3261e}
.error{color:#b3261e;font-weight:600;min-height:1.4rem;margin-top:.8rem}.state{font-size:1.1rem;font-weight:600}
dl{display:grid;grid-template-columns:auto 1fr;gap:.3rem .8rem;margin:.5rem 0 0}dt{color:#5a6270}dd{margin:0;word-break:break-word}
.wallets{font-size:.9rem}.wallets li{margin:.2rem 0}.money{white-space:nowrap}
.langs{display:flex;gap:.9rem;justify-content:flex-end;font-size:.9rem;margin-bottom:.5rem}.langs a{color:#0b6e4f}.langs span{color:#5a6270}
[dir=rtl] input[dir=ltr]{text-align:right}
.grid{display:grid;gap:1rem}.layout{display:grid;gap:1rem}
@media (min-width:48rem){.grid{grid-template-columns:repeat(2,1fr)}.layout{grid-template-columns:2fr 1fr;align-items:start}.layout aside{position:sticky;top:1rem}}
.product{margin-top:0}.product img{width:100%;aspect-ratio:4/3;object-fit:cover;border-radius:8px;background:#e8ebef}
.price{font-weight:700;margin:.3rem 0}.out{color:#b3261e;font-weight:600}
.lines{list-style:none;padding:0;margin:.5rem 0}.lines li{display:flex;justify-content:space-between;gap:.5rem;padding:.4rem 0;border-bottom:1px solid #eef0f3}
.lines button{width:auto;margin:0;padding:.2rem .6rem;font-size:.85rem}
.totals{display:flex;justify-content:space-between;margin:.25rem 0}.totals.big{font-weight:700;font-size:1.15rem}
form.search{display:flex;gap:.5rem}form.search button{width:auto;margin:0}
`;

/**
 * The pages' Content-Security-Policy: only the style and scripts carrying this response's nonce
 * run, fetches go to this origin only, images come from this origin (uploads) or any https host
 * (a merchant's image URLs), and no site may frame the page.
 */
export function storefrontCsp(nonce: string): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src 'nonce-${nonce}'`,
    "connect-src 'self'",
    "img-src 'self' https:",
    "form-action 'self'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

function layout(context: PageContext, title: string, body: string, wide = false): string {
  const { lang } = context.choice;
  return `<!doctype html>
<html lang="${lang}" dir="${textDirection(lang)}">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex"><title>${escapeHtml(title)}</title><style nonce="${context.nonce}">${STYLE}</style></head>
<body><main${wide ? ' class="wide"' : ''}>${languageLinksHtml(context.path, lang)}${body}</main></body></html>`;
}

function stateCard(messageHtml: string): string {
  return `<section class="card"><p class="state" id="state" role="status">${messageHtml}</p></section>`;
}

/** The data a page's script reads: never inline code, so texts stay visible to the language checks. */
function dataBlock(context: PageContext, data: unknown): string {
  return `<script type="application/json" id="page-data" nonce="${context.nonce}">${scriptJson(data)}</script>`;
}

function testBanner(t: Texts, sandbox: boolean, wallets: CatalogView['testWallets']): string {
  if (!sandbox) return '';
  const items = wallets
    .map(
      (wallet) =>
        `<li>${fillHtml(wallet.locked ? t.testWalletLocked : t.testWallet, {
          phone: ltrHtml(wallet.phone),
          pin: ltrHtml(wallet.pin),
        })}</li>`,
    )
    .join('');
  return `<p class="test" role="note">${escapeHtml(t.testMode)}</p>${
    items
      ? `<details class="card wallets"><summary>${escapeHtml(t.testWallets)}</summary><ul>${items}</ul></details>`
      : ''
  }`;
}

/** A signed price adjustment, in the page's amount format. */
function adjustmentText(centimes: number, lang: Lang): string {
  return `${centimes > 0 ? '+' : '−'}${formatAmount(Math.abs(centimes), lang)}`;
}

/** A price the customer types: MRU with a dot, read left to right in every language. */
function plainMru(centimes: number): string {
  return `${Math.floor(centimes / 100)}.${String(centimes % 100).padStart(2, '0')}`;
}

function productCard(t: Texts, lang: Lang, product: CatalogView['items'][number]): string {
  const image = product.images[0] ? `<img src="${escapeHtml(product.images[0].url)}" alt="">` : '';
  const variants = product.variants.length
    ? `<label>${escapeHtml(t.variant)}<select name="variant">${product.variants
        .map(
          (v) =>
            `<option value="${escapeHtml(v._id)}"${v.inStock ? '' : ' disabled'}>${escapeHtml(v.label)}${
              v.priceAdjustment ? ` (${escapeHtml(adjustmentText(v.priceAdjustment, lang))})` : ''
            }${v.inStock ? '' : ` · ${escapeHtml(t.outOfStock)}`}</option>`,
        )
        .join('')}</select></label>`
    : '';
  const options = product.options.length
    ? `<fieldset><legend>${escapeHtml(t.options)}</legend>${product.options
        .map(
          (o) =>
            `<label class="check"><input type="checkbox" name="option" value="${escapeHtml(o._id)}">${isolatedHtml(o.name)} <bdi>${escapeHtml(adjustmentText(o.priceAdjustment, lang))}</bdi></label>`,
        )
        .join('')}</fieldset>`
    : '';
  const flexible = product.isFlexiblePrice
    ? `<label>${fillHtml(t.yourPrice, { amount: amountHtml(product.price, lang) })}<input name="price" dir="ltr" inputmode="decimal" value="${plainMru(product.price)}"></label>`
    : '';
  const orderable = product.inStock && (product.variants.length === 0 || product.variants.some((v) => v.inStock));
  const form = orderable
    ? `<form class="add-form" novalidate>${variants}${options}${flexible}
<label>${escapeHtml(t.quantity)}<input name="quantity" type="number" dir="ltr" min="1" max="1000" value="1" inputmode="numeric"></label>
<button type="submit" class="add">${escapeHtml(t.addToCart)}</button></form>`
    : `<p class="out" role="status">${escapeHtml(t.outOfStock)}</p>`;
  return `<article class="card product" data-id="${escapeHtml(product.id)}">${image}<h2>${isolatedHtml(product.name)}</h2>
${product.description ? `<p class="muted">${isolatedHtml(product.description)}</p>` : ''}<p class="price">${amountHtml(product.price, lang)}</p>${form}</article>`;
}

/** The storefront's script: a cart in the page, priced by the server, paid with phone + PIN. */
function storefrontScript(lang: Lang): string {
  return `
const DATA=JSON.parse(document.getElementById('page-data').textContent);
const T=DATA.texts;const ERRORS=DATA.errors;const cart=[];
${formattingScript(lang)}
${ERROR_SCRIPT}
function centimes(text){const m=/^\\s*(\\d{1,9})(?:[.,](\\d{1,2}))?\\s*$/.exec(text||'');return m?Number(m[1])*100+Number((m[2]||'').padEnd(2,'0')):null}
function api(path,body,key){const headers={'content-type':'application/json'};if(key)headers['x-idempotency-key']=key;return fetch(path+'?mode='+DATA.mode,{method:'POST',headers,body:JSON.stringify(body)}).then(async r=>({ok:r.ok,json:await r.json()}))}
let orderKey=null;
function newKey(){return Array.from(crypto.getRandomValues(new Uint8Array(16)),b=>b.toString(16).padStart(2,'0')).join('')}
function items(){return cart.map(l=>{const i={productId:l.productId,quantity:l.quantity};if(l.variantId)i.variantId=l.variantId;if(l.optionIds.length)i.optionIds=l.optionIds;if(l.price!==undefined)i.price=l.price;return i})}
async function renderCart(){
  const list=document.getElementById('cart-lines');const error=document.getElementById('cart-error');const form=document.getElementById('checkout-form');
  list.textContent='';error.textContent='';
  document.getElementById('cart-empty').hidden=cart.length>0;form.hidden=cart.length===0;document.getElementById('cart-totals').hidden=cart.length===0;
  orderKey=null;
  if(!cart.length)return;
  let quote;try{quote=await api('/storefront/shops/'+encodeURIComponent(DATA.shopId)+'/quote',{items:items()})}catch(e){error.textContent=ERRORS.generic;return}
  cart.forEach((l,i)=>{const li=document.createElement('li');const name=document.createElement('bdi');
    name.textContent=l.quantity+' × '+l.label;const right=document.createElement('span');
    const amount=document.createElement('bdi');amount.className='money line-total';
    if(quote.ok)amount.textContent=formatAmount(quote.json.data.items[i].lineTotal);
    const remove=document.createElement('button');remove.type='button';remove.className='plain';remove.textContent=T.remove;
    remove.addEventListener('click',()=>{cart.splice(i,1);renderCart()});right.append(amount,' ',remove);li.append(name,right);list.append(li)});
  if(!quote.ok){error.textContent=errorText(quote.json);return}
  const q=quote.json.data;document.getElementById('subtotal').textContent=formatAmount(q.totalAmount);
  document.getElementById('fee').textContent=formatAmount(q.payerFee);document.getElementById('fee-row').hidden=q.payerFee===0;
  document.getElementById('total-to-pay').textContent=formatAmount(q.totalToPay);
}
document.querySelectorAll('.add-form').forEach(form=>form.addEventListener('submit',e=>{
  e.preventDefault();const card=form.closest('.product');const p=DATA.products.find(x=>x.id===card.dataset.id);
  const line={productId:p.id,quantity:Math.max(1,Math.min(1000,Number(form.quantity.value)||1)),optionIds:[],label:p.name};
  if(form.variant){line.variantId=form.variant.value;const v=p.variants.find(x=>x._id===line.variantId);if(v)line.label+=' ('+v.label+')'}
  form.querySelectorAll('input[name=option]:checked').forEach(o=>{line.optionIds.push(o.value);const x=p.options.find(y=>y._id===o.value);if(x)line.label+=' + '+x.name});
  if(form.price){const c=centimes(form.price.value);if(c===null){document.getElementById('cart-error').textContent=ERRORS.byCode['VALIDATION_ERROR:price'];return}line.price=c}
  cart.push(line);const button=form.querySelector('button');button.textContent=T.added;setTimeout(()=>{button.textContent=T.addToCart},1200);renderCart();
}));
document.getElementById('checkout-form').addEventListener('submit',async e=>{
  e.preventDefault();const f=e.target;const error=document.getElementById('cart-error');const button=f.querySelector('button');error.textContent='';
  button.disabled=true;button.textContent=T.placing;
  try{
    orderKey=orderKey||newKey();
    const res=await api('/storefront/shops/'+encodeURIComponent(DATA.shopId)+'/orders',{items:items(),customerName:f.customerName.value.trim(),phone:f.phone.value.trim(),pin:f.pin.value},orderKey);
    if(!res.ok){error.textContent=errorText(res.json);return}
    location.href=DATA.orderPath.replace('{ref}',encodeURIComponent(res.json.data.orderRef));
  }catch(err){error.textContent=ERRORS.generic}finally{button.disabled=false;button.textContent=T.placeOrder}
});
renderCart();`;
}

/** `GET /s/{shopId}`: the hosted storefront (catalog, search, cart, order and pay). */
export function storefrontPage(
  context: PageContext,
  view: CatalogView | null,
  page: { mode: 'test' | 'live'; search: string; rateLimited?: boolean },
): string {
  const { lang } = context.choice;
  const t = storefrontDictionaries[lang];
  if (!view) {
    return layout(context, t.shopTitle, stateCard(escapeHtml(page.rateLimited ? t.rateLimited : t.shopNotFound)));
  }
  const products = view.items.length
    ? `<div class="grid" id="products">${view.items.map((p) => productCard(t, lang, p)).join('')}</div>`
    : `<p class="card muted" id="no-products">${escapeHtml(t.noProducts)}</p>`;
  const hidden = `${context.choice.fromQuery ? `<input type="hidden" name="lang" value="${lang}">` : ''}${
    page.mode === 'test' ? '<input type="hidden" name="mode" value="test">' : ''
  }`;
  const data = {
    shopId: view.shopId,
    mode: page.mode,
    orderPath: keepLang('/o/{ref}', context.choice).replace('%7Bref%7D', '{ref}'),
    texts: { remove: t.remove, added: t.added, addToCart: t.addToCart, placing: t.placing, placeOrder: t.placeOrder },
    errors: clientErrors(t),
    products: view.items.map((p) => ({
      id: p.id,
      name: p.name,
      variants: p.variants.map((v) => ({ _id: v._id, label: v.label })),
      options: p.options.map((o) => ({ _id: o._id, name: o.name })),
    })),
  };
  return layout(
    context,
    view.shopName,
    `${testBanner(t, view.sandbox, view.testWallets)}
<header class="card"><h1 id="shop-name">${isolatedHtml(view.shopName)}</h1>
<form class="search" method="get" role="search">${hidden}<input name="search" type="search" aria-label="${escapeHtml(t.search)}" placeholder="${escapeHtml(t.searchPlaceholder)}" value="${escapeHtml(page.search)}"><button type="submit" class="plain">${escapeHtml(t.search)}</button></form></header>
<div class="layout"><section aria-label="${escapeHtml(t.shopTitle)}">${products}</section>
<aside class="card" id="cart" aria-live="polite"><h2>${escapeHtml(t.cart)}</h2><p class="muted" id="cart-empty">${escapeHtml(t.cartEmpty)}</p>
<ul class="lines" id="cart-lines"></ul>
<div id="cart-totals" hidden><p class="totals"><span>${escapeHtml(t.total)}</span><bdi class="money" id="subtotal"></bdi></p>
<p class="totals" id="fee-row"><span>${escapeHtml(t.fee)}</span><bdi class="money" id="fee"></bdi></p>
<p class="totals big"><span>${escapeHtml(t.totalToPay)}</span><bdi class="money" id="total-to-pay"></bdi></p></div>
<form id="checkout-form" novalidate hidden>
<label for="customerName">${escapeHtml(t.yourName)}</label><input id="customerName" name="customerName" autocomplete="name" maxlength="200" required>
<label for="phone">${escapeHtml(t.phone)}</label><input id="phone" name="phone" type="tel" dir="ltr" inputmode="tel" autocomplete="tel" placeholder="+222..." required>
<label for="pin">${escapeHtml(t.pin)}</label><input id="pin" name="pin" type="password" dir="ltr" inputmode="numeric" autocomplete="off" maxlength="6" required>
<button type="submit" id="place-order">${escapeHtml(t.placeOrder)}</button></form>
<div class="error" id="cart-error" role="alert" aria-live="assertive"></div></aside></div>
${dataBlock(context, data)}
<script nonce="${context.nonce}">${storefrontScript(lang)}</script>`,
    true,
  );
}

function linesList(lang: Lang, items: CustomerOrderView['items']): string {
  return `<ul class="lines">${items
    .map((item) => {
      const extras = [item.variant?.label, ...(item.options ?? []).map((o) => o.name)].filter(Boolean).join(', ');
      return `<li><bdi>${item.quantity} × ${escapeHtml(item.name)}${extras ? ` (${escapeHtml(extras)})` : ''}</bdi>${amountHtml(item.lineTotal, lang)}</li>`;
    })
    .join('')}</ul>`;
}

/** `GET /o/{orderRef}`: the customer's order, with cancel (while NEW) and the answer to a proposed change. */
export function orderPage(context: PageContext, view: CustomerOrderView | null, rateLimited = false): string {
  const { lang } = context.choice;
  const t = storefrontDictionaries[lang];
  if (!view) return layout(context, t.orderTitle, stateCard(escapeHtml(rateLimited ? t.rateLimited : t.orderNotFound)));
  const proposal = view.proposedModification;
  const modification = proposal
    ? `<section class="card" id="modification"><h2>${escapeHtml(t.modification)}</h2>${linesList(lang, proposal.items)}
<p class="totals big"><span>${escapeHtml(t.newTotal)}</span>${amountHtml(proposal.totalAmount, lang)}</p>
<p class="totals" id="difference"><span>${escapeHtml(proposal.difference >= 0 ? t.toPayNow : t.toRefund)}</span>${amountHtml(Math.abs(proposal.difference), lang)}</p>
<form id="accept-form" novalidate><label for="pin">${escapeHtml(t.pin)}</label><input id="pin" name="pin" type="password" dir="ltr" inputmode="numeric" autocomplete="off" maxlength="6" required>
<button type="submit" id="accept">${escapeHtml(t.accept)}</button></form><button type="button" class="plain" id="decline">${escapeHtml(t.decline)}</button></section>`
    : '';
  const refunded = view.totalAmountRefunded
    ? `<dt>${escapeHtml(t.refunded)}</dt><dd id="refunded">${amountHtml(view.totalAmountRefunded, lang)}</dd>`
    : '';
  const reason = !view.cancellationReason
    ? ''
    : view.cancellationReason === CUSTOMER_CANCEL_REASON
      ? `<dt>${escapeHtml(t.reason)}</dt><dd>${escapeHtml(t.cancelledByYou)}</dd>`
      : `<dt>${escapeHtml(t.reason)}</dt><dd>${isolatedHtml(view.cancellationReason)}</dd>`;
  const cancel = view.canCancel
    ? `<button type="button" class="danger" id="cancel-order">${escapeHtml(t.cancelOrder)}</button>`
    : '';
  const data = {
    orderRef: view.orderRef,
    // The proposal this page shows: accepting names it, so a proposal replaced meanwhile is refused.
    proposedAt: view.proposedModification?.proposedAt ?? null,
    texts: { confirmCancel: t.confirmCancel },
    errors: clientErrors(t),
  };
  return layout(
    context,
    `${t.orderTitle} · ${view.shopName}`,
    `${view.sandbox ? `<p class="test" role="note">${escapeHtml(t.testMode)}</p>` : ''}
<section class="card"><p class="muted">${isolatedHtml(view.shopName)}</p><h1>${escapeHtml(t.orderTitle)}</h1>
<p class="state" id="order-status" data-status="${view.status}" role="status">${escapeHtml(t[STATUS_TEXTS[view.status]])}</p>
${linesList(lang, view.items)}<p class="totals big"><span>${escapeHtml(t.total)}</span><bdi class="money" id="order-total">${escapeHtml(formatAmount(view.totalAmount, lang))}</bdi></p>
<dl><dt>${escapeHtml(t.reference)}</dt><dd>${ltrHtml(view.referenceNumber)}</dd>
<dt>${escapeHtml(t.paid)}</dt><dd id="paid">${amountHtml(view.amountPaid + view.payerFee, lang)}</dd>${refunded}${reason}</dl>
${cancel}<div class="error" id="order-error" role="alert" aria-live="assertive"></div></section>${modification}
${dataBlock(context, data)}
<script nonce="${context.nonce}">
const DATA=JSON.parse(document.getElementById('page-data').textContent);const ERRORS=DATA.errors;
${ERROR_SCRIPT}
async function act(path,body,button){const error=document.getElementById('order-error');error.textContent='';if(button)button.disabled=true;
  try{const res=await fetch('/storefront/orders/'+encodeURIComponent(DATA.orderRef)+path,{method:'POST',headers:{'content-type':'application/json'},body:JSON.stringify(body)});
    const json=await res.json();if(!res.ok){error.textContent=errorText(json);return}location.reload();
  }catch(e){error.textContent=ERRORS.generic}finally{if(button)button.disabled=false}}
const cancel=document.getElementById('cancel-order');
if(cancel)cancel.addEventListener('click',()=>{if(confirm(DATA.texts.confirmCancel))act('/cancel',{},cancel)});
const accept=document.getElementById('accept-form');
if(accept)accept.addEventListener('submit',e=>{e.preventDefault();act('/modification/accept',{pin:accept.pin.value,proposedAt:DATA.proposedAt},accept.querySelector('button'))});
const decline=document.getElementById('decline');
if(decline)decline.addEventListener('click',()=>act('/modification/decline',{},decline));
</script>`,
  );
}
