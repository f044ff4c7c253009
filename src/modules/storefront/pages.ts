import { dictionaries, formatMru, type Dictionary, type Lang } from './i18n.js';
import type { CatalogView, CustomerOrderView } from './service.js';

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** Data for the page's script, safe inside a <script> element. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028|\u2029/g, '');
}

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
.wallets{font-size:.9rem}.wallets li{margin:.2rem 0}
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

function layout(lang: Lang, title: string, body: string, nonce: string, wide = false): string {
  return `<!doctype html>
<html lang="${lang}" dir="${lang === 'ar' ? 'rtl' : 'ltr'}">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex"><title>${escapeHtml(title)}</title><style nonce="${nonce}">${STYLE}</style></head>
<body><main${wide ? ' class="wide"' : ''}>${body}</main></body></html>`;
}

/** User text in a right-to-left page (or the reverse) keeps its own direction. */
const bdi = (text: string) => `<bdi>${escapeHtml(text)}</bdi>`;
const mru = (centimes: number) => `<bdi dir="ltr">${formatMru(centimes)} MRU</bdi>`;

function testBanner(t: Dictionary, sandbox: boolean, wallets: CatalogView['testWallets']): string {
  if (!sandbox) return '';
  const items = wallets
    .map(
      (w) =>
        `<li><code>${escapeHtml(w.phone)}</code> PIN <code>${escapeHtml(w.pin)}</code>: ${escapeHtml(w.note)}</li>`,
    )
    .join('');
  return `<p class="test" role="note">${escapeHtml(t.testMode)}</p>${
    items
      ? `<details class="card wallets"><summary>${escapeHtml(t.testWallets)}</summary><ul>${items}</ul></details>`
      : ''
  }`;
}

function productCard(t: Dictionary, product: CatalogView['items'][number]): string {
  const image = product.images[0] ? `<img src="${escapeHtml(product.images[0].url)}" alt="">` : '';
  const variants = product.variants.length
    ? `<label>${escapeHtml(t.variant)}<select name="variant">${product.variants
        .map(
          (v) =>
            `<option value="${escapeHtml(v._id)}"${v.inStock ? '' : ' disabled'}>${escapeHtml(v.label)}${
              v.priceAdjustment ? ` (${v.priceAdjustment > 0 ? '+' : ''}${formatMru(v.priceAdjustment)})` : ''
            }${v.inStock ? '' : ` (${escapeHtml(t.outOfStock)})`}</option>`,
        )
        .join('')}</select></label>`
    : '';
  const options = product.options.length
    ? `<fieldset><legend>${escapeHtml(t.options)}</legend>${product.options
        .map(
          (o) =>
            `<label class="check"><input type="checkbox" name="option" value="${escapeHtml(o._id)}">${bdi(o.name)} (+${formatMru(o.priceAdjustment)})</label>`,
        )
        .join('')}</fieldset>`
    : '';
  const flexible = product.isFlexiblePrice
    ? `<label>${escapeHtml(t.yourPrice)} (${escapeHtml(t.atLeast)} ${formatMru(product.price)})<input name="price" inputmode="decimal" value="${formatMru(product.price).replace(/,/g, '')}"></label>`
    : '';
  const orderable = product.inStock && (product.variants.length === 0 || product.variants.some((v) => v.inStock));
  const form = orderable
    ? `<form class="add-form" novalidate>${variants}${options}${flexible}
<label>${escapeHtml(t.quantity)}<input name="quantity" type="number" min="1" max="1000" value="1" inputmode="numeric"></label>
<button type="submit" class="add">${escapeHtml(t.addToCart)}</button></form>`
    : `<p class="out" role="status">${escapeHtml(t.outOfStock)}</p>`;
  return `<article class="card product" data-id="${escapeHtml(product.id)}">${image}<h2>${bdi(product.name)}</h2>
${product.description ? `<p class="muted">${bdi(product.description)}</p>` : ''}<p class="price">${mru(product.price)}</p>${form}</article>`;
}

