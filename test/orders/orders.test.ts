import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { expectError, expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { createProduct, stockOf } from '../products/support.js';
import { eventsOf } from '../support/read-api.js';

const ORDERS = '/api/v1/dev/store/orders';
const ACTIONS = ['accept', 'ready', 'pickup', 'deliver', 'cancel'] as const;

describe('orders (api.md 2.5, 3.3, 4.4, 6.4; decisions "Orders")', () => {
  let t: TestApp;
  let business: TestBusiness;
  let sk: string;
  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    business = await t.createBusiness({ name: 'Chez Fatou' });
    sk = business.keys.secretTest;
  });
  afterAll(() => t.close());

  const post = (path: string, body?: unknown, key = sk) =>
    t.request('POST', `${ORDERS}${path}`, { key, idempotencyKey: true, ...(body !== undefined ? { body } : {}) });
  const act = (reference: string, action: string, body?: unknown) =>
    post(`/${reference}/${action}`, body ?? (action === 'cancel' ? { reason: 'Out of mint' } : {}));

  async function catalog() {
    const tea = await createProduct(t, sk, {
      name: 'Mint tea',
      price: 1000,
      externalId: `TEA-${Math.random()}`,
      quantity: 10,
      status: 'ACTIVE',
      variants: [{ type: 'SIZE', label: 'Large', priceAdjustment: 200, quantity: 5 }],
      options: [
        { name: 'Sugar', priceAdjustment: 50 },
        { name: 'Mint', priceAdjustment: 25 },
      ],
    });
    const bread = await createProduct(t, sk, { name: 'Bread', price: 300, status: 'ACTIVE' });
    return { tea, bread };
  }

  async function placeOrder(items?: unknown[]) {
    const { tea, bread } = await catalog();
    const response = await post('/simulate', {
      items: items ?? [
        { productId: tea.id, quantity: 1 },
        { productId: bread.id, quantity: 1 },
      ],
      customerName: 'Aicha',
      customerPhone: '+22236123456',
    });
    expectStatus(response, 201);
    return { order: response.body.data, tea, bread };
  }

  test('simulate: the server prices the order, takes stock and sends order.new with the fields of api.md 2.5', async () => {
    const { tea, bread } = await catalog();
    const [large] = tea.variants;
    const [sugar, mint] = tea.options;
    const response = await post('/simulate', {
      items: [
        { productId: tea.externalId, quantity: 2, variantId: large._id, optionIds: [sugar._id, mint._id] },
        { productId: bread.id, quantity: 1 },
      ],
      customerName: 'Aicha',
      customerPhone: '+22236123456',
    });
    expectStatus(response, 201);
    const order = response.body.data;
    assert.match(order.referenceNumber, /^OR-\d+$/);
    assert.equal(order.status, 'NEW');
    assert.equal(order.paid, true);
    assert.equal(order.shopId, business.shopId);
    assert.equal(order.shopName, 'Chez Fatou');
    // (1000 + 200 + 50 + 25) × 2 + 300 × 1
    assert.equal(order.totalAmount, 2850);
    assert.equal(order.customerPhone, '+22236123456');
    assert.deepEqual(
      order.history.map((h: { status: string }) => h.status),
      ['NEW'],
    );

    const [event] = await eventsOf(t, sk, order.referenceNumber);
    assert.deepEqual(Object.keys(event!), ['id', 'event', 'timestamp', 'sandbox', 'data', 'sequence']);
    assert.equal(event!.event, 'order.new');
    assert.equal(event!.sandbox, true);
    assert.deepEqual(event!.data, {
      referenceNumber: order.referenceNumber,
      shopId: business.shopId,
      shopName: 'Chez Fatou',
      status: 'NEW',
      items: [
        {
          productId: tea.id,
          name: 'Mint tea',
          quantity: 2,
          price: 1000,
          variant: { label: 'Large', priceAdjustment: 200 },
          options: [
            { name: 'Sugar', priceAdjustment: 50 },
            { name: 'Mint', priceAdjustment: 25 },
          ],
        },
        { productId: bread.id, name: 'Bread', quantity: 1, price: 300 },
      ],
      totalAmount: 2850,
      customerPhone: '+22236123456',
      customerName: 'Aicha',
      createdAt: order.createdAt,
    });

    const stock = await stockOf(t, sk, tea.id);
    assert.equal(stock.quantity, 8, 'product stock taken');
    assert.equal(stock.variants[0]!.quantity, 3, 'variant stock taken');
    assert.deepEqual(
      (await eventsOf(t, sk, tea.id)).map((e) => [e.event, e.data.quantity, e.data.variantLabel ?? null]),
      [['product.stock_low', 3, 'Large']],
      'stock events fire as for any stock change',
    );

    // Later product edits do not change the order.
    await t.request('PATCH', `/api/v1/dev/store/products/${tea.id}`, {
      key: sk,
      idempotencyKey: true,
      body: { price: 9999, name: 'Renamed' },
    });
    const again = await t.request('GET', `${ORDERS}/${order.referenceNumber}`, { key: sk });
    assert.deepEqual(again.body.data.items, order.items);
    assert.equal(again.body.data.totalAmount, 2850);
  });

  test('simulate refuses unknown, disabled and foreign products, unknown variants, too little stock; nothing is taken', async () => {
    const { tea, bread } = await catalog();
    const draft = await createProduct(t, sk, { name: 'Draft', price: 100 });
    const stranger = await t.createBusiness({ name: 'Stranger' });
    const theirs = await createProduct(t, stranger.keys.secretTest, { name: 'Theirs', price: 100, status: 'ACTIVE' });
    const order = (items: unknown[]) => post('/simulate', { items, customerName: 'Aicha' });
    for (const productId of ['prod_nope', draft.id, theirs.id]) {
      expectError(await order([{ productId, quantity: 1 }]), 404, 'PRODUCT_NOT_FOUND');
    }
    expectError(await order([{ productId: tea.id, quantity: 1, variantId: 'var_nope' }]), 404, 'VARIANT_NOT_FOUND');
    // Lines are refused in their order: the first line's unknown variant before the second's unknown product.
    const both = await order([
      { productId: tea.id, quantity: 1, variantId: 'var_nope' },
      { productId: 'prod_nope', quantity: 1 },
    ]);
    expectError(both, 404, 'VARIANT_NOT_FOUND');
    expectError(
      await order([
        { productId: 'prod_nope', quantity: 1 },
        { productId: tea.id, quantity: 1, variantId: 'var_nope' },
      ]),
      404,
      'PRODUCT_NOT_FOUND',
    );
    expectError(await order([{ productId: tea.id, quantity: 1, optionIds: ['opt_nope'] }]), 400, 'VALIDATION_ERROR');
    const tooMany = await order([
      { productId: bread.id, quantity: 1 },
      { productId: tea.id, quantity: 11 },
    ]);
    expectError(tooMany, 400, 'INSUFFICIENT_STOCK');
    expectError(
      await order([{ productId: tea.id, quantity: 6, variantId: tea.variants[0]._id }]),
      400,
      'INSUFFICIENT_STOCK',
    );
    expectError(
      await order([
        { productId: tea.id, quantity: 6 },
        { productId: tea.id, quantity: 5 },
      ]),
      400,
      'INSUFFICIENT_STOCK',
    );
    assert.equal((await stockOf(t, sk, tea.id)).quantity, 10, 'nothing was taken');
    for (const body of [
      { items: [], customerName: 'A' },
      { items: [{ productId: tea.id, quantity: 0 }], customerName: 'A' },
      { items: [{ productId: tea.id, quantity: 1 }] },
      { items: [{ productId: tea.id, quantity: 1 }], customerName: 'A', customerPhone: '0612345678' },
    ]) {
      expectError(await post('/simulate', body), 400, 'VALIDATION_ERROR');
    }
    expectError(
      await post(
        '/simulate',
        { items: [{ productId: tea.id, quantity: 1 }], customerName: 'A' },
        business.keys.secretLive,
      ),
      403,
      'SANDBOX_ONLY',
    );
  });

  test('the workflow NEW → PREPARING → READY → PICKED_UP → DELIVERED, with its events and history', async () => {
    const { order } = await placeOrder();
    const ref = order.referenceNumber;
    for (const [action, status] of [
      ['accept', 'PREPARING'],
      ['ready', 'READY'],
      ['pickup', 'PICKED_UP'],
      ['deliver', 'DELIVERED'],
    ] as const) {
      const response = await act(ref, action);
      expectStatus(response, 200);
      assert.equal(response.body.data.status, status);
    }
    const final = (await t.request('GET', `${ORDERS}/${ref}`, { key: sk })).body.data;
    assert.deepEqual(
      final.history.map((h: { status: string; previousStatus: string | null }) => [h.previousStatus, h.status]),
      [
        [null, 'NEW'],
        ['NEW', 'PREPARING'],
        ['PREPARING', 'READY'],
        ['READY', 'PICKED_UP'],
        ['PICKED_UP', 'DELIVERED'],
      ],
    );
    const events = await eventsOf(t, sk, ref);
    assert.deepEqual(
      events.map((e) => e.event),
      ['order.new', 'order.accepted', 'order.ready', 'order.delivered'],
      'pickup has no event of its own',
    );
    assert.deepEqual(events[1]!.data, { referenceNumber: ref, status: 'PREPARING', previousStatus: 'NEW' });
    assert.deepEqual(events[2]!.data, { referenceNumber: ref, status: 'READY', previousStatus: 'PREPARING' });
    assert.deepEqual(events[3]!.data, { referenceNumber: ref, status: 'DELIVERED', previousStatus: 'PICKED_UP' });
  });

  test('every other transition is ORDER_INVALID_TRANSITION, from every status', async () => {
    const allowed: Record<string, string[]> = {
      NEW: ['accept', 'cancel'],
      PREPARING: ['ready', 'cancel'],
      READY: ['pickup'],
      PICKED_UP: ['deliver'],
      DELIVERED: [],
      CANCELLED: [],
      REFUNDED: [],
    };
    const reach: Record<string, string[]> = {
      NEW: [],
      PREPARING: ['accept'],
      READY: ['accept', 'ready'],
      PICKED_UP: ['accept', 'ready', 'pickup'],
      DELIVERED: ['accept', 'ready', 'pickup', 'deliver'],
      CANCELLED: ['cancel'],
      REFUNDED: ['refund'],
    };
    for (const [status, path] of Object.entries(reach)) {
      const { order } = await placeOrder();
      for (const step of path) expectStatus(await act(order.referenceNumber, step), 200);
      for (const action of ACTIONS.filter((a) => !allowed[status]!.includes(a))) {
        const response = await act(order.referenceNumber, action);
        expectError(response, 400, 'ORDER_INVALID_TRANSITION');
      }
      const stored = (await t.request('GET', `${ORDERS}/${order.referenceNumber}`, { key: sk })).body.data;
      assert.equal(stored.status, status);
    }
  });

  test('cancel from NEW or PREPARING returns the stock and carries the reason', async () => {
    for (const before of [[], ['accept']]) {
      const { order, tea } = await placeOrder();
      for (const step of before) await act(order.referenceNumber, step);
      assert.equal((await stockOf(t, sk, tea.id)).quantity, 9);
      expectError(await post(`/${order.referenceNumber}/cancel`, {}), 400, 'VALIDATION_ERROR');
      const response = await act(order.referenceNumber, 'cancel', { reason: 'Customer changed their mind' });
      expectStatus(response, 200);
      assert.equal(response.body.data.status, 'CANCELLED');
      assert.equal(response.body.data.cancellationReason, 'Customer changed their mind');
      assert.equal((await stockOf(t, sk, tea.id)).quantity, 10, 'stock returned');
      const cancelled = (await eventsOf(t, sk, order.referenceNumber)).at(-1)!;
      assert.deepEqual(cancelled.data, {
        referenceNumber: order.referenceNumber,
        status: 'CANCELLED',
        previousStatus: before.length ? 'PREPARING' : 'NEW',
        cancellationReason: 'Customer changed their mind',
        amountRefunded: order.totalAmount,
      });
    }
  });

  test('refunds: partial then full, from any paid status, with order.refunded amounts', async () => {
    const { order } = await placeOrder();
    const ref = order.referenceNumber;
    await act(ref, 'accept');
    expectError(await act(ref, 'refund', { amount: 0 }), 400, 'REFUND_AMOUNT_INVALID');
    expectError(await act(ref, 'refund', { amount: order.totalAmount + 1 }), 400, 'REFUND_AMOUNT_INVALID');
    const partial = await act(ref, 'refund', { amount: 500 });
    expectStatus(partial, 200);
    assert.equal(partial.body.data.status, 'REFUNDED');
    assert.equal(partial.body.data.totalAmountRefunded, 500);
    const rest = await act(ref, 'refund', {});
    assert.equal(rest.body.data.totalAmountRefunded, order.totalAmount);
    assert.deepEqual(
      rest.body.data.refunds.map((r: { amount: number }) => r.amount),
      [500, order.totalAmount - 500],
    );
    expectError(await act(ref, 'refund', { amount: 1 }), 400, 'ORDER_INVALID_TRANSITION');
    const refunded = (await eventsOf(t, sk, ref)).filter((e) => e.event === 'order.refunded');
    assert.deepEqual(refunded[0]!.data, {
      referenceNumber: ref,
      status: 'REFUNDED',
      amountRefunded: 500,
      totalAmountRefunded: 500,
      totalAmount: order.totalAmount,
    });
    assert.deepEqual(refunded[1]!.data, {
      referenceNumber: ref,
      status: 'REFUNDED',
      amountRefunded: order.totalAmount - 500,
      totalAmountRefunded: order.totalAmount,
      totalAmount: order.totalAmount,
    });
    const history = rest.body.data.history.map((h: { status: string }) => h.status);
    assert.deepEqual(history, ['NEW', 'PREPARING', 'REFUNDED']);
    // A cancel refunds a paid order in full (issue 11): nothing is left for a refund after it.
    const other = await placeOrder();
    await act(other.order.referenceNumber, 'cancel');
    expectError(await act(other.order.referenceNumber, 'refund', {}), 400, 'ORDER_INVALID_TRANSITION');
  });

  test('modification: proposed by the merchant, accepted by the customer, stock and totals follow', async () => {
    const { order, tea, bread } = await placeOrder();
    const ref = order.referenceNumber;
    const proposed = await post(`/${ref}/propose-modification`, { items: [{ productId: tea.id, quantity: 3 }] });
    expectStatus(proposed, 200);
    assert.equal(proposed.body.data.proposedModification.totalAmount, 3000);
    assert.equal(proposed.body.data.totalAmount, order.totalAmount, 'nothing changes before the customer accepts');
    assert.equal((await stockOf(t, sk, tea.id)).quantity, 9);
    const accepted = await post(`/${ref}/modification/accept`, {});
    expectStatus(accepted, 200);
    assert.equal(accepted.body.data.totalAmount, 3000);
    assert.equal(accepted.body.data.proposedModification, null);
    assert.equal(accepted.body.data.status, 'NEW', 'the status does not move');
    assert.equal((await stockOf(t, sk, tea.id)).quantity, 7, '1 returned, 3 taken');
    const modified = (await eventsOf(t, sk, ref)).at(-1)!;
    assert.equal(modified.event, 'order.modified');
    assert.deepEqual(modified.data, {
      referenceNumber: ref,
      previousTotalAmount: order.totalAmount,
      newTotalAmount: 3000,
      modifiedItems: [{ productId: tea.id, name: 'Mint tea', quantity: 3 }],
    });
    assert.ok(bread);
    expectError(await post(`/${ref}/modification/accept`, {}), 400, 'ORDER_INVALID_TRANSITION');
    expectError(await post(`/${ref}/modification/accept`, {}, business.keys.secretLive), 403, 'SANDBOX_ONLY');
    await act(ref, 'accept');
    await act(ref, 'ready');
    expectError(
      await post(`/${ref}/propose-modification`, { items: [{ productId: tea.id, quantity: 1 }] }),
      400,
      'ORDER_INVALID_TRANSITION',
    );
    expectError(
      await post(`/${ref}/propose-modification`, { items: [{ productId: 'prod_nope', quantity: 1 }] }),
      400,
      'ORDER_INVALID_TRANSITION',
    );
  });

  test('concurrent actions on one order resolve to one outcome', async () => {
    for (let round = 0; round < 4; round++) {
      // accept vs accept, cancel vs cancel: exactly one of each pair wins.
      for (const action of ['accept', 'cancel'] as const) {
        const { order, tea } = await placeOrder();
        const responses = await Promise.all([act(order.referenceNumber, action), act(order.referenceNumber, action)]);
        assert.equal(responses.filter((r) => r.status === 200).length, 1, responses.map((r) => r.text).join('\n'));
        expectError(
          responses.find((r) => r.status !== 200)!,
          400,
          'ORDER_INVALID_TRANSITION',
        );
        assert.equal(
          (await stockOf(t, sk, tea.id)).quantity,
          action === 'cancel' ? 10 : 9,
          'stock returned once at most',
        );
      }
      // accept vs cancel: cancel is allowed from NEW and PREPARING, so the order always ends
      // CANCELLED; accept succeeds only if it came first, and the stock comes back once.
      const { order, tea } = await placeOrder();
      const [accept, cancel] = await Promise.all([
        act(order.referenceNumber, 'accept'),
        act(order.referenceNumber, 'cancel'),
      ]);
      expectStatus(cancel, 200);
      assert.equal(cancel.body.data.status, 'CANCELLED');
      const events = (await eventsOf(t, sk, order.referenceNumber)).map((e) => e.event);
      if (accept.status === 200) {
        assert.deepEqual(events, ['order.new', 'order.accepted', 'order.cancelled']);
        assert.equal(cancel.body.data.history.at(-1).previousStatus, 'PREPARING');
      } else {
        expectError(accept, 400, 'ORDER_INVALID_TRANSITION');
        assert.deepEqual(events, ['order.new', 'order.cancelled']);
      }
      assert.equal((await stockOf(t, sk, tea.id)).quantity, 10);
    }
  });

  test('reading: get, list with filters and pagination; ORDER_NOT_FOUND across businesses and environments', async () => {
    const owner = await t.createBusiness({ name: 'Reader' });
    const key = owner.keys.secretTest;
    const product = await createProduct(t, key, { name: 'Item', price: 100, status: 'ACTIVE' });
    const refs: string[] = [];
    for (let i = 0; i < 3; i++) {
      const response = await post(
        '/simulate',
        { items: [{ productId: product.id, quantity: 1 }], customerName: `C${i}` },
        key,
      );
      refs.push(response.body.data.referenceNumber);
    }
    await post(`/${refs[0]}/accept`, {}, key);
    const list = await t.request('GET', `${ORDERS}?limit=2`, { key });
    expectStatus(list, 200);
    assert.equal(list.body.data.total, 3);
    assert.equal(list.body.data.hasMore, true);
    assert.deepEqual(
      list.body.data.items.map((o: { referenceNumber: string }) => o.referenceNumber),
      [refs[2], refs[1]],
    );
    const preparing = await t.request('GET', `${ORDERS}?status=PREPARING`, { key });
    assert.deepEqual(
      preparing.body.data.items.map((o: { referenceNumber: string }) => o.referenceNumber),
      [refs[0]],
    );
    assert.equal((await t.request('GET', `${ORDERS}?from=2999-01-01`, { key })).body.data.total, 0);
    expectError(await t.request('GET', `${ORDERS}?status=LOST`, { key }), 400, 'VALIDATION_ERROR');
    const got = await t.request('GET', `${ORDERS}/${refs[1]}`, { key });
    assert.equal(got.body.data.customerName, 'C1');
    expectError(await t.request('GET', `${ORDERS}/${refs[1]}`, { key: sk }), 404, 'ORDER_NOT_FOUND');
    // The owner's live key on its sandbox order: SANDBOX_MISMATCH (issue 15 item 10).
    expectError(
      await t.request('GET', `${ORDERS}/${refs[1]}`, { key: owner.keys.secretLive }),
      403,
      'SANDBOX_MISMATCH',
    );
    expectError(await post(`/${refs[1]}/accept`, {}, sk), 404, 'ORDER_NOT_FOUND');
    expectError(await t.request('GET', `${ORDERS}/OR-000`, { key }), 404, 'ORDER_NOT_FOUND');
    expectError(await t.request('GET', ORDERS, { key: owner.keys.publishableTest }), 403, 'SECRET_KEY_REQUIRED');
    const scoped = async (scopes: string[]) =>
      (await t.admin('POST', '/keys', { businessId: owner.id, kind: 'secret', environment: 'test', scopes })).body.data
        .key as string;
    const readOnly = await scoped(['store.orders:read']);
    expectStatus(await t.request('GET', ORDERS, { key: readOnly }), 200);
    expectError(await post(`/${refs[1]}/accept`, {}, readOnly), 403, 'SCOPE_REQUIRED');
    const writeOnly = await scoped(['store.orders:write']);
    expectError(await t.request('GET', ORDERS, { key: writeOnly }), 403, 'SCOPE_REQUIRED');
  });
});
