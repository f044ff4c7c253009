import type { CheckoutView } from './service.js';
import { dictionaries, formatMru, type Lang } from './i18n.js';

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** Data for the page's script, safe inside a <script> element. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028|\u2029/g, '');
}

const STYLE = `
*{box-sizing:border-box}body{margin:0;font:16px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans Arabic",sans-serif;background:#f4f5f7;color:#1b1f24}
main{max-width:26rem;margin:0 auto;padding:1rem}
.card{background:#fff;border-radius:12px;padding:1.25rem;box-shadow:0 1px 3px rgba(0,0,0,.08);margin-top:1rem}
.test{background:#ffe8a3;color:#5c4400;padding:.6rem 1rem;font-weight:700;text-align:center;border-radius:8px}
h1{font-size:1.15rem;margin:0 0 .25rem}.merchant{color:#5a6270;margin:0}.amount{font-size:2rem;font-weight:700;margin:.75rem 0}
label{display:block;font-weight:600;margin:.9rem 0 .3rem}input{width:100%;font-size:1.1rem;padding:.7rem;border:1px solid #c6ccd5;border-radius:8px}
button{width:100%;margin-top:1.2rem;padding:.85rem;font-size:1.1rem;font-weight:700;border:0;border-radius:8px;background:#0b6e4f;color:#fff}
button[disabled]{opacity:.6}.secondary{display:block;text-align:center;margin-top:.9rem;color:#5a6270}
.error{color:#b3261e;font-weight:600;min-height:1.4rem;margin-top:.8rem}.state{font-size:1.1rem;font-weight:600}
dl{display:grid;grid-template-columns:auto 1fr;gap:.3rem .8rem;margin:.5rem 0 0}dt{color:#5a6270}dd{margin:0;word-break:break-all}
.wallets{font-size:.9rem}.wallets li{margin:.2rem 0}
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

function layout(lang: Lang, title: string, body: string, nonce: string): string {
  return `<!doctype html>
<html lang="${lang}" dir="${lang === 'ar' ? 'rtl' : 'ltr'}">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex"><title>${escapeHtml(title)}</title><style nonce="${nonce}">${STYLE}</style></head>
<body><main>${body}</main></body></html>`;
}

/** The script both pages share: pay through the checkout API, then show the receipt. */
function payScript(t: (typeof dictionaries)[Lang]): string {
  return `
const T = ${scriptJson(t)};
function mru(c){const w=Math.floor(c/100).toLocaleString('en-US');return w+'.'+String(c%100).padStart(2,'0')+' MRU'}
function centimes(text){const m=/^\\s*(\\d{1,9})(?:[.,](\\d{1,2}))?\\s*$/.exec(text||'');return m?Number(m[1])*100+Number((m[2]||'').padEnd(2,'0')):null}
function receipt(view){
  const r=view.receipt;const el=document.createElement('section');el.className='card';el.id='receipt';el.setAttribute('role','status');
  el.innerHTML='<p class="state"></p><h2></h2><dl><dt></dt><dd id="r-ref"></dd><dt></dt><dd id="r-amount"></dd><dt></dt><dd id="r-at"></dd><dt></dt><dd id="r-payer"></dd></dl><p class="secondary" id="r-next"></p>';
  el.querySelector('.state').textContent=T.paid;el.querySelector('h2').textContent=T.receipt;
  const dts=el.querySelectorAll('dt');dts[0].textContent=T.reference;dts[1].textContent=T.amount;dts[2].textContent=T.paidAt;dts[3].textContent=T.payer;
  el.querySelector('#r-ref').textContent=r.reference;el.querySelector('#r-amount').textContent=mru(r.amountPaid);
  el.querySelector('#r-at').textContent=new Date(r.paidAt).toLocaleString();el.querySelector('#r-payer').textContent=r.payerPhone;
  if(view.successUrl){el.querySelector('#r-next').textContent=T.redirecting;setTimeout(()=>{location.href=view.successUrl},1500)}
  return el;
}
async function pay(form, shortCode, open){
  const error=form.querySelector('.error');const button=form.querySelector('button');error.textContent='';
  const body={phone:form.phone.value.trim(),pin:form.pin.value};
  if(open){const c=centimes(form.amount.value);if(c===null){error.textContent=T.error;return}body.amount=c}
  button.disabled=true;button.textContent=T.paying;
  try{
    const res=await fetch('/checkout/intents/'+encodeURIComponent(shortCode)+'/pay',{method:'POST',headers:{'content-type':'application/json'},body:JSON.stringify(body)});
    const json=await res.json();
    if(!res.ok){error.textContent=(json.error&&json.error.message)||T.error;return}
    form.closest('.card').replaceWith(receipt(json.data));
  }catch(e){error.textContent=T.error}
  finally{button.disabled=false;button.textContent=T.pay}
}`;
}

function testBanner(t: (typeof dictionaries)[Lang], view: Pick<CheckoutView, 'sandbox' | 'testWallets'>): string {
  if (!view.sandbox) return '';
  const wallets = view.testWallets
    .map(
      (w) =>
        `<li><code>${escapeHtml(w.phone)}</code> PIN <code>${escapeHtml(w.pin)}</code>: ${escapeHtml(w.note)}</li>`,
    )
    .join('');
  return `<p class="test" role="note">${escapeHtml(t.testMode)}</p>