/** The script of the storefront: a cart in the page, priced by the server, paid with phone + PIN. */
function storefrontScript(t: Dictionary, view: CatalogView, lang: Lang, mode: 'test' | 'live'): string {
  const products = view.items.map((p) => ({
    id: p.id,
    name: p.name,
    variants: p.variants.map((v) => ({ _id: v._id, label: v.label })),
    options: p.options.map((o) => ({ _id: o._id, name: o.name })),
  }));
  return `
const T=${scriptJson(t)};const SHOP=${scriptJson(view.shopId)};const MODE=${scriptJson(mode)};const LANG=${scriptJson(lang)};
const PRODUCTS=${scriptJson(products)};const cart=[];
function mru(c){const s=c<0?'-':'';c=Math.abs(c);return s+Math.floor(c/100).toLocaleString('en-US')+'.'+String(c%100).padStart(2,'0')+' MRU'}
function centimes(text){const m=/^\\s*(\\d{1,9})(?:[.,](\\d{1,2}))?\\s*$/.exec(text||'');return m?Number(m[1])*100+Number((m[2]||'').padEnd(2,'0')):null}
function api(path,body){return fetch(path+'?mode='+MODE,{method:'POST',headers:{'content-type':'application/json'},body:JSON.stringify(body)}).then(async r=>({ok:r.ok,json:await r.json()}))}
function items(){return cart.map(l=>{const i={productId:l.productId,quantity:l.quantity};if(l.variantId)i.variantId=l.variantId;if(l.optionIds.length)i.optionIds=l.optionIds;if(l.price!==undefined)i.price=l.price;return i})}
async function renderCart(){
  const list=document.getElementById('cart-lines');const error=document.getElementById('cart-error');const form=document.getElementById('checkout-form');
  list.textContent='';error.textContent='';
  document.getElementById('cart-empty').hidden=cart.length>0;form.hidden=cart.length===0;document.getElementById('cart-totals').hidden=cart.length===0;
  if(!cart.length)return;
  const quote=await api('/storefront/shops/'+encodeURIComponent(SHOP)+'/quote',{items:items()});
  cart.forEach((l,i)=>{const li=document.createElement('li');const name=document.createElement('bdi');
    name.textContent=l.quantity+' × '+l.label;const right=document.createElement('span');
    const amount=document.createElement('bdi');amount.dir='ltr';amount.className='line-total';
    if(quote.ok)amount.textContent=mru(quote.json.data.items[i].lineTotal);
    const remove=document.createElement('button');remove.type='button';remove.className='plain';remove.textContent=T.remove;
    remove.addEventListener('click',()=>{cart.splice(i,1);renderCart()});right.append(amount,' ',remove);li.append(name,right);list.append(li)});
  if(!quote.ok){error.textContent=(quote.json.error&&quote.json.error.message)||T.error;return}
  const q=quote.json.data;document.getElementById('subtotal').textContent=mru(q.totalAmount);
  document.getElementById('fee').textContent=mru(q.payerFee);document.getElementById('fee-row').hidden=q.payerFee===0;
  document.getElementById('total-to-pay').textContent=mru(q.totalToPay);
}
document.querySelectorAll('.add-form').forEach(form=>form.addEventListener('submit',e=>{
  e.preventDefault();const card=form.closest('.product');const p=PRODUCTS.find(x=>x.id===card.dataset.id);
  const line={productId:p.id,quantity:Math.max(1,Math.min(1000,Number(form.quantity.value)||1)),optionIds:[],label:p.name};
  if(form.variant){line.variantId=form.variant.value;const v=p.variants.find(x=>x._id===line.variantId);if(v)line.label+=' ('+v.label+')'}
  form.querySelectorAll('input[name=option]:checked').forEach(o=>{line.optionIds.push(o.value);const x=p.options.find(y=>y._id===o.value);if(x)line.label+=' + '+x.name});
  if(form.price){const c=centimes(form.price.value);if(c===null){return}line.price=c}
  cart.push(line);const button=form.querySelector('button');button.textContent=T.added;setTimeout(()=>{button.textContent=T.addToCart},1200);renderCart();
}));
document.getElementById('checkout-form').addEventListener('submit',async e=>{
  e.preventDefault();const f=e.target;const error=document.getElementById('cart-error');const button=f.querySelector('button');error.textContent='';
  button.disabled=true;button.textContent=T.placing;
  try{
    const res=await api('/storefront/shops/'+encodeURIComponent(SHOP)+'/orders',{items:items(),customerName:f.customerName.value.trim(),phone:f.phone.value.trim(),pin:f.pin.value});
    if(!res.ok){error.textContent=(res.json.error&&res.json.error.message)||T.error;return}
    location.href='/o/'+encodeURIComponent(res.json.data.orderRef)+'?lang='+LANG;
  }catch(err){error.textContent=T.error}finally{button.disabled=false;button.textContent=T.placeOrder}
});
renderCart();`;
}

