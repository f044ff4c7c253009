/*
 * The hosted checkout page's script. A payable page: pays through the checkout API, then loads
 * the page again, which the server now draws as the receipt (the same receipt any later visit of
 * the link shows). A receipt with a merchant's success_url: follows it, once, right after paying.
 */
/* global document, location, sessionStorage */
'use strict';
(() => {
  const C = globalThis.Customer;
  const data = C.data();
  const justPaid = 'checkout-paid:' + data.shortCode;

  const form = document.getElementById('pay-form');
  if (form) {
    const error = document.getElementById('pay-error');
    const button = form.querySelector('button[type=submit]');
    let payKey = null;
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      error.textContent = '';
      const body = { phone: form.phone.value.trim(), pin: form.pin.value };
      if (data.open) {
        const centimes = C.parseAmount(form.amount.value);
        if (centimes === null || centimes < 1) {
          error.textContent = data.errors.byCode['VALIDATION_ERROR:body.amount'];
          form.amount.focus();
          return;
        }
        body.amount = centimes;
      }
      button.disabled = true;
      button.textContent = data.texts.paying;
      // One key per attempt: sent again only when no answer came back, so a retry after a lost
      // answer gets the first attempt's answer (paid), not "this payment can no longer be paid".
      payKey = payKey || C.newKey();
      try {
        const answer = await C.postJson(
          '/checkout/intents/' + encodeURIComponent(data.shortCode) + '/pay',
          body,
          payKey,
        );
        payKey = null;
        if (answer.ok) {
          sessionStorage.setItem(justPaid, '1');
          location.reload();
          return;
        }
        error.textContent = C.errorText(answer.json);
      } catch {
        error.textContent = data.errors.generic;
      }
      button.disabled = false;
      button.textContent = data.texts.pay;
    });
  }

  if (data.successUrl && sessionStorage.getItem(justPaid)) {
    sessionStorage.removeItem(justPaid);
    document.getElementById('r-next').hidden = false;
    setTimeout(() => location.assign(data.successUrl), 1500);
  }
})();
