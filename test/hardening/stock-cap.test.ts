import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { expectError, expectStatus, startTestApp, type TestApp } from '../support/harness.js';
import { createProduct, PRODUCTS, write } from '../products/support.js';

const ORDERS = '/api/v1/dev/store/orders';
const MAX_STOCK = 1_000_000_000;

describe('stock given back by a cancelled order stops at the 1e9 maximum (issue 15)', () => {
  let t: TestApp;
  let sk: string;
  beforeAll(async () => {
    t = await startTestApp();
    sk = (await t.createBusiness()).keys.secretTest;
  });
  afterAll(() => t.close());

  const stockOf = async (id: string) => {
    const product = (await t.request('GET', `${PRODUCTS}/${id}`, { key: sk })).body.data;
    return { quantity: product.quantity, variant: product.variants[0].quantity };
  };

  test('a cancel after the stock was raised to the maximum succeeds; the stock stays at the maximum', async () => {
    const product = await createProduct(t, sk, {
      name: 'Sand',
      price: 100,
      quantity: 10,
      status: 'ACTIVE',
      variants: [{ type: 'SIZE', label: 'Bag', priceAdjustment: 0, quantity: 10 }],
    });
    const variantId = product.variants[0]._id;
    const order = await t.request('POST', `${ORDERS}/simulate`, {
      key: sk,
      idempotencyKey: true,
      body: { items: [{ productId: product.id, variantId, quantity: 3 }], customerName: 'Aicha' },
    });
    expectStatus(order, 201);
    assert.deepEqual(await stockOf(product.id), { quantity: 7, variant: 7 });

    // The merchant restocks to the maximum (the product) and to one under it (the variant).
    expectStatus(await write(t, sk, 'PATCH', `/${product.id}/inventory`, { quantity: MAX_STOCK }), 200);
    expectStatus(await write(t, sk, 'PATCH', `/${product.id}/inventory`, { variantId, quantity: MAX_STOCK - 1 }), 200);
    // A merchant's own delta past the maximum is still refused.
    expectError(await write(t, sk, 'PATCH', `/${product.id}/inventory`, { delta: 1 }), 400, 'VALIDATION_ERROR');

    const cancel = await t.request('POST', `${ORDERS}/${order.body.data.referenceNumber}/cancel`, {
      key: sk,
      idempotencyKey: true,
      body: { reason: 'Out of bags' },
    });
    expectStatus(cancel, 200);
    assert.equal(cancel.body.data.status, 'CANCELLED');
    // The 3 returned units stop at the maximum: the product gets none back, the variant one.
    assert.deepEqual(await stockOf(product.id), { quantity: MAX_STOCK, variant: MAX_STOCK });
    const stored = await t.runtime.db
      .selectFrom('products')
      .select('quantity')
      .where('id', '=', product.id)
      .executeTakeFirstOrThrow();
    assert.equal(Number(stored.quantity), MAX_STOCK);
  });

  test('below the maximum, a cancel returns every unit', async () => {
    const product = await createProduct(t, sk, { name: 'Salt', price: 100, quantity: MAX_STOCK, status: 'ACTIVE' });
    const order = await t.request('POST', `${ORDERS}/simulate`, {
      key: sk,
      idempotencyKey: true,
      body: { items: [{ productId: product.id, quantity: 5 }], customerName: 'Aicha' },
    });
    expectStatus(order, 201);
    assert.equal((await t.request('GET', `${PRODUCTS}/${product.id}`, { key: sk })).body.data.quantity, MAX_STOCK - 5);
    const cancel = await t.request('POST', `${ORDERS}/${order.body.data.referenceNumber}/cancel`, {
      key: sk,
      idempotencyKey: true,
      body: { reason: 'No salt today' },
    });
    expectStatus(cancel, 200);
    assert.equal((await t.request('GET', `${PRODUCTS}/${product.id}`, { key: sk })).body.data.quantity, MAX_STOCK);
  });
});
