import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import pino from 'pino';
import { SIGNATURE_HEADER } from '../../src/modules/webhooks/signing.js';
import { startWorker, type Worker } from '../../src/worker/worker.js';
import { expectError, expectStatus, startTestApp, type TestApp } from '../support/harness.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { createProduct } from '../products/support.js';
import { orderAction } from '../orders/support.js';

/** Issue 11: a customer's storefront order reaches the merchant's webhook endpoint, signed, event by event. */
describe('storefront orders send their events to subscribed endpoints', () => {
  let t: TestApp;
  let worker: Worker;
  let receiver: Receiver;
  beforeAll(async () => {
    t = await startTestApp({ config: { WEBHOOK_ALLOW_PRIVATE: 'true', RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    worker = startWorker(t.runtime, pino({ level: 'silent' }), [], 60_000);
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await worker.stop();
    await receiver.close();
    await t.close();
  });

  test('order.new, order.modification_declined and order.cancelled (with amountRefunded) arrive', async () => {
    const business = await t.createBusiness({ name: 'Hooked' });
    const sk = business.keys.secretTest;
    const endpoint = await t.request('POST', '/api/v1/dev/webhooks/endpoints', {
      key: sk,
      idempotencyKey: true,
      body: { url: receiver.url, events: ['order.new', 'order.modification_declined', 'order.cancelled'] },
    });
    expectStatus(endpoint, 201);
    expectError(
      await t.request('POST', '/api/v1/dev/webhooks/endpoints', {
        key: business.keys.publishableTest,
        idempotencyKey: true,
        body: { url: receiver.url, events: ['order.modification_declined'] },
      }),
      403,
      'SECRET_KEY_REQUIRED',
    );
    const wallet = { phone: '+22246000001', pin: '1357' };
    expectStatus(await t.admin('POST', '/wallets', { ...wallet, balance: 100_000, environment: 'test' }), 201);
    const product = await createProduct(t, sk, { name: 'Pain', price: 250, status: 'ACTIVE' });
    const placed = await t.request('POST', `/storefront/shops/${business.shopId}/orders`, {
      body: { items: [{ productId: product.id, quantity: 4 }], customerName: 'Aicha', ...wallet },
    });
    expectStatus(placed, 201);
    const { orderRef, referenceNumber } = placed.body.data;
    await orderAction(t, sk, `/${referenceNumber}/propose-modification`, {
      items: [{ productId: product.id, quantity: 2 }],
    });
    expectStatus(await t.request('POST', `/storefront/orders/${orderRef}/modification/decline`, { body: {} }), 200);
    expectStatus(await t.request('POST', `/storefront/orders/${orderRef}/cancel`, { body: {} }), 200);

    const requests = await receiver.waitFor(3, 20_000);
    const events = requests
      .map((request) => JSON.parse(request.body))
      .sort((a, b) => (a.timestamp < b.timestamp ? -1 : 1));
    assert.deepEqual(
      events.map((event) => event.event),
      ['order.new', 'order.modification_declined', 'order.cancelled'],
    );
    assert.equal(events[0].data.totalAmount, 1000);
    assert.equal(events[0].sandbox, true);
    assert.deepEqual(events[1].data, {
      referenceNumber,
      totalAmount: 1000,
      proposedTotalAmount: 500,
      proposedItems: [{ productId: product.id, name: 'Pain', quantity: 2 }],
    });
    assert.deepEqual(events[2].data, {
      referenceNumber,
      status: 'CANCELLED',
      previousStatus: 'NEW',
      cancellationReason: 'Cancelled by the customer',
      amountRefunded: 1000,
    });
    assert.ok(
      requests.every((request) => String(request.headers[SIGNATURE_HEADER.toLowerCase()] ?? '').startsWith('sha256=')),
    );
  });
});