<details class="card wallets"><summary>${escapeHtml(t.testWallets)}</summary><ul>${wallets}</ul></details>`;
}

function payForm(t: (typeof dictionaries)[Lang], view: CheckoutView): string {
  const open = view.amountType === 'OPEN';
  const suggested = view.suggestedAmount !== null ? formatMru(view.suggestedAmount).replace(/,/g, '') : '';
  return `<form id="pay-form" novalidate>
${open ? `<label for="amount">${escapeHtml(t.amountToPay)}</label><input id="amount" name="amount" inputmode="decimal" autocomplete="off" required value="${suggested}">` : ''}
<label for="phone">${escapeHtml(t.phone)}</label><input id="phone" name="phone" type="tel" inputmode="tel" autocomplete="tel" placeholder="+222..." required>
<label for="pin">${escapeHtml(t.pin)}</label><input id="pin" name="pin" type="password" inputmode="numeric" autocomplete="off" maxlength="6" required>
<div class="error" role="alert" aria-live="assertive"></div>
<button type="submit">${escapeHtml(t.pay)}</button>
${view.cancelUrl ? `<a class="secondary" id="cancel" href="${escapeHtml(view.cancelUrl)}">${escapeHtml(t.cancel)}</a>` : ''}
</form>`;
}

function summary(t: (typeof dictionaries)[Lang], view: CheckoutView): string {
  const amount = view.amount !== null ? `<p class="amount" id="amount-due">${formatMru(view.amount)} MRU</p>` : '';
  const fee = view.payerFee > 0 ? `<p class="merchant">${escapeHtml(t.fee)}: ${formatMru(view.payerFee)} MRU</p>` : '';
  return `<h1 id="label">${escapeHtml(view.label || view.merchantName)}</h1>
<p class="merchant" id="merchant">${escapeHtml(t.merchant)}: ${escapeHtml(view.merchantName)}</p>${amount}${fee}`;
}

function stateMessage(t: (typeof dictionaries)[Lang], view: CheckoutView): string {
  const text = { PAID: t.alreadyPaid, EXPIRED: t.expired, CANCELLED: t.cancelled, REFUNDED: t.refunded, PAYABLE: '' }[
    view.state
  ];
  return `<p class="state" id="state" data-state="${view.state}" role="status">${escapeHtml(text)}</p>`;
}

/** `GET /p/{shortCode}`: the hosted checkout page. */
export function checkoutPage(lang: Lang, view: CheckoutView | null, nonce: string): string {
  const t = dictionaries[lang];
  if (!view)
    return layout(
      lang,
      t.title,
      `<section class="card"><p class="state" id="state" data-state="NOT_FOUND">${escapeHtml(t.notFound)}</p></section>`,
      nonce,
    );
  const body =
    view.state === 'PAYABLE' ? `${summary(t, view)}${payForm(t, view)}` : `${summary(t, view)}${stateMessage(t, view)}`;
  return layout(
    lang,
    `${t.title} ${view.merchantName}`,
    `${testBanner(t, view)}<section class="card">${body}</section>
