/*
 * A payment link's page script. Checks what it can before asking (the amount and its bounds, the
 * name), pays through the link's API with one idempotency key per attempt, then opens the
 * receipt at the checkout's page of the payment made, in the page's language; that page shows it
 * again on every reload and follows the merchant's success URL once.
 */
/* global document, location, sessionStorage */
'use strict';
(() => {
  const C = globalThis.Customer;
  const data = C.data();
  const form = document.getElementById('pay-form');
  if (!form) return;
  const error = document.getElementById('pay-error');
  const button = form.querySelector('button[type=submit]');
  const refuse = (code, field) => {
    error.textContent = data.errors.byCode[code];
    if (field) field.focus();
  };
  let payKey = null;

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    error.textContent = '';
    const body = { phone: form.phone.value.trim(), pin: form.pin.value };
    if (data.open) {
      const centimes = C.parseAmount(form.amount.value);
      if (centimes === null || centimes < 1) return refuse('VALIDATION_ERROR:body.amount', form.amount);
      const below = data.minAmount !== null && centimes < data.minAmount;
      const above = data.maxAmount !== null && centimes > data.maxAmount;
      if (below || above) return refuse('AMOUNT_OUT_OF_RANGE', form.amount);
      body.amount = centimes;
    }
    if (data.collectName) {
      body.name = form.elements.name.value.trim();
      if (!body.name) return refuse('VALIDATION_ERROR:body.name', form.elements.name);
    }
    if (form.note && form.note.value.trim()) body.note = form.note.value.trim();
    button.disabled = true;
    button.textContent = data.texts.paying;
    // One key per attempt: sent again only when no answer came back, so a retry after a lost
    // answer gets the first attempt's answer (paid) rather than paying twice.
    payKey = payKey || C.newKey();
    try {
      const answer = await C.postJson('/checkout/links/' + encodeURIComponent(data.slug) + '/pay', body, payKey);
      payKey = null;
      if (answer.ok) {
        const shortCode = answer.json.data.shortCode;
        // The receipt page's script follows the success URL only right after paying (checkout.js).
        sessionStorage.setItem('checkout-paid:' + shortCode, '1');
        location.assign('/p/' + encodeURIComponent(shortCode) + '?lang=' + encodeURIComponent(data.lang));
        return;
      }
      error.textContent = C.errorText(answer.json);
    } catch {
      error.textContent = data.errors.generic;
    }
    button.disabled = false;
    button.textContent = data.texts.pay;
  });
})();
