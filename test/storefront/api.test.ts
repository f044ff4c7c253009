import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { manualClock } from '../support/clock.js';
import {
  expectError,
  expectStatus,
  sharedDatabase,
  startTestApp,
  waitUntil,
  type TestApp,
  type TestBusiness,
} from '../support/harness.js';
import { createProduct, stockOf } from '../products/support.js';
import { eventsOf } from '../support/read-api.js';
import {
  ledgerIsSound,
  merchantBalance,
  LOCKED,
  NEARLY_EMPTY,
  orderAction,
  RICH,
  setFeePlan,
  walletBalance,
} from '../orders/support.js';

const API = '/storefront';

/** Issue 11: the public storefront API (no key): catalog, quote, place and pay, the customer's order by its link. */
describe('storefront customer API', () => {
  let t: TestApp;
  let business: TestBusiness;
  let sk: string;
  let shopId: string;
  let tea: any;
  let draft: any;
  const customer = { phone: '+22241000001', pin: '4321' };
  const rival = { phone: '+22241000002', pin: '4321' };
  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    business = await t.createBusiness({ name: 'Boutique Nour' });
    sk = business.keys.secretTest;
    shopId = business.shopId!;
    await setFeePlan(t, business.id, { providerBps: 100, payerFee: 50 });
    tea = await createProduct(t, sk, {
      name: 'Thé à la menthe',
      price: 1000,
      quantity: 20,
      status: 'ACTIVE',
      variants: [{ type: 'SIZE', label: 'Grand', priceAdjustment: 300, quantity: 0 }],
      options: [{ name: 'Sucre', priceAdjustment: 100 }],
    });
    draft = await createProduct(t, sk, { name: 'Brouillon', price: 100 });
    for (const wallet of [customer, rival]) {
      expectStatus(await t.admin('POST', '/wallets', { ...wallet, balance: 50_000, environment: 'test' }), 201);
    }
  });
  afterAll(() => t.close());

  const place = (items: unknown[], who = customer, query = '') =>
    t.request('POST', `${API}/shops/${shopId}/orders${query}`, {
      body: { items, customerName: 'Mariem', phone: who.phone, pin: who.pin },
    });
  const orderRefOf = (response: { body: any }) => response.body.data.orderRef as string;
  /** The proposal the customer's order page shows (accepting names it by its proposedAt). */
  const shownProposal = async (ref: string) =>
    (await t.request('GET', `${API}/orders/${ref}`)).body.data.proposedModification?.proposedAt as string;
  const acceptShown = async (ref: string, pin = customer.pin) =>
    t.request('POST', `${API}/orders/${ref}/modification/accept`, {
      body: { pin, proposedAt: (await shownProposal(ref)) ?? 'none' },
    });
  const orderRefAndRef = (response: { body: any }) => response.body.data.referenceNumber as string;

  test('the catalog lists ACTIVE products with stock flags, searches accent-insensitively, shows the test wallets', async () => {
    const response = await t.request('GET', `${API}/shops/${shopId}`);
    expectStatus(response, 200);
    const catalog = response.body.data;
    assert.equal(catalog.shopName, 'Boutique Nour');
    assert.equal(catalog.sandbox, true);
    assert.equal(catalog.payerFee, 50);
    assert.ok(catalog.testWallets.some((w: { phone: string }) => w.phone === RICH.phone));
    const names = catalog.items.map((p: { name: string }) => p.name);
    assert.ok(names.includes('Thé à la menthe'));
    assert.ok(!names.includes('Brouillon'), 'DISABLED products are not shown');
    const shown = catalog.items.find((p: { id: string }) => p.id === tea.id);
    assert.equal(shown.inStock, true);
    assert.equal(shown.variants[0].inStock, false, 'an out-of-stock variant says so');
    assert.equal(shown.costBasis, undefined);
    const search = await t.request('GET', `${API}/shops/${shopId}?search=the%20menthe`);
    assert.deepEqual(
      search.body.data.items.map((p: { id: string }) => p.id),
      [tea.id],
    );
    expectError(await t.request('GET', `${API}/shops/shop_nope`), 404, 'SHOP_NOT_FOUND');
    // The live shop of a business not approved for live mode takes no orders.
    const unapproved = await t.createBusiness({ approveLive: false });
    expectError(await t.request('GET', `${API}/shops/${unapproved.shopId}?mode=live`), 404, 'SHOP_NOT_FOUND');
    expectStatus(await t.request('GET', `${API}/shops/${unapproved.shopId}`), 200);
  });

  test('a quote prices the cart on the server; unknown, disabled and out-of-stock choices are refused', async () => {
    const quote = await t.request('POST', `${API}/shops/${shopId}/quote`, {
      body: { items: [{ productId: tea.id, quantity: 2, optionIds: [tea.options[0]._id] }] },
    });
    expectStatus(quote, 200);
    assert.equal(quote.body.data.totalAmount, 2200);
    assert.equal(quote.body.data.payerFee, 50);
    assert.equal(quote.body.data.totalToPay, 2250);
    assert.equal(quote.body.data.items[0].lineTotal, 2200);
    const body = (items: unknown[]) => ({ body: { items } });
    expectError(
      await t.request('POST', `${API}/shops/${shopId}/quote`, body([{ productId: draft.id, quantity: 1 }])),
      404,
      'PRODUCT_NOT_FOUND',
    );
    expectError(
      await t.request(
        'POST',
        `${API}/shops/${shopId}/quote`,
        body([{ productId: tea.id, quantity: 1, variantId: tea.variants[0]._id }]),
      ),
      400,
      'INSUFFICIENT_STOCK',
    );
    expectError(
      await t.request('POST', `${API}/shops/${shopId}/quote`, body([{ productId: tea.id, quantity: 1, price: 1 }])),
      400,
      'VALIDATION_ERROR',
    );
  });

  test('a refused quote names its lines: what is left of each short one, which product is no longer sold (issue 38)', async () => {
    const quote = (items: unknown[]) => t.request('POST', `${API}/shops/${shopId}/quote`, { body: { items } });
    const jar = await createProduct(t, sk, {
      name: 'Bocal',
      price: 500,
      quantity: 5,
      status: 'ACTIVE',
      variants: [{ type: 'SIZE', label: 'Petit', priceAdjustment: 0, quantity: 2 }],
    });
    const short = await quote([
      { productId: tea.id, quantity: 1 },
      { productId: jar.id, quantity: 3, variantId: jar.variants[0]._id },
      { productId: jar.id, quantity: 1 },
      { productId: tea.id, quantity: 1, variantId: tea.variants[0]._id },
    ]);
    expectError(short, 400, 'INSUFFICIENT_STOCK');
    // Line 1: 2 of its variant; line 3: the variant has none. Line 2 (4 of 5 of the product) is fine.
    assert.deepEqual(short.body.error.details, [
      { field: 'body.items.1.quantity', message: 'must be <= 2' },
      { field: 'body.items.3.quantity', message: 'must be <= 0' },
    ]);
    assert.match(short.body.error.message, /Bocal \(Petit\), Thé à la menthe \(Grand\)/);
    // Two lines of one product share its stock: each may have what the other leaves.
    const shared = await quote([
      { productId: jar.id, quantity: 4 },
      { productId: jar.id, quantity: 2 },
    ]);
    assert.deepEqual(shared.body.error.details, [
      { field: 'body.items.0.quantity', message: 'must be <= 3' },
      { field: 'body.items.1.quantity', message: 'must be <= 1' },
    ]);

    const gone = await quote([
      { productId: tea.id, quantity: 1 },
      { productId: draft.id, quantity: 1 },
      { productId: tea.id, quantity: 1, variantId: 'var_nope' },
    ]);
    expectError(gone, 404, 'PRODUCT_NOT_FOUND');
    assert.deepEqual(
      gone.body.error.details.map((detail: { field: string }) => detail.field),
      ['body.items.1', 'body.items.2'],
    );
  });

  test('a product with variants is ordered without one at its own price; a phone typed as 8 local digits pays (issue 38)', async () => {
    const local = { phone: '41000003', pin: '4321' };
    expectStatus(
      await t.admin('POST', '/wallets', { phone: '+22241000003', pin: '4321', balance: 50_000, environment: 'test' }),
      201,
    );
    const placed = await place([{ productId: tea.id, quantity: 1 }], local);
    expectStatus(placed, 201);
    assert.equal(placed.body.data.totalAmount, 1000);
    assert.equal(placed.body.data.items[0].variant, undefined);
    assert.equal(placed.body.data.customerPhone, '+222******03');
    assert.equal(await walletBalance(t, '+22241000003'), 50_000 - 1050);
    const refused = await place([{ productId: tea.id, quantity: 1 }], { phone: '4100000', pin: '4321' });
    expectError(refused, 400, 'VALIDATION_ERROR');
    assert.equal(refused.body.error.details[0].field, 'body.phone');
  });

  test('placing an order: PIN checked, wallet charged, order readable by its link only', async () => {
    const before = await walletBalance(t, customer.phone);
    const placed = await place([{ productId: tea.id, quantity: 1 }]);
    expectStatus(placed, 201);
    const order = placed.body.data;
    assert.equal(order.status, 'NEW');
    assert.equal(order.amountPaid, 1000);
    assert.equal(order.payerFee, 50);
    assert.equal(order.canCancel, true);
    assert.match(order.customerPhone, /\*/, 'the phone is masked');
    assert.match(order.orderRef, /^[0-9A-Za-z]{32}$/);
    assert.ok(order.orderUrl.endsWith(`/o/${order.orderRef}`));
    assert.equal(await walletBalance(t, customer.phone), before - 1050);
    const read = await t.request('GET', `${API}/orders/${order.orderRef}`);
    expectStatus(read, 200);
    assert.equal(read.body.data.referenceNumber, order.referenceNumber);
    expectError(await t.request('GET', `${API}/orders/${order.referenceNumber}`), 404, 'ORDER_NOT_FOUND');
    // The merchant sees it, with the customer's link.
    const merchant = await t.request('GET', `/api/v1/dev/store/orders/${order.referenceNumber}`, { key: sk });
    assert.ok(merchant.body.data.customerUrl.endsWith(`/o/${order.orderRef}`));
    assert.equal((await eventsOf(t, sk, order.referenceNumber))[0]!.event, 'order.new');
  });

  test('a double submit with the page key places one order and charges once; the key is per customer', async () => {
    const placeWithKey = (key: string, who = customer, quantity = 1) =>
      t.request('POST', `${API}/shops/${shopId}/orders`, {
        headers: { 'x-idempotency-key': key },
        body: { items: [{ productId: tea.id, quantity }], customerName: 'Mariem', phone: who.phone, pin: who.pin },
      });
    const wallet = await walletBalance(t, customer.phone);
    const stock = Number((await stockOf(t, sk, tea.id)).quantity);
    const key = `double-${Date.now()}`;
    const [first, second] = await Promise.all([placeWithKey(key), placeWithKey(key)]);
    const statuses = [first.status, second.status].sort();
    // The two race for the key: the loser waits for the winner's answer, or is told it is in progress.
    assert.ok(
      (statuses[0] === 201 && statuses[1] === 201) || (statuses[0] === 201 && statuses[1] === 409),
      `one order: ${statuses}`,
    );
    const replay = await placeWithKey(key);
    expectStatus(replay, 201);
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    assert.equal(
      replay.body.data.referenceNumber,
      first.status === 201 ? orderRefAndRef(first) : orderRefAndRef(second),
    );
    assert.equal(await walletBalance(t, customer.phone), wallet - 1050, 'charged once');
    assert.equal((await stockOf(t, sk, tea.id)).quantity, stock - 1, 'stock taken once');
    expectError(await placeWithKey(key, customer, 2), 422, 'IDEMPOTENCY_KEY_REUSED');
    // The same key from another customer is that customer's own order.
    const other = await placeWithKey(key, rival);
    expectStatus(other, 201);
    assert.notEqual(other.body.data.referenceNumber, replay.body.data.referenceNumber);
    expectError(
      await t.request('POST', `${API}/shops/${shopId}/orders`, {
        headers: { 'x-idempotency-key': 'k'.repeat(256) },
        body: { items: [{ productId: tea.id, quantity: 1 }], customerName: 'Mariem', ...customer },
      }),
      400,
      'VALIDATION_ERROR',
    );
  });

  test('wrong PIN, unknown wallet, too little balance, too little stock: clear 4xx and nothing taken', async () => {
    const stock = Number((await stockOf(t, sk, tea.id)).quantity);
    const before = await walletBalance(t, customer.phone);
    expectError(await place([{ productId: tea.id, quantity: 1 }], { ...customer, pin: '0000' }), 401, 'INVALID_PIN');
    expectError(
      await place([{ productId: tea.id, quantity: 1 }], { phone: '+22241999999', pin: '1234' }),
      401,
      'INVALID_PIN',
    );
    expectError(await place([{ productId: tea.id, quantity: 1 }], NEARLY_EMPTY), 402, 'INSUFFICIENT_BALANCE');
    expectError(await place([{ productId: tea.id, quantity: 1 }], LOCKED), 403, 'WALLET_LOCKED');
    expectError(await place([{ productId: tea.id, quantity: 500 }]), 400, 'INSUFFICIENT_STOCK');
    expectError(await place([{ productId: draft.id, quantity: 1 }]), 404, 'PRODUCT_NOT_FOUND');
    expectError(
      await t.request('POST', `${API}/shops/${shopId}/orders`, {
        body: { items: [{ productId: tea.id, quantity: 1 }], customerName: 'M', phone: '0612', pin: '1234' },
      }),
      400,
      'VALIDATION_ERROR',
    );
    assert.equal((await stockOf(t, sk, tea.id)).quantity, stock);
    assert.equal(await walletBalance(t, customer.phone), before);
    await ledgerIsSound(t);
  });

  test('five wrong PINs lock the wallet for the storefront as for the checkout (the same lockout)', async () => {
    const victim = { phone: '+22241000009', pin: '8642' };
    expectStatus(await t.admin('POST', '/wallets', { ...victim, balance: 50_000, environment: 'test' }), 201);
    for (let i = 0; i < 5; i++) {
      const wrong = await place([{ productId: tea.id, quantity: 1 }], { ...victim, pin: '0000' });
      assert.ok(['INVALID_PIN', 'WALLET_LOCKED'].includes(wrong.body.error.code), wrong.text);
    }
    expectError(await place([{ productId: tea.id, quantity: 1 }], victim), 403, 'WALLET_LOCKED');
    assert.equal(await walletBalance(t, victim.phone), 50_000);
  });

  test('the customer cancels while NEW (refund in full, stock back), not once the shop accepted', async () => {
    const before = await walletBalance(t, customer.phone);
    const stock = Number((await stockOf(t, sk, tea.id)).quantity);
    const placed = await place([{ productId: tea.id, quantity: 2 }]);
    const ref = orderRefOf(placed);
    const cancelled = await t.request('POST', `${API}/orders/${ref}/cancel`, { body: {} });
    expectStatus(cancelled, 200);
    assert.equal(cancelled.body.data.status, 'CANCELLED');
    assert.equal(cancelled.body.data.cancellationReason, 'Cancelled by the customer');
    assert.equal(cancelled.body.data.totalAmountRefunded, 2000);
    assert.equal(await walletBalance(t, customer.phone), before - 50, 'all back but the payer fee');
    assert.equal((await stockOf(t, sk, tea.id)).quantity, stock);
    expectError(await t.request('POST', `${API}/orders/${ref}/cancel`, { body: {} }), 400, 'ORDER_INVALID_TRANSITION');
    const accepted = await place([{ productId: tea.id, quantity: 1 }]);
    await orderAction(t, sk, `/${accepted.body.data.referenceNumber}/accept`);
    const late = await t.request('POST', `${API}/orders/${orderRefOf(accepted)}/cancel`, {
      body: { reason: 'Too slow' },
    });
    expectError(late, 400, 'ORDER_INVALID_TRANSITION');
    await ledgerIsSound(t);
  });

  test('the customer accepts a modification with the PIN (difference charged) or declines it (nothing changes)', async () => {
    const placed = await place([{ productId: tea.id, quantity: 1 }]);
    const ref = orderRefOf(placed);
    const reference = placed.body.data.referenceNumber;
    expectError(await acceptShown(ref), 400, 'ORDER_INVALID_TRANSITION');
    await orderAction(t, sk, `/${reference}/propose-modification`, { items: [{ productId: tea.id, quantity: 3 }] });
    const seen = (await t.request('GET', `${API}/orders/${ref}`)).body.data;
    assert.equal(seen.proposedModification.totalAmount, 3000);
    assert.equal(seen.proposedModification.difference, 2000);
    const before = await walletBalance(t, customer.phone);
    expectError(await acceptShown(ref, '9999'), 401, 'INVALID_PIN');
    const accepted = await acceptShown(ref);
    expectStatus(accepted, 200);
    assert.equal(accepted.body.data.totalAmount, 3000);
    assert.equal(accepted.body.data.amountPaid, 3000);
    assert.equal(await walletBalance(t, customer.phone), before - 2000);

    await orderAction(t, sk, `/${reference}/propose-modification`, { items: [{ productId: tea.id, quantity: 1 }] });
    const declined = await t.request('POST', `${API}/orders/${ref}/modification/decline`, { body: {} });
    expectStatus(declined, 200);
    assert.equal(declined.body.data.totalAmount, 3000);
    assert.equal(declined.body.data.proposedModification, null);
    assert.equal(await walletBalance(t, customer.phone), before - 2000);
    assert.equal((await eventsOf(t, sk, reference)).at(-1)!.event, 'order.modification_declined');
    await ledgerIsSound(t);
  });

  test('a proposal replaced after the customer saw it is not accepted; a proposal past the maximum total is refused', async () => {
    const placed = await place([{ productId: tea.id, quantity: 1 }]);
    const ref = orderRefOf(placed);
    const reference = placed.body.data.referenceNumber;
    await orderAction(t, sk, `/${reference}/propose-modification`, { items: [{ productId: tea.id, quantity: 2 }] });
    const seen = await shownProposal(ref);
    // The shop replaces its proposal with a dearer one while the customer's page shows the first.
    await waitUntil(async () => (new Date().toISOString() > seen ? true : undefined), 'the clock to move on');
    await orderAction(t, sk, `/${reference}/propose-modification`, { items: [{ productId: tea.id, quantity: 5 }] });
    const before = await walletBalance(t, customer.phone);
    const stale = await t.request('POST', `${API}/orders/${ref}/modification/accept`, {
      body: { pin: customer.pin, proposedAt: seen },
    });
    expectError(stale, 400, 'ORDER_INVALID_TRANSITION');
    assert.equal(await walletBalance(t, customer.phone), before, 'nothing charged');
    assert.equal((await t.request('GET', `${API}/orders/${ref}`)).body.data.totalAmount, 1000);
    // A product disabled after it was proposed is not sold when the customer accepts.
    const mat = await createProduct(t, sk, { name: 'Natte', price: 700, quantity: 5, status: 'ACTIVE' });
    await orderAction(t, sk, `/${reference}/propose-modification`, { items: [{ productId: mat.id, quantity: 1 }] });
    expectStatus(
      await t.request('PATCH', `/api/v1/dev/store/products/${mat.id}`, {
        key: sk,
        idempotencyKey: true,
        body: { status: 'DISABLED' },
      }),
      200,
    );
    expectError(await acceptShown(ref), 404, 'PRODUCT_NOT_FOUND');
    assert.equal(await walletBalance(t, customer.phone), before, 'nothing charged');
    assert.equal(Number((await stockOf(t, sk, mat.id)).quantity), 5, 'no stock taken');
    const dear = await createProduct(t, sk, { name: 'Tapis', price: 50_000_000, quantity: 10, status: 'ACTIVE' });
    const tooMuch = await orderAction(t, sk, `/${reference}/propose-modification`, {
      items: [{ productId: dear.id, quantity: 3 }],
    });
    expectError(tooMuch, 400, 'AMOUNT_OUT_OF_RANGE');
  });

  test('races: two customers buy the last item; cancel vs accept; refund vs cancel; double modification accept', async () => {
    const last = await createProduct(t, sk, { name: 'Dernier', price: 700, quantity: 1, status: 'ACTIVE' });
    const [a, b] = await Promise.all([
      place([{ productId: last.id, quantity: 1 }], customer),
      place([{ productId: last.id, quantity: 1 }], rival),
    ]);
    assert.deepEqual([a.status, b.status].sort(), [201, 400], `${a.text}\n${b.text}`);
    expectError(
      [a, b].find((r) => r.status === 400)!,
      400,
      'INSUFFICIENT_STOCK',
    );
    assert.equal((await stockOf(t, sk, last.id)).quantity, 0);

    for (let round = 0; round < 3; round++) {
      // A wallet per round: the per-wallet limit (20 PIN uses a minute) is not what this tests.
      const customer = { phone: `+2224200000${round}`, pin: '4321' };
      expectStatus(await t.admin('POST', '/wallets', { ...customer, balance: 50_000, environment: 'test' }), 201);
      const place = (items: unknown[]) =>
        t.request('POST', `${API}/shops/${shopId}/orders`, {
          body: { items, customerName: 'Mariem', phone: customer.phone, pin: customer.pin },
        });
      const merchantBefore = await merchantBalance(t, sk);
      const walletBefore = await walletBalance(t, customer.phone);
      // The customer's cancel against the merchant's accept: one consistent outcome.
      const one = await place([{ productId: tea.id, quantity: 1 }]);
      const [cancel, accept] = await Promise.all([
        t.request('POST', `${API}/orders/${orderRefOf(one)}/cancel`, { body: {} }),
        orderAction(t, sk, `/${one.body.data.referenceNumber}/accept`),
      ]);
      const statuses = [cancel.status, accept.status].sort();
      assert.deepEqual(statuses, [200, 400], `${cancel.text}\n${accept.text}`);
      if (cancel.status === 200) {
        assert.equal(await walletBalance(t, customer.phone), walletBefore - 50);
        await orderAction(t, sk, `/${one.body.data.referenceNumber}/refund`).then((r) =>
          expectError(r, 400, 'ORDER_INVALID_TRANSITION'),
        );
      } else {
        assert.equal(await walletBalance(t, customer.phone), walletBefore - 1050);
        await orderAction(t, sk, `/${one.body.data.referenceNumber}/cancel`, { reason: 'x' });
      }
      // Refund against cancel: exactly one pays back, and only once.
      const two = await place([{ productId: tea.id, quantity: 1 }]);
      const ref = two.body.data.referenceNumber;
      const [refund, cancel2] = await Promise.all([
        orderAction(t, sk, `/${ref}/refund`),
        orderAction(t, sk, `/${ref}/cancel`, { reason: 'race' }),
      ]);
      assert.deepEqual([refund.status, cancel2.status].sort(), [200, 400], `${refund.text}\n${cancel2.text}`);
      // Two accepts of one proposal: the difference is charged once.
      const three = await place([{ productId: tea.id, quantity: 1 }]);
      await orderAction(t, sk, `/${three.body.data.referenceNumber}/propose-modification`, {
        items: [{ productId: tea.id, quantity: 2 }],
      });
      const accepts = await Promise.all([1, 2].map(() => acceptShown(orderRefOf(three))));
      assert.deepEqual(accepts.map((r) => r.status).sort(), [200, 400], accepts.map((r) => r.text).join('\n'));
      // Every order of this round is refunded or cancelled except `three`, which holds 2 teas.
      assert.equal(await walletBalance(t, customer.phone), walletBefore - 50 * 3 - 2000);
      assert.equal(await merchantBalance(t, sk), merchantBefore + 2000 - 20);
      // Cancel vs modification accept: serialized on the order; money ends consistent either way.
      await orderAction(t, sk, `/${three.body.data.referenceNumber}/propose-modification`, {
        items: [{ productId: tea.id, quantity: 1 }],
      });
      const [c, m] = await Promise.all([
        t.request('POST', `${API}/orders/${orderRefOf(three)}/cancel`, { body: {} }),
        acceptShown(orderRefOf(three)),
      ]);
      expectStatus(c, 200);
      assert.ok(m.status === 200 || m.status === 400, m.text);
      assert.equal(await walletBalance(t, customer.phone), walletBefore - 50 * 3);
      assert.equal(await merchantBalance(t, sk), merchantBefore);
    }
    await ledgerIsSound(t);
  });

  test('rate limited per address and per wallet like the checkout API, with the limit headers', async () => {
    // A limiter clock that stands still: the attempts fall in one window however long they take.
    const limited = await startTestApp({ clock: manualClock(), testDatabase: sharedDatabase(t.testDatabase) });
    try {
      const phone = '+22241888888';
      const statuses: number[] = [];
      for (let i = 0; i < 21; i++) {
        const response = await limited.request('POST', `${API}/shops/${shopId}/orders`, {
          body: { items: [{ productId: tea.id, quantity: 1 }], customerName: 'M', phone, pin: '1234' },
        });
        statuses.push(response.status);
      }
      // Wrong PINs (401) until the phone locks after five (403, as a wallet does), then the limit.
      assert.deepEqual(statuses.slice(0, 4), Array(4).fill(401));
      assert.deepEqual(statuses.slice(4, 20), Array(16).fill(403));
      assert.equal(statuses[20], 429);
      let last;
      for (let i = 21; i < 121; i++) last = await limited.request('GET', `${API}/shops/shop_nope`);
      expectError(last!, 429, 'RATE_LIMITED');
      assert.ok(Number(last!.headers.get('retry-after')) >= 1);
      assert.equal(last!.headers.get('x-ratelimit-limit'), '120');
    } finally {
      await limited.close();
    }
  });
});