<script nonce="${nonce}">${payScript(t)}
const form=document.getElementById('pay-form');
if(form)form.addEventListener('submit',e=>{e.preventDefault();pay(form,${scriptJson(view.shortCode)},${view.amountType === 'OPEN'})});
</script>`,
    nonce,
  );
}

/** `GET /pay`: enter the 6-digit code, see what it is for, confirm with phone and PIN. */
export function payByCodePage(lang: Lang, sandbox: boolean, nonce: string): string {
  const t = dictionaries[lang];
  const banner = sandbox ? `<p class="test" role="note">${escapeHtml(t.testMode)}</p>` : '';
  return layout(
    lang,
    t.codeTitle,
    `${banner}<section class="card" id="code-card"><h1>${escapeHtml(t.codeTitle)}</h1>
<form id="code-form" novalidate><label for="code">${escapeHtml(t.code)}</label>
<input id="code" name="code" inputmode="numeric" pattern="[0-9]{6}" maxlength="6" autocomplete="one-time-code" required>
<div class="error" role="alert" aria-live="assertive"></div><button type="submit">${escapeHtml(t.find)}</button></form></section>
<script nonce="${nonce}">${payScript(t)}
const MODE=${scriptJson(sandbox ? 'test' : 'live')};
function esc(s){const d=document.createElement('div');d.textContent=s;return d.innerHTML}
document.getElementById('code-form').addEventListener('submit',async e=>{
  e.preventDefault();const f=e.target;const error=f.querySelector('.error');error.textContent='';
  const code=f.code.value.trim();
  const res=await fetch('/checkout/codes/'+encodeURIComponent(code)+'?mode='+MODE);const json=await res.json();
  if(!res.ok){error.textContent=(json.error&&json.error.message)||T.error;return}
  const v=json.data;const card=document.getElementById('code-card');
  if(v.state!=='PAYABLE'){card.innerHTML='<p class="state" id="state" data-state="'+v.state+'"></p>';card.querySelector('.state').textContent=({PAID:T.alreadyPaid,EXPIRED:T.expired,CANCELLED:T.cancelled,REFUNDED:T.refunded})[v.state];return}
  const open=v.amountType==='OPEN';
  card.innerHTML='<h1 id="label"></h1><p class="merchant" id="merchant"></p>'+(open?'':'<p class="amount" id="amount-due"></p>')+
    '<form id="pay-form" novalidate>'+(open?'<label for="amount">'+esc(T.amountToPay)+'</label><input id="amount" name="amount" inputmode="decimal" required>':'')+
    '<label for="phone">'+esc(T.phone)+'</label><input id="phone" name="phone" type="tel" inputmode="tel" placeholder="+222..." required>'+
    '<label for="pin">'+esc(T.pin)+'</label><input id="pin" name="pin" type="password" inputmode="numeric" maxlength="6" required>'+
    '<div class="error" role="alert" aria-live="assertive"></div><button type="submit">'+esc(T.pay)+'</button></form>';
  card.querySelector('#label').textContent=v.label||v.merchantName;card.querySelector('#merchant').textContent=T.merchant+': '+v.merchantName;
  if(!open)card.querySelector('#amount-due').textContent=mru(v.amount);
  const payForm=card.querySelector('#pay-form');payForm.addEventListener('submit',ev=>{ev.preventDefault();pay(payForm,v.shortCode,open)});
});
</script>`,
    nonce,
  );
}
