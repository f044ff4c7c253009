import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { expectError, expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { eventsOf } from '../support/read-api.js';
import { createProduct, stockOf, write } from './support.js';

const BULK = '/api/v1/dev/store/inventory';

describe('inventory and stock events (decisions "Products"; api.md 6.4)', () => {
  let t: TestApp;
  let business: TestBusiness;
  let sk: string;
  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    business = await t.createBusiness();
    sk = business.keys.secretTest;
  });
  afterAll(() => t.close());

  const inventory = (ref: string, body: unknown) => write(t, sk, 'PATCH', `/${ref}/inventory`, body);

  test('quantity sets, delta adds; the answer is the product', async () => {
    const product = await createProduct(t, sk, { name: 'Soap', price: 100, externalId: 'SOAP', quantity: 20 });
    const set = await inventory('SOAP', { quantity: 50 });
    expectStatus(set, 200);
    assert.equal(set.body.data.id, product.id);
    assert.equal(set.body.data.quantity, 50);
    assert.equal((await inventory(product.id, { delta: -15 })).body.data.quantity, 35);
    assert.equal((await inventory(product.id, { delta: 5 })).body.data.quantity, 40);
    assert.equal((await inventory(product.id, { quantity: null })).body.data.quantity, null, 'unlimited');
    expectError(await inventory(product.id, { delta: -1 }), 400, 'VALIDATION_ERROR');
    expectError(await inventory(product.id, {}), 400, 'VALIDATION_ERROR');
    expectError(await inventory(product.id, { quantity: 1, delta: 1 }), 400, 'VALIDATION_ERROR');
    expectError(await inventory(product.id, { quantity: -1 }), 400, 'VALIDATION_ERROR');
    await inventory(product.id, { quantity: 2 });
    expectError(await inventory(product.id, { delta: -3 }), 400, 'INSUFFICIENT_STOCK');
    expectError(await inventory('NOPE', { delta: -1 }), 404, 'PRODUCT_NOT_FOUND');
    assert.equal((await inventory(product.id, { delta: 0 })).body.data.quantity, 2);
  });

  test('variants by variantId or variantLabel; VARIANT_NOT_FOUND and VARIANT_LABEL_AMBIGUOUS', async () => {
    const product = await createProduct(t, sk, {
      name: 'Shirt',
      price: 100,
      variants: [
        { type: 'COLOR', label: 'Red', quantity: 10 },
        { type: 'SIZE', label: 'M', quantity: 10 },
        { type: 'FIT', label: 'M', quantity: 10 },
      ],
    });
    const [red, sizeM] = product.variants;
    const byLabel = await inventory(product.id, { variantLabel: 'Red', delta: -4 });
    expectStatus(byLabel, 200);
    assert.equal(byLabel.body.data.variants[0].quantity, 6);
    assert.equal(byLabel.body.data.quantity, null, 'the product stock is untouched');
    const byId = await inventory(product.id, { variantId: sizeM._id, quantity: 3 });
    assert.equal(byId.body.data.variants[1].quantity, 3);
    assert.equal(byId.body.data.variants[2].quantity, 10);
    expectError(await inventory(product.id, { variantLabel: 'M', delta: -1 }), 400, 'VARIANT_LABEL_AMBIGUOUS');
    expectError(await inventory(product.id, { variantLabel: 'Blue', delta: -1 }), 404, 'VARIANT_NOT_FOUND');
    expectError(await inventory(product.id, { variantId: 'var_nope', delta: -1 }), 404, 'VARIANT_NOT_FOUND');
    expectError(
      await inventory(product.id, { variantId: red._id, variantLabel: 'Red', delta: -1 }),
      400,
      'VALIDATION_ERROR',
    );
    expectError(await inventory(product.id, { variantId: red._id, delta: -7 }), 400, 'INSUFFICIENT_STOCK');
  });

  test('bulk updates naming the same products in opposite orders all apply: they queue, never deadlock', async () => {
    const first = await createProduct(t, sk, { name: 'Left', price: 100, quantity: 1000 });
    const second = await createProduct(t, sk, { name: 'Right', price: 100, quantity: 1000 });
    const pairs = 20;
    const responses = await Promise.all(
      Array.from({ length: pairs }, (_, i) => {
        const items = [
          { id: first.id, delta: -1 },
          { id: second.id, delta: -2 },
        ];
        return t.request('POST', BULK, {
          key: sk,
          idempotencyKey: true,
          body: { items: i % 2 === 0 ? items : [...items].reverse() },
        });
      }),
    );
    for (const response of responses) expectStatus(response, 200);
    assert.deepEqual(
      {
        [first.id]: (await stockOf(t, sk, first.id)).quantity,
        [second.id]: (await stockOf(t, sk, second.id)).quantity,
      },
      {
        [first.id]: 1000 - pairs,
        [second.id]: 1000 - 2 * pairs,
      },
    );
  });

  test('100 concurrent "delta -1" on a stock of 100 leave exactly 0, never below', async () => {
    const product = await createProduct(t, sk, { name: 'Hot item', price: 100, quantity: 100 });
    const responses = await Promise.all(Array.from({ length: 110 }, () => inventory(product.id, { delta: -1 })));
    assert.equal(responses.filter((r) => r.status === 200).length, 100);
    for (const response of responses.filter((r) => r.status !== 200)) expectError(response, 400, 'INSUFFICIENT_STOCK');
    assert.equal((await stockOf(t, sk, product.id)).quantity, 0);
    const events = await eventsOf(t, sk, product.id);
    assert.deepEqual(
      events.map((e) => e.event),
      ['product.stock_low', 'product.stock_out'],
      'one crossing, one stock-out, whatever the interleaving',
    );
  });

  test('stock_low once per downward crossing, stock_out on reaching 0, with the exact payloads', async () => {
    const product = await createProduct(t, sk, {
      name: 'Tea box',
      price: 100,
      externalId: 'TEA-BOX',
      quantity: 10,
      lowStockThreshold: 5,
    });
    await inventory(product.id, { delta: -4 }); // 6: above
    assert.deepEqual(await eventsOf(t, sk, product.id), []);
    await inventory(product.id, { delta: -2 }); // 4: crosses
    await inventory(product.id, { delta: -1 }); // 3: still low, no new event
    let events = await eventsOf(t, sk, product.id);
    assert.equal(events.length, 1);
    const low = events[0]!;
    assert.deepEqual(Object.keys(low), ['id', 'event', 'timestamp', 'sandbox', 'data', 'sequence']);
    assert.match(low.id, /^evt_/);
    assert.equal(low.event, 'product.stock_low');
    assert.match(low.timestamp as string, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    assert.equal(low.sandbox, true);
    assert.deepEqual(low.data, {
      productId: product.id,
      externalId: 'TEA-BOX',
      name: 'Tea box',
      quantity: 4,
      lowStockThreshold: 5,
      shopId: business.shopId,
    });
    await inventory(product.id, { quantity: 8 }); // back up: no event
    await inventory(product.id, { delta: -6 }); // 2: a second crossing
    await inventory(product.id, { delta: -2 }); // 0: out
    events = await eventsOf(t, sk, product.id);
    assert.deepEqual(
      events.map((e) => [e.event, e.data.quantity]),
      [
        ['product.stock_low', 4],
        ['product.stock_low', 2],
        ['product.stock_out', 0],
      ],
    );
    assert.deepEqual(events[2]!.data, {
      productId: product.id,
      externalId: 'TEA-BOX',
      name: 'Tea box',
      quantity: 0,
      shopId: business.shopId,
    });
    await inventory(product.id, { quantity: 0 }); // already 0: nothing new
    assert.equal((await eventsOf(t, sk, product.id)).length, 3);
  });

  test('a drop straight to 0 sends stock_low then stock_out; unlimited counts as above the threshold', async () => {
    const product = await createProduct(t, sk, { name: 'Unlimited', price: 100 });
    await inventory(product.id, { quantity: 0 });
    assert.deepEqual(
      (await eventsOf(t, sk, product.id)).map((e) => e.event),
      ['product.stock_low', 'product.stock_out'],
    );
  });

  test('variant stock sends the same events, naming the variant', async () => {
    const product = await createProduct(t, sk, {
      name: 'Cap',
      price: 100,
      variants: [{ type: 'COLOR', label: 'Blue', quantity: 5 }],
    });
    const blue = product.variants[0];
    await inventory(product.id, { variantId: blue._id, delta: -5 });
    const events = await eventsOf(t, sk, product.id);
    assert.deepEqual(
      events.map((e) => e.event),
      ['product.stock_low', 'product.stock_out'],
    );
    assert.deepEqual(events[0]!.data, {
      productId: product.id,
      externalId: null,
      name: 'Cap',
      quantity: 0,
      lowStockThreshold: 5,
      shopId: business.shopId,
      variantId: blue._id,
      variantLabel: 'Blue',
    });
  });

  test('a PATCH or PUT that lowers the stock sends the events too, in its transaction', async () => {
    const product = await createProduct(t, sk, { name: 'Patched', price: 100, quantity: 10 });
    expectStatus(await write(t, sk, 'PATCH', `/${product.id}`, { quantity: 1 }), 200);
    expectStatus(await write(t, sk, 'PUT', `/${product.id}`, { name: 'Patched', price: 100, quantity: 0 }), 200);
    assert.deepEqual(
      (await eventsOf(t, sk, product.id)).map((e) => [e.event, e.data.quantity]),
      [
        ['product.stock_low', 1],
        ['product.stock_out', 0],
      ],
    );
  });

  test('bulk: by id or externalId, all or nothing', async () => {
    const a = await createProduct(t, sk, { name: 'Bulk A', price: 100, externalId: 'BULK-A', quantity: 10 });
    const b = await createProduct(t, sk, {
      name: 'Bulk B',
      price: 100,
      quantity: 10,
      variants: [{ type: 'SIZE', label: 'L', quantity: 3 }],
    });
    const ok = await t.request('POST', BULK, {
      key: sk,
      idempotencyKey: true,
      body: {
        items: [
          { externalId: 'BULK-A', delta: -2 },
          { id: b.id, quantity: 7 },
          { id: b.id, variantLabel: 'L', delta: 2 },
          { externalId: 'BULK-A', delta: -3 },
        ],
      },
    });
    expectStatus(ok, 200);
    const byId = Object.fromEntries(ok.body.data.items.map((p: { id: string }) => [p.id, p]));
    assert.equal(byId[a.id].quantity, 5);
    assert.equal(byId[b.id].quantity, 7);
    assert.equal(byId[b.id].variants[0].quantity, 5);

    const failing = await t.request('POST', BULK, {
      key: sk,
      idempotencyKey: true,
      body: {
        items: [
          { externalId: 'BULK-A', delta: -1 },
          { id: b.id, delta: -100 },
        ],
      },
    });
    expectError(failing, 400, 'INSUFFICIENT_STOCK');
    const after = await t.request('GET', `/api/v1/dev/store/products/BULK-A`, { key: sk });
    assert.equal(after.body.data.quantity, 5, 'the first item was rolled back');
    for (const body of [
      { items: [] },
      { items: [{ delta: -1 }] },
      { items: [{ id: a.id, externalId: 'BULK-A', delta: -1 }] },
      { items: Array.from({ length: 501 }, () => ({ id: a.id, delta: 0 })) },
    ]) {
      expectError(await t.request('POST', BULK, { key: sk, idempotencyKey: true, body }), 400, 'VALIDATION_ERROR');
    }
    expectError(
      await t.request('POST', BULK, {
        key: sk,
        idempotencyKey: true,
        body: { items: [{ externalId: 'NOPE', delta: 1 }] },
      }),
      404,
      'PRODUCT_NOT_FOUND',
    );
  });
});