/** `GET /s/{shopId}`: the hosted storefront (catalog, search, cart, order and pay). */
export function storefrontPage(
  lang: Lang,
  view: CatalogView | null,
  nonce: string,
  context: { mode: 'test' | 'live'; search: string },
): string {
  const t = dictionaries[lang];
  if (!view) {
    return layout(
      lang,
      t.shop,
      `<section class="card"><p class="state" id="state">${escapeHtml(t.shopNotFound)}</p></section>`,
      nonce,
    );
  }
  const products = view.items.length
    ? `<div class="grid" id="products">${view.items.map((p) => productCard(t, p)).join('')}</div>`
    : `<p class="card muted" id="no-products">${escapeHtml(t.noProducts)}</p>`;
  const hidden = `<input type="hidden" name="lang" value="${lang}">${context.mode === 'test' ? '<input type="hidden" name="mode" value="test">' : ''}`;
  return layout(
    lang,
    `${view.shopName}`,
    `${testBanner(t, view.sandbox, view.testWallets)}
<header class="card"><h1 id="shop-name">${bdi(view.shopName)}</h1>
<form class="search" method="get" role="search">${hidden}<input name="search" type="search" aria-label="${escapeHtml(t.search)}" placeholder="${escapeHtml(t.searchPlaceholder)}" value="${escapeHtml(context.search)}"><button type="submit" class="plain">${escapeHtml(t.search)}</button></form></header>
<div class="layout"><section aria-label="${escapeHtml(t.shop)}">${products}</section>
<aside class="card" id="cart" aria-live="polite"><h2>${escapeHtml(t.cart)}</h2><p class="muted" id="cart-empty">${escapeHtml(t.cartEmpty)}</p>
<ul class="lines" id="cart-lines"></ul>
<div id="cart-totals" hidden><p class="totals"><span>${escapeHtml(t.subtotal)}</span><bdi dir="ltr" id="subtotal"></bdi></p>
<p class="totals" id="fee-row"><span>${escapeHtml(t.fee)}</span><bdi dir="ltr" id="fee"></bdi></p>
<p class="totals big"><span>${escapeHtml(t.totalToPay)}</span><bdi dir="ltr" id="total-to-pay"></bdi></p></div>
<form id="checkout-form" novalidate hidden>
<label for="customerName">${escapeHtml(t.yourName)}</label><input id="customerName" name="customerName" autocomplete="name" maxlength="200" required>
<label for="phone">${escapeHtml(t.phone)}</label><input id="phone" name="phone" type="tel" inputmode="tel" autocomplete="tel" placeholder="+222..." required>
<label for="pin">${escapeHtml(t.pin)}</label><input id="pin" name="pin" type="password" inputmode="numeric" autocomplete="off" maxlength="6" required>
<button type="submit" id="place-order">${escapeHtml(t.placeOrder)}</button></form>
<div class="error" id="cart-error" role="alert" aria-live="assertive"></div></aside></div>
<script nonce="${nonce}">${storefrontScript(t, view, lang, context.mode)}</script>`,
    nonce,
    true,
  );
}

function linesList(items: CustomerOrderView['items']): string {
  return `<ul class="lines">${items
    .map((item) => {
      const extras = [item.variant?.label, ...(item.options ?? []).map((o) => o.name)].filter(Boolean).join(', ');
      return `<li><bdi>${item.quantity} × ${escapeHtml(item.name)}${extras ? ` (${escapeHtml(extras)})` : ''}</bdi>${mru(item.lineTotal)}</li>`;
    })
    .join('')}</ul>`;
}

