/*
 * The storefront's script: a cart kept in this browser (localStorage, per shop), priced by the
 * server's quote on every change, paid with the wallet phone and PIN. The totals show only for a
 * cart the server priced whole: a line it refuses (not enough stock, no longer sold, a price too
 * low) is named on that line with what to do, and the totals wait until it is fixed.
 */
/* global document, localStorage, location */
'use strict';
(() => {
  const C = globalThis.Customer;
  const data = C.data();
  const T = data.texts;
  const STORAGE_KEY = 'storefront-cart:' + data.shopId;
  const MAX_QUANTITY = 1000;

  const $ = (id) => document.getElementById(id);
  const fill = (text, values) => text.replace(/\{(\w+)\}/g, (_, name) => values[name]);
  const count = (n) => new Intl.NumberFormat(data.format.locale).format(n);

  /** A cart line: what the API prices, and the name the customer chose it by. */
  function validLine(line) {
    return (
      line &&
      typeof line.productId === 'string' &&
      Number.isInteger(line.quantity) &&
      line.quantity >= 1 &&
      typeof line.label === 'string' &&
      Array.isArray(line.optionIds)
    );
  }

  function loadCart() {
    try {
      const stored = JSON.parse(localStorage.getItem(STORAGE_KEY) || '[]');
      return Array.isArray(stored) ? stored.filter(validLine) : [];
    } catch {
      return [];
    }
  }

  const cart = loadCart();

  function saveCart() {
    try {
      if (cart.length) localStorage.setItem(STORAGE_KEY, JSON.stringify(cart));
      else localStorage.removeItem(STORAGE_KEY);
    } catch {
      // Storage full or refused (private mode): the cart still works until the page is left.
    }
  }

  function items() {
    return cart.map((line) => {
      const item = { productId: line.productId, quantity: line.quantity };
      if (line.variantId) item.variantId = line.variantId;
      if (line.optionIds.length) item.optionIds = line.optionIds;
      if (line.price !== undefined) item.price = line.price;
      return item;
    });
  }

  const sameChoice = (a, b) =>
    a.productId === b.productId &&
    (a.variantId || '') === (b.variantId || '') &&
    a.optionIds.join() === b.optionIds.join() &&
    a.price === b.price;

  /** What the server said about each line when it refused the cart: index → problem. */
  function lineProblems(json) {
    const problems = new Map();
    const error = json && json.error;
    if (!error || !Array.isArray(error.details)) return problems;
    for (const detail of error.details) {
      const match = /^body\.items\.(\d+)(?:\.(\w+))?$/.exec(detail.field || '');
      if (!match) continue;
      const index = Number(match[1]);
      if (error.code === 'INSUFFICIENT_STOCK') {
        const left = /<= (\d+)$/.exec(detail.message || '');
        problems.set(index, { kind: 'stock', left: left ? Number(left[1]) : 0 });
      } else if (error.code === 'PRODUCT_NOT_FOUND' || error.code === 'VARIANT_NOT_FOUND') {
        problems.set(index, { kind: 'gone' });
      } else if (match[2] === 'price') {
        problems.set(index, { kind: 'price' });
      }
    }
    return problems;
  }

  function button(text, className, onClick) {
    const element = document.createElement('button');
    element.type = 'button';
    element.className = className;
    element.textContent = text;
    element.addEventListener('click', onClick);
    return element;
  }

  function drawLine(line, index, priced, problem) {
    const li = document.createElement('li');
    li.dataset.index = String(index);
    const name = document.createElement('span');
    name.className = 'line-name';
    const bdi = document.createElement('bdi');
    bdi.textContent = count(line.quantity) + ' × ' + line.label;
    name.append(bdi);
    const end = document.createElement('span');
    end.className = 'line-end';
    if (priced) {
      const amount = document.createElement('bdi');
      amount.className = 'money line-total';
      amount.textContent = C.formatAmount(priced.lineTotal);
      end.append(amount);
    }
    end.append(button(T.remove, 'small plain remove', () => changeCart(() => cart.splice(index, 1))));
    li.append(name, end);
    if (problem) {
      const note = document.createElement('span');
      note.className = 'line-problem';
      const text = document.createElement('span');
      if (problem.kind === 'stock' && problem.left > 0) {
        text.textContent = fill(T.stockLeft, { count: count(problem.left) });
        note.append(text);
        note.append(
          button(fill(T.keepCount, { count: count(problem.left) }), 'small plain keep', () =>
            changeCart(() => {
              cart[index].quantity = problem.left;
            }),
          ),
        );
      } else {
        text.textContent =
          problem.kind === 'stock' ? T.stockNone : problem.kind === 'gone' ? T.lineGone : T.priceInvalid;
        note.append(text);
      }
      li.append(note);
    }
    return li;
  }

  function drawCount() {
    const total = cart.reduce((sum, line) => sum + line.quantity, 0);
    $('cart-count').textContent = count(total);
    $('cart-count-text').textContent = fill(T.cartCount, { count: count(total) });
  }

  let drawn = 0;
  let orderKey = null;

  /** Draws the cart as the server prices it now; the totals only when it priced every line. */
  async function renderCart() {
    const run = ++drawn;
    const list = $('cart-lines');
    const error = $('cart-error');
    error.textContent = '';
    drawCount();
    // A changed cart is a new order: a new idempotency key.
    orderKey = null;
    $('cart-empty').hidden = cart.length > 0;
    $('cart-totals').hidden = true;
    $('totals-pending').hidden = true;
    $('checkout-form').hidden = true;
    if (!cart.length) {
      list.textContent = '';
      return;
    }
    let quote;
    try {
      quote = await C.postJson('/storefront/shops/' + encodeURIComponent(data.shopId) + '/quote?mode=' + data.mode, {
        items: items(),
      });
    } catch {
      quote = { ok: false, json: null };
    }
    if (run !== drawn) return;
    const problems = quote.ok ? new Map() : lineProblems(quote.json);
    list.replaceChildren(
      ...cart.map((line, index) =>
        drawLine(line, index, quote.ok ? quote.json.data.items[index] : null, problems.get(index)),
      ),
    );
    if (!quote.ok) {
      $('totals-pending').hidden = false;
      error.textContent = C.errorText(quote.json);
      return;
    }
    const priced = quote.json.data;
    $('subtotal').textContent = C.formatAmount(priced.totalAmount);
    $('fee').textContent = C.formatAmount(priced.payerFee);
    $('fee-row').hidden = priced.payerFee === 0;
    $('total-to-pay').textContent = C.formatAmount(priced.totalToPay);
    $('cart-totals').hidden = false;
    $('checkout-form').hidden = false;
  }

  function changeCart(change) {
    change();
    saveCart();
    return renderCart();
  }

  for (const form of document.querySelectorAll('.add-form')) {
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const product = data.products.find((p) => p.id === form.closest('.product').dataset.id);
      const quantity = Math.max(1, Math.min(MAX_QUANTITY, Math.floor(Number(form.quantity.value)) || 1));
      const line = { productId: product.id, quantity, optionIds: [], label: product.name };
      if (form.variant && form.variant.value) {
        line.variantId = form.variant.value;
        const variant = product.variants.find((v) => v._id === line.variantId);
        if (variant) line.label += ' (' + variant.label + ')';
      }
      for (const option of form.querySelectorAll('input[name=option]:checked')) {
        line.optionIds.push(option.value);
        const known = product.options.find((o) => o._id === option.value);
        if (known) line.label += ' + ' + known.name;
      }
      if (form.price) {
        const price = C.parseAmount(form.price.value);
        if (price === null) {
          $('cart-error').textContent = T.priceInvalid;
          form.price.focus();
          return;
        }
        line.price = price;
      }
      const same = cart.find((kept) => sameChoice(kept, line));
      const button = form.querySelector('button.add');
      button.textContent = T.added;
      setTimeout(() => {
        button.textContent = T.addToCart;
      }, 1200);
      changeCart(() => {
        if (same) same.quantity = Math.min(MAX_QUANTITY, same.quantity + line.quantity);
        else cart.push(line);
      });
    });
  }

  $('checkout-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    const form = event.target;
    const error = $('cart-error');
    const submit = $('place-order');
    error.textContent = '';
    submit.disabled = true;
    submit.textContent = T.placing;
    orderKey = orderKey || C.newKey();
    let answer;
    try {
      answer = await C.postJson(
        '/storefront/shops/' + encodeURIComponent(data.shopId) + '/orders?mode=' + data.mode,
        {
          items: items(),
          customerName: form.customerName.value.trim(),
          phone: form.phone.value.trim(),
          pin: form.pin.value,
        },
        orderKey,
      );
    } catch {
      answer = { ok: false, json: null };
    }
    submit.disabled = false;
    submit.textContent = T.placeOrder;
    if (answer.ok) {
      cart.length = 0;
      saveCart();
      location.assign(data.orderPath.replace('{ref}', encodeURIComponent(answer.json.data.orderRef)));
      return;
    }
    const code = answer.json && answer.json.error && answer.json.error.code;
    if (code === 'INSUFFICIENT_STOCK' || code === 'PRODUCT_NOT_FOUND' || code === 'VARIANT_NOT_FOUND') {
      // The stock went while the customer typed: the cart, priced again, names the lines.
      await renderCart();
    }
    error.textContent = C.errorText(answer.json);
  });

  renderCart();
})();
