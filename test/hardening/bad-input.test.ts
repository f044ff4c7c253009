import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { expectError, expectStatus, startTestApp, type TestApp, type TestResponse } from '../support/harness.js';
import { multipartBody } from '../support/multipart.js';
import { createProduct, PRODUCTS } from '../products/support.js';

const INTENTS = '/api/v1/dev/intents';
const ORDERS = '/api/v1/dev/store/orders';
const ENDPOINTS = '/api/v1/dev/webhooks/endpoints';
const NUL = '\u0000';

/** A client error in the envelope: never a 500, never a stack. */
function expectClientError(response: TestResponse, code = 'VALIDATION_ERROR', status = 400): void {
  expectError(response, status, code);
}

describe('bad input is a 4xx in the envelope, never a 500 (issue 15 item 3)', () => {
  let t: TestApp;
  let sk: string;
  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    sk = (await t.createBusiness()).keys.secretTest;
  });
  afterAll(() => t.close());

  const write = (method: string, path: string, body: unknown) =>
    t.request(method, path, { key: sk, body, idempotencyKey: true });

  test('NUL bytes in any string: label, metadata key and value, product name, customerName, webhook URL', async () => {
    for (const body of [
      { amount: 5000, label: `a${NUL}b` },
      { amount: 5000, metadata: { [`k${NUL}`]: 'v' } },
      { amount: 5000, metadata: { k: `v${NUL}` } },
      { amount: 5000, metadata: { deep: { list: ['ok', `x${NUL}`] } } },
    ]) {
      const response = await write('POST', INTENTS, body);
      expectClientError(response);
      assert.match(response.body.error.message, /NUL/);
    }
    expectClientError(await write('POST', PRODUCTS, { name: `Tea${NUL}`, price: 100 }));
    const product = await createProduct(t, sk, { name: 'Tea', price: 100, status: 'ACTIVE' });
    expectClientError(
      await write('POST', `${ORDERS}/simulate`, {
        items: [{ productId: product.id, quantity: 1 }],
        customerName: `Aicha${NUL}`,
      }),
    );
    expectClientError(
      await write('POST', ENDPOINTS, { url: `https://hooks.example/${NUL}`, events: ['payment.confirmed'] }),
    );
    expectClientError(await t.request('GET', `${INTENTS}?status=${encodeURIComponent(`PAID${NUL}`)}`, { key: sk }));
    expectClientError(await t.request('GET', `${PRODUCTS}/${encodeURIComponent(`prod_${NUL}`)}`, { key: sk }));
  });

  test('NUL bytes in a CSV cell and in a /media path', async () => {
    const csv = `externalId,name,price\nNUL-1,Te${NUL}a,100\n`;
    const response = await t.request('POST', `${PRODUCTS}/import`, {
      key: sk,
      rawBody: csv,
      headers: { 'content-type': 'text/csv' },
      idempotencyKey: true,
    });
    expectClientError(response, 'CSV_INVALID');
    for (const path of ['/media/x%00.jpg', '/media/%00', '/media/a%00b/c.png']) {
      const media = await t.request('GET', path);
      assert.ok(media.status === 404 || media.status === 400, `${path}: ${media.status} ${media.text}`);
      assert.equal(media.body?.success, false, media.text);
    }
  });

  test('what the router or the HTTP parser refuses is answered in the envelope too', async () => {
    expectClientError(await t.request('GET', `${PRODUCTS}/%ED%A0%80`, { key: sk }));
    expectClientError(await t.request('GET', `${ORDERS}/${'x'.repeat(5000)}`, { key: sk }));
    const huge = await t.request('GET', INTENTS, { key: sk, headers: { 'x-padding': 'x'.repeat(20_000) } });
    assert.equal(huge.status, 400, huge.text);
    assert.equal(huge.body.success, false);
    assert.equal(huge.body.error.code, 'VALIDATION_ERROR');
    expectStatus(await t.request('GET', '/health'), 200);
  });

  test('JSON nested 20,000 deep is refused without overflowing the stack', async () => {
    const depth = 20_000;
    const raw = `{"amount":5000,"metadata":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}`;
    const response = await t.request('POST', INTENTS, {
      key: sk,
      rawBody: raw,
      headers: { 'content-type': 'application/json' },
      idempotencyKey: true,
    });
    assert.ok(response.status >= 400 && response.status < 500, response.text.slice(0, 500));
    assert.equal(response.body.success, false);
    const arrays = `{"items":${'['.repeat(depth)}${']'.repeat(depth)}}`;
    const orders = await t.request('POST', `${ORDERS}/simulate`, {
      key: sk,
      rawBody: arrays,
      headers: { 'content-type': 'application/json' },
      idempotencyKey: true,
    });
    assert.ok(orders.status >= 400 && orders.status < 500, orders.text.slice(0, 500));
    expectStatus(await t.request('GET', '/health'), 200);
  });

  test('huge page numbers and year-zero dates', async () => {
    for (const path of [INTENTS, PRODUCTS, ORDERS, '/api/v1/dev/webhooks/events']) {
      expectClientError(await t.request('GET', `${path}?page=100000000000000000000`, { key: sk }));
      expectClientError(await t.request('GET', `${path}?limit=100000000000000000000`, { key: sk }));
      const far = await t.request('GET', `${path}?page=9007199254740991`, { key: sk });
      assert.ok(far.status === 200 || far.status === 400, far.text);
    }
    for (const path of [INTENTS, ORDERS, '/api/v1/dev/webhooks/events']) {
      for (const date of ['0000-01-01T00:00:00.000Z', '0001-01-01', '9999-12-31']) {
        const response = await t.request('GET', `${path}?from=${date}&to=${date}`, { key: sk });
        assert.ok(response.status === 200 || response.status === 400, `${path} ${date}: ${response.text}`);
        if (response.status === 400) expectClientError(response);
      }
      expectClientError(await t.request('GET', `${path}?from=0000-01-01`, { key: sk }));
    }
  });

  test('a truncated multipart body', async () => {
    const product = await createProduct(t, sk, { name: 'Photo', price: 100 });
    const { body, contentType } = multipartBody([
      { field: 'file', filename: 'a.png', contentType: 'image/png', content: Buffer.alloc(4000, 1) },
    ]);
    const truncated = body.subarray(0, body.length - 1500);
    for (const path of [`${PRODUCTS}/${product.id}/images`, `${PRODUCTS}/import`]) {
      const response = await t.request('POST', path, {
        key: sk,
        rawBody: truncated,
        headers: { 'content-type': contentType },
        idempotencyKey: true,
      });
      assert.ok(response.status >= 400 && response.status < 500, `${path}: ${response.text}`);
      assert.equal(response.body.success, false, response.text);
    }
    const garbage = await t.request('POST', `${PRODUCTS}/${product.id}/images`, {
      key: sk,
      rawBody: 'not multipart at all',
      headers: { 'content-type': 'multipart/form-data; boundary=xyz' },
      idempotencyKey: true,
    });
    assert.ok(garbage.status >= 400 && garbage.status < 500, garbage.text);
  });

  test('inventory never leaves 0..1,000,000,000', async () => {
    const product = await createProduct(t, sk, {
      name: 'Stocked',
      price: 100,
      externalId: 'STOCK-MAX',
      quantity: 999_999_999,
      variants: [{ type: 'SIZE', label: 'L', quantity: 999_999_999 }],
    });
    const variantId = product.variants[0]._id;
    expectClientError(await write('PATCH', `${PRODUCTS}/${product.id}/inventory`, { delta: 2 }));
    expectClientError(await write('PATCH', `${PRODUCTS}/${product.id}/inventory`, { delta: 1_000_000_000 }));
    expectClientError(await write('PATCH', `${PRODUCTS}/${product.id}/inventory`, { variantId, delta: 5 }));
    const bulk = await write('POST', '/api/v1/dev/store/inventory', {
      items: [{ productId: product.id, delta: 1_000_000_000 }],
    });
    assert.ok(bulk.status === 400 || bulk.status === 200, bulk.text);
    expectStatus(await write('PATCH', `${PRODUCTS}/${product.id}/inventory`, { delta: 1 }), 200);
    const stored = await t.request('GET', `${PRODUCTS}/${product.id}`, { key: sk });
    assert.equal(stored.body.data.quantity, 1_000_000_000);
    assert.equal(stored.body.data.variants[0].quantity, 999_999_999);
  });

  test('a variant or option adjustment that could make a line or an order total negative', async () => {
    const refused = await write('POST', PRODUCTS, {
      name: 'Cheap',
      price: 100,
      variants: [{ type: 'SIZE', label: 'Small', priceAdjustment: -500 }],
    });
    expectClientError(refused);
    assert.equal(refused.body.error.details[0].field, 'body.variants');
    expectClientError(
      await write('POST', PRODUCTS, {
        name: 'Cheap',
        price: 100,
        options: [{ name: 'Discount', priceAdjustment: -101 }],
      }),
    );
    // Every combination at or above 0 is fine, down to a free line.
    const product = await createProduct(t, sk, {
      name: 'Cheap',
      price: 500,
      status: 'ACTIVE',
      variants: [{ type: 'SIZE', label: 'Small', priceAdjustment: -300 }],
      options: [{ name: 'Discount', priceAdjustment: -200 }],
    });
    // Lowering the price later under the adjustments is refused too (PATCH and PUT).
    expectClientError(await write('PATCH', `${PRODUCTS}/${product.id}`, { price: 499 }));
    expectClientError(
      await write('PATCH', `${PRODUCTS}/${product.id}`, {
        variants: [{ type: 'SIZE', label: 'Tiny', priceAdjustment: -301 }],
      }),
    );
    // A CSV import cannot lower the price under the adjustments either: that row fails.
    expectStatus(await write('PATCH', `${PRODUCTS}/${product.id}`, { externalId: 'CHEAP-1' }), 200);
    const imported = await t.request('POST', `${PRODUCTS}/import`, {
      key: sk,
      rawBody: 'externalId,name,price\nCHEAP-1,Cheap,100\n',
      headers: { 'content-type': 'text/csv' },
      idempotencyKey: true,
    });
    expectStatus(imported, 200);
    assert.equal(imported.body.data.failed, 1, imported.text);
    assert.equal(imported.body.data.updated, 0, imported.text);
    const freeLine = {
      productId: product.id,
      quantity: 2,
      variantId: product.variants[0]._id,
      optionIds: [product.options[0]._id],
    };
    // A line may be free; an order takes money, so a total of 0 is refused as out of range.
    const free = await write('POST', `${ORDERS}/simulate`, { items: [freeLine], customerName: 'Aicha' });
    expectError(free, 400, 'AMOUNT_OUT_OF_RANGE');
    const order = await write('POST', `${ORDERS}/simulate`, {
      items: [freeLine, { productId: product.id, quantity: 1 }],
      customerName: 'Aicha',
    });
    expectStatus(order, 201);
    assert.equal(order.body.data.totalAmount, 500);
  });
});
