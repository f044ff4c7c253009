/*
 * The customer order page's script: cancel the order (while NEW), accept a proposed change with
 * the PIN, or decline it; the page is then drawn again by the server.
 */
/* global document, location, confirm */
'use strict';
(() => {
  const C = globalThis.Customer;
  const data = C.data();
  const error = document.getElementById('order-error');

  async function act(path, body, button) {
    error.textContent = '';
    if (button) button.disabled = true;
    try {
      const answer = await C.postJson('/storefront/orders/' + encodeURIComponent(data.orderRef) + path, body);
      if (answer.ok) {
        location.reload();
        return;
      }
      error.textContent = C.errorText(answer.json);
    } catch {
      error.textContent = data.errors.generic;
    }
    if (button) button.disabled = false;
  }

  const cancel = document.getElementById('cancel-order');
  if (cancel) {
    cancel.addEventListener('click', () => {
      if (confirm(data.texts.confirmCancel)) act('/cancel', {}, cancel);
    });
  }
  const accept = document.getElementById('accept-form');
  if (accept) {
    accept.addEventListener('submit', (event) => {
      event.preventDefault();
      act(
        '/modification/accept',
        { pin: accept.pin.value, proposedAt: data.proposedAt },
        accept.querySelector('button'),
      );
    });
  }
  const decline = document.getElementById('decline');
  if (decline) decline.addEventListener('click', () => act('/modification/decline', {}, decline));
})();
