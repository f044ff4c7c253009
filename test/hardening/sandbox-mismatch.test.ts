import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { createIntent } from '../intents/support.js';
import { createProduct, PRODUCTS } from '../products/support.js';
import { expectError, expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';

const ORDERS = '/api/v1/dev/store/orders';
const ENDPOINTS = '/api/v1/dev/webhooks/endpoints';
const EVENTS = '/api/v1/dev/webhooks/events';

describe('SANDBOX_MISMATCH for products, orders, webhook endpoints and deliveries (issue 15 item 10)', () => {
  let t: TestApp;
  let business: TestBusiness;
  let other: TestBusiness;
  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    business = await t.createBusiness();
    other = await t.createBusiness({ name: 'Someone else' });
  });
  afterAll(() => t.close());

  const as = (key: string, method: string, path: string, body?: unknown) =>
    t.request(method, path, { key, ...(method === 'GET' ? {} : { idempotencyKey: true }), ...(body ? { body } : {}) });

  test('products: by id from the other environment, both ways; another business still 404', async () => {
    const { secretTest, secretLive, publishableLive } = business.keys;
    const sandbox = await createProduct(t, secretTest, { name: 'Test tea', price: 100, status: 'ACTIVE' });
    const live = await createProduct(t, secretLive, { name: 'Live tea', price: 100, status: 'ACTIVE' });
    for (const [key, product] of [
      [secretLive, sandbox],
      [publishableLive, sandbox],
      [secretTest, live],
    ] as const) {
      expectError(await as(key, 'GET', `${PRODUCTS}/${product.id}`), 403, 'SANDBOX_MISMATCH');
    }
    expectError(await as(secretLive, 'PATCH', `${PRODUCTS}/${sandbox.id}`, { price: 5 }), 403, 'SANDBOX_MISMATCH');
    expectError(
      await as(secretLive, 'PATCH', `${PRODUCTS}/${sandbox.id}/inventory`, { quantity: 5 }),
      403,
      'SANDBOX_MISMATCH',
    );
    expectError(await as(secretLive, 'DELETE', `${PRODUCTS}/${sandbox.id}`), 403, 'SANDBOX_MISMATCH');
    expectError(await as(other.keys.secretTest, 'GET', `${PRODUCTS}/${sandbox.id}`), 404, 'PRODUCT_NOT_FOUND');
    expectStatus(await as(secretTest, 'GET', `${PRODUCTS}/${sandbox.id}`), 200);
  });

  test('orders: a sandbox order read or acted on with a live key', async () => {
    const { secretTest, secretLive } = business.keys;
    const product = await createProduct(t, secretTest, { name: 'Bread', price: 300, status: 'ACTIVE' });
    const order = await as(secretTest, 'POST', `${ORDERS}/simulate`, {
      items: [{ productId: product.id, quantity: 1 }],
      customerName: 'Aicha',
    });
    expectStatus(order, 201);
    const ref = order.body.data.referenceNumber;
    expectError(await as(secretLive, 'GET', `${ORDERS}/${ref}`), 403, 'SANDBOX_MISMATCH');
    expectError(await as(secretLive, 'POST', `${ORDERS}/${ref}/accept`), 403, 'SANDBOX_MISMATCH');
    expectError(await as(other.keys.secretTest, 'GET', `${ORDERS}/${ref}`), 404, 'ORDER_NOT_FOUND');
  });

  test('webhook endpoints and deliveries of the other environment', async () => {
    const { secretTest, secretLive } = business.keys;
    const created = await as(secretTest, 'POST', ENDPOINTS, {
      url: 'https://93.184.216.34/hook',
      events: ['payment.created'],
    });
    expectStatus(created, 201);
    const id = created.body.data.id;
    expectError(await as(secretLive, 'GET', `${ENDPOINTS}/${id}`), 403, 'SANDBOX_MISMATCH');
    expectError(await as(secretLive, 'PATCH', `${ENDPOINTS}/${id}`, { active: false }), 403, 'SANDBOX_MISMATCH');
    expectError(await as(secretLive, 'POST', `${ENDPOINTS}/${id}/rotate-secret`), 403, 'SANDBOX_MISMATCH');
    expectError(await as(secretLive, 'DELETE', `${ENDPOINTS}/${id}`), 403, 'SANDBOX_MISMATCH');
    expectError(await as(other.keys.secretTest, 'GET', `${ENDPOINTS}/${id}`), 404, 'ENDPOINT_NOT_FOUND');

    await createIntent(t, secretTest, { amount: 5000 });
    const deliveries = await as(secretTest, 'GET', EVENTS);
    expectStatus(deliveries, 200);
    const delivery = deliveries.body.data.items[0];
    assert.ok(delivery, deliveries.text);
    expectError(await as(secretLive, 'GET', `${EVENTS}/${delivery.id}`), 403, 'SANDBOX_MISMATCH');
    expectError(await as(secretLive, 'POST', `${EVENTS}/${delivery.id}/retry`), 403, 'SANDBOX_MISMATCH');
    expectError(await as(other.keys.secretTest, 'GET', `${EVENTS}/${delivery.id}`), 404, 'DELIVERY_NOT_FOUND');
  });
});