/** `GET /o/{orderRef}`: the customer's order, with cancel (while NEW) and the answer to a proposed change. */
export function orderPage(lang: Lang, view: CustomerOrderView | null, nonce: string): string {
  const t = dictionaries[lang];
  if (!view) {
    return layout(
      lang,
      t.orderTitle,
      `<section class="card"><p class="state" id="state">${escapeHtml(t.orderNotFound)}</p></section>`,
      nonce,
    );
  }
  const proposal = view.proposedModification;
  const modification = proposal
    ? `<section class="card" id="modification"><h2>${escapeHtml(t.modification)}</h2>${linesList(proposal.items)}
<p class="totals big"><span>${escapeHtml(t.newTotal)}</span>${mru(proposal.totalAmount)}</p>
<p class="totals" id="difference"><span>${escapeHtml(proposal.difference >= 0 ? t.toPayNow : t.toRefund)}</span>${mru(Math.abs(proposal.difference))}</p>
<form id="accept-form" novalidate><label for="pin">${escapeHtml(t.pin)}</label><input id="pin" name="pin" type="password" inputmode="numeric" autocomplete="off" maxlength="6" required>
<button type="submit" id="accept">${escapeHtml(t.accept)}</button></form><button type="button" class="plain" id="decline">${escapeHtml(t.decline)}</button></section>`
    : '';
  const refunded = view.totalAmountRefunded
    ? `<dt>${escapeHtml(t.refunded)}</dt><dd id="refunded">${mru(view.totalAmountRefunded)}</dd>`
    : '';
  const reason = view.cancellationReason
    ? `<dt>${escapeHtml(t.reason)}</dt><dd>${bdi(view.cancellationReason)}</dd>`
    : '';
  const cancel = view.canCancel
    ? `<button type="button" class="danger" id="cancel-order">${escapeHtml(t.cancelOrder)}</button>`
    : '';
  return layout(
    lang,
    `${t.orderTitle} · ${view.shopName}`,
    `${view.sandbox ? `<p class="test" role="note">${escapeHtml(t.testMode)}</p>` : ''}
<section class="card"><p class="muted">${bdi(view.shopName)}</p><h1>${escapeHtml(t.orderTitle)}</h1>
<p class="state" id="order-status" data-status="${view.status}" role="status">${escapeHtml(t.statusNames[view.status])}</p>
${linesList(view.items)}<p class="totals big"><span>${escapeHtml(t.subtotal)}</span><bdi dir="ltr" id="order-total">${formatMru(view.totalAmount)} MRU</bdi></p>
<dl><dt>${escapeHtml(t.reference)}</dt><dd><bdi dir="ltr">${escapeHtml(view.referenceNumber)}</bdi></dd>
<dt>${escapeHtml(t.paid)}</dt><dd id="paid">${mru(view.amountPaid + view.payerFee)}</dd>${refunded}${reason}</dl>
${cancel}<div class="error" id="order-error" role="alert" aria-live="assertive"></div></section>${modification}
<script nonce="${nonce}">
const T=${scriptJson(t)};const REF=${scriptJson(view.orderRef)};
async function act(path,body,button){const error=document.getElementById('order-error');error.textContent='';if(button)button.disabled=true;
  try{const res=await fetch('/storefront/orders/'+encodeURIComponent(REF)+path,{method:'POST',headers:{'content-type':'application/json'},body:JSON.stringify(body)});
    const json=await res.json();if(!res.ok){error.textContent=(json.error&&json.error.message)||T.error;return}location.reload();
  }catch(e){error.textContent=T.error}finally{if(button)button.disabled=false}}
const cancel=document.getElementById('cancel-order');
if(cancel)cancel.addEventListener('click',()=>{if(confirm(T.confirmCancel))act('/cancel',{},cancel)});
const accept=document.getElementById('accept-form');
if(accept)accept.addEventListener('submit',e=>{e.preventDefault();act('/modification/accept',{pin:accept.pin.value},accept.querySelector('button'))});
const decline=document.getElementById('decline');
if(decline)decline.addEventListener('click',()=>act('/modification/decline',{},decline));
</script>`,
    nonce,
  );
}
