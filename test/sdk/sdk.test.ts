import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, test } from 'vitest';
import pino from 'pino';
import {
  AuthenticationError,
  Commerce,
  CommerceError,
  ConfigurationError,
  ConnectionError,
  InvalidRequestError,
  NotFoundError,
  PermissionError,
  WebhookVerificationError,
  type WebhookEvent,
} from '@commerce-developer-api/sdk';
import { startWorker, type Worker } from '../../src/worker/worker.js';
import { startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { checkedFetch } from '../support/openapi-check.js';
import { webhookHelpers } from '../webhooks/support.js';

// A 1x1 PNG: the image upload checks the bytes.
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);

type Behaviour = 'forward' | 'drop' | 'delay-answer' | 'http503' | 'http429';

/** A local proxy in front of the API whose next answers can drop, delay or fail; it records what it saw. */
async function startProxy(target: string) {
  const plan: Behaviour[] = [];
  const seen: { method: string; url: string; idempotencyKey: string | undefined }[] = [];
  const server = http.createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const behaviour = plan.shift() ?? 'forward';
    seen.push({
      method: request.method!,
      url: request.url!,
      idempotencyKey: request.headers['x-idempotency-key'] as string | undefined,
    });
    if (behaviour === 'drop') return request.socket.destroy();
    if (behaviour === 'http503') return response.writeHead(503).end('upstream unavailable');
    if (behaviour === 'http429') {
      return response
        .writeHead(429, { 'content-type': 'application/json', 'retry-after': '0' })
        .end(
          JSON.stringify({ success: false, error: { code: 'RATE_LIMITED', message: 'slow down', statusCode: 429 } }),
        );
    }
    const headers = Object.fromEntries(
      Object.entries(request.headers).filter(([name]) => !['host', 'connection', 'content-length'].includes(name)),
    ) as Record<string, string>;
    const upstream = await fetch(`${target}${request.url}`, {
      method: request.method!,
      headers,
      ...(chunks.length ? { body: Buffer.concat(chunks) } : {}),
    });
    const text = await upstream.text();
    // delay-answer: the API did the work; its answer never reaches the client in time.
    if (behaviour === 'delay-answer') return setTimeout(() => request.socket.destroy(), 1500);
    response.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'text/plain' });
    response.end(text);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    plan,
    seen,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

describe('the SDK against the real server', () => {
  let t: TestApp;
  let business: TestBusiness;
  let commerce: Commerce;
  let worker: Worker;
  let hooks: ReturnType<typeof webhookHelpers>;
  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000', WEBHOOK_ALLOW_PRIVATE: 'true' } });
    business = await t.createBusiness();
    commerce = new Commerce(business.keys.secretTest, { baseUrl: t.baseUrl, fetch: checkedFetch });
    hooks = webhookHelpers(t);
    worker = startWorker(t.runtime, pino({ level: 'silent' }), [], 60_000);
  });
  afterAll(async () => {
    await worker.stop();
    await hooks.closeAll();
    await t.close();
  });

  test('intents: create, retrieve, list (a page and for await), simulate, refund, cancel, simulateExpiry', async () => {
    const created = await commerce.intents.create({ amount: 1500, label: 'SDK', metadata: { order: '1' } });
    assert.equal(created.status, 'PENDING');
    assert.equal((await commerce.intents.retrieve(created.referenceNumber)).amount, 1500);
    const paid = await commerce.intents.simulate(created.referenceNumber, { outcome: 'success' });
    assert.equal(paid.status, 'PAID');
    const refunded = await commerce.intents.refund(created.referenceNumber, { amount: 500 });
    assert.equal(refunded.totalAmountRefunded, 500);
    const toCancel = await commerce.intents.create({ amount: 200 });
    assert.equal((await commerce.intents.cancel(toCancel.referenceNumber)).status, 'CANCELLED');
    const toExpire = await commerce.intents.create({ amount: 300 });
    assert.equal((await commerce.intents.simulateExpiry(toExpire.referenceNumber)).status, 'CANCELLED');

    for (let i = 0; i < 3; i++) await commerce.intents.create({ amount: 10 + i });
    const page = await commerce.intents.list({ limit: 2 });
    assert.equal(page.items.length, 2);
    assert.equal(page.hasMore, true);
    const all: string[] = [];
    for await (const intent of commerce.intents.list({ limit: 2 })) all.push(intent.referenceNumber);
    assert.equal(all.length, page.total);
    assert.equal(new Set(all).size, all.length);
    const cancelled = await commerce.intents.list({ status: 'CANCELLED' }).toArray();
    assert.deepEqual(
      cancelled.map((i) => i.referenceNumber).sort(),
      [toCancel.referenceNumber, toExpire.referenceNumber].sort(),
    );
  });

  test('products, images, inventory, CSV, orders and their workflow, balance', async () => {
    const product = await commerce.products.create({
      name: 'Tea',
      price: 4500,
      externalId: 'SDK-TEA',
      quantity: 20,
      status: 'ACTIVE',
    });
    assert.equal((await commerce.products.retrieve('SDK-TEA')).id, product.id);
    assert.equal((await commerce.products.update(product.id, { price: 4700 })).price, 4700);
    assert.equal(
      (
        await commerce.products.replace(product.id, {
          name: 'Tea 2',
          price: 4800,
          externalId: 'SDK-TEA',
          quantity: 20,
          status: 'ACTIVE',
        })
      ).name,
      'Tea 2',
    );
    const image = await commerce.products.uploadImage(product.id, new Blob([PNG], { type: 'image/png' }), 'tea.png');
    assert.match(image.url, /\/media\//);
    assert.equal((await commerce.products.updateInventory(product.id, { delta: -2 })).quantity, 18);
    await commerce.inventory.update({ items: [{ externalId: 'SDK-TEA', quantity: 15 }] });
    assert.equal((await commerce.products.retrieve(product.id)).quantity, 15);
    const csv = await commerce.products.export();
    assert.match(csv, /SDK-TEA/);
    const imported = await commerce.products.import(csv.replace('Tea 2', 'Tea 3'));
    assert.ok(imported);
    assert.equal((await commerce.products.retrieve('SDK-TEA')).name, 'Tea 3');
    const listed = await commerce.products.list({ search: 'Tea' });
    assert.equal(listed.total, 1);

    const order = await commerce.orders.simulate({
      items: [{ productId: product.id, quantity: 2 }],
      customerName: 'Aicha',
    });
    assert.equal(order.status, 'NEW');
    assert.equal((await commerce.orders.accept(order.referenceNumber)).status, 'PREPARING');
    assert.equal((await commerce.orders.ready(order.referenceNumber)).status, 'READY');
    assert.equal((await commerce.orders.pickup(order.referenceNumber)).status, 'PICKED_UP');
    assert.equal((await commerce.orders.deliver(order.referenceNumber)).status, 'DELIVERED');
    assert.equal((await commerce.orders.refund(order.referenceNumber, { amount: 100 })).status, 'REFUNDED');
    const second = await commerce.orders.simulate({
      items: [{ productId: product.id, quantity: 1 }],
      customerName: 'Sidi',
    });
    await commerce.orders.proposeModification(second.referenceNumber, {
      items: [{ productId: product.id, quantity: 2 }],
    });
    const modified = await commerce.orders.acceptModification(second.referenceNumber);
    assert.equal(modified.proposedModification, null);
    assert.equal(
      (await commerce.orders.cancel(second.referenceNumber, { reason: 'changed mind' })).status,
      'CANCELLED',
    );
    assert.equal((await commerce.orders.retrieve(order.referenceNumber)).referenceNumber, order.referenceNumber);
    assert.equal((await commerce.orders.list()).total, 2);
    assert.deepEqual(await commerce.products.del(product.id), { deleted: true });

    const balance = await commerce.balance.retrieve();
    assert.equal(balance.currency, 'MRU');
  });

  test('errors map to typed classes with code, statusCode, requestId and details', async () => {
    const missing = await commerce.intents.retrieve('pi_missing').catch((error: unknown) => error);
    assert.ok(missing instanceof NotFoundError && missing instanceof CommerceError);
    assert.equal(missing.code, 'INTENT_NOT_FOUND');
    assert.equal(missing.statusCode, 404);
    assert.match(missing.requestId ?? '', /^req_/);

    const invalid = await commerce.intents.create({ amount: -1 }).catch((error: unknown) => error);
    assert.ok(invalid instanceof InvalidRequestError);
    assert.ok(['VALIDATION_ERROR', 'AMOUNT_OUT_OF_RANGE'].includes(invalid.code));

    const bad = await commerce.intents.create({ amount: 1, unknown: 1 } as never).catch((error: unknown) => error);
    assert.ok(bad instanceof InvalidRequestError);
    assert.equal(bad.code, 'VALIDATION_ERROR');
    assert.equal(bad.details[0]?.field, 'body.unknown');

    const rotated = new Commerce(`sk_test_${'x'.repeat(40)}`, { baseUrl: t.baseUrl, fetch: checkedFetch });
    const denied = await rotated.balance.retrieve().catch((error: unknown) => error);
    assert.ok(denied instanceof AuthenticationError);
    assert.equal(denied.code, 'INVALID_API_KEY');

    const publishable = new Commerce(business.keys.publishableTest, { baseUrl: t.baseUrl, fetch: checkedFetch });
    const forbidden = await publishable.intents.create({ amount: 1 }).catch((error: unknown) => error);
    assert.ok(forbidden instanceof PermissionError);
    assert.equal(forbidden.code, 'SECRET_KEY_REQUIRED');

    const nowhere = new Commerce(business.keys.secretTest, { baseUrl: 'http://127.0.0.1:9', maxRetries: 0 });
    const unreachable = await nowhere.balance.retrieve().catch((error: unknown) => error);
    assert.ok(unreachable instanceof ConnectionError);
    assert.equal(unreachable.code, 'CONNECTION_ERROR');
    assert.throws(
      () => new Commerce('not-a-key'),
      (error: unknown) =>
        error instanceof ConfigurationError &&
        error.code === 'INVALID_API_KEY_FORMAT' &&
        /sk_test_/.test(error.message),
    );

    const aborted = await commerce.balance.retrieve({ signal: AbortSignal.abort() }).catch((error: unknown) => error);
    assert.ok(aborted instanceof ConnectionError);
    assert.equal(aborted.code, 'ABORTED');
  });

  test('retries: dropped connections, 503, 429 and lost answers retry with the same idempotency key; a 4xx does not', async () => {
    const proxy = await startProxy(t.baseUrl);
    try {
      // The default timeout: a slow answer on a loaded machine must not add a retry to the counts below.
      const client = new Commerce(business.keys.secretTest, { baseUrl: proxy.url, maxRetries: 3 });
      proxy.plan.push('drop', 'http503', 'http429');
      const created = await client.intents.create({ amount: 4242 });
      assert.equal(proxy.seen.length, 4);
      assert.equal(new Set(proxy.seen.map((s) => s.idempotencyKey)).size, 1);

      // The API created the intent, the answer was lost: the retry gets the stored answer, not a second intent.
      // The answer is held past the client's timeout (the proxy drops it after 1.5 s).
      proxy.seen.length = 0;
      proxy.plan.push('delay-answer');
      const impatient = new Commerce(business.keys.secretTest, { baseUrl: proxy.url, maxRetries: 3, timeoutMs: 800 });
      const again = await impatient.intents.create({ amount: 4343 });
      // A retry too may be slow on a loaded machine: what counts is that every attempt is the same.
      assert.ok(proxy.seen.length >= 2, `${proxy.seen.length} attempts`);
      assert.equal(new Set(proxy.seen.map((seen) => seen.idempotencyKey)).size, 1);
      const matching = await commerce.intents.list({ limit: 100 }).toArray();
      assert.equal(matching.filter((i) => i.amount === 4343).length, 1);
      assert.notEqual(again.referenceNumber, created.referenceNumber);

      proxy.seen.length = 0;
      await assert.rejects(client.intents.retrieve('pi_missing'), NotFoundError);
      assert.equal(proxy.seen.length, 1, 'a 404 is not retried');

      proxy.seen.length = 0;
      proxy.plan.push('http503', 'http503');
      const limited = new Commerce(business.keys.secretTest, { baseUrl: proxy.url, maxRetries: 1 });
      await assert.rejects(limited.balance.retrieve(), (error: CommerceError) => error.statusCode === 503);
      assert.equal(proxy.seen.length, 2, 'maxRetries bounds the attempts');

      proxy.seen.length = 0;
      const own = await client.intents.create({ amount: 77 }, { idempotencyKey: 'sdk-own-key-1' });
      const replay = await client.intents.create({ amount: 77 }, { idempotencyKey: 'sdk-own-key-1' });
      assert.equal(replay.referenceNumber, own.referenceNumber);
      assert.deepEqual(
        proxy.seen.map((s) => s.idempotencyKey),
        ['sdk-own-key-1', 'sdk-own-key-1'],
      );
    } finally {
      await proxy.close();
    }
  });

  test('webhooks.verify accepts real deliveries (both signatures during a rotation) and says what is wrong otherwise', async () => {
    const { receiver, endpoint } = await hooks.receiverWithEndpoint(business.keys.secretTest, ['payment.created']);
    const intent = await commerce.intents.create({ amount: 999 });
    const [delivery] = await receiver.waitFor(1);
    const event: WebhookEvent = await commerce.webhooks.verify(delivery!.body, delivery!.headers, endpoint.secret);
    assert.equal(event.event, 'payment.created');
    if (event.event === 'payment.created') assert.equal(event.data.reference_number, intent.referenceNumber);
    assert.equal(event.sequence, 1);

    const fail = (promise: Promise<unknown>) =>
      promise.then(
        () => assert.fail('verified'),
        (error: unknown) => {
          // One error shape: a CommerceError with `code`; `reason` stays as a deprecated alias.
          assert.ok(error instanceof WebhookVerificationError && error instanceof CommerceError);
          assert.equal(error.reason, error.code);
          return error.code;
        },
      );
    assert.equal(
      await fail(commerce.webhooks.verify(`${delivery!.body} `, delivery!.headers, endpoint.secret)),
      'NO_MATCHING_SIGNATURE',
    );
    assert.equal(
      await fail(commerce.webhooks.verify(delivery!.body, delivery!.headers, 'f'.repeat(64))),
      'NO_MATCHING_SIGNATURE',
    );
    assert.equal(await fail(commerce.webhooks.verify(delivery!.body, {}, endpoint.secret)), 'NO_SIGNATURE_HEADER');
    assert.equal(
      await fail(
        commerce.webhooks.verify(delivery!.body, delivery!.headers, endpoint.secret, { now: Date.now() + 600_000 }),
      ),
      'TIMESTAMP_OUTSIDE_TOLERANCE',
    );
    await commerce.webhooks.verify(delivery!.body, delivery!.headers, endpoint.secret, {
      now: Date.now() + 600_000,
      toleranceSeconds: 900,
    });

    const rotated = await commerce.webhookEndpoints.rotateSecret(endpoint.id);
    await commerce.intents.create({ amount: 998 });
    const [, second] = await receiver.waitFor(2);
    assert.match(String(second!.headers['x-commerce-signature']), /^sha256=[0-9a-f]{64},sha256=[0-9a-f]{64}$/);
    await commerce.webhooks.verify(second!.body, second!.headers, endpoint.secret);
    await commerce.webhooks.verify(second!.body, second!.headers, rotated.secret!);
  });

  test('webhook endpoints, deliveries and events through the SDK', async () => {
    const { receiver, endpoint } = await hooks.receiverWithEndpoint(business.keys.secretTest, ['payment.cancelled']);
    assert.equal((await commerce.webhookEndpoints.retrieve(endpoint.id)).url, endpoint.url);
    assert.ok((await commerce.webhookEndpoints.list()).items.some((e) => e.id === endpoint.id));
    assert.deepEqual((await commerce.webhookEndpoints.update(endpoint.id, { maxPerSecond: 50 })).maxPerSecond, 50);
    const ping = await commerce.webhookEndpoints.test(endpoint.id);
    assert.equal(ping.event, 'ping');
    const intent = await commerce.intents.create({ amount: 55 });
    await commerce.intents.cancel(intent.referenceNumber);
    await receiver.waitFor(2);
    const [event] = (await commerce.events.list({ object: intent.referenceNumber, type: 'payment.cancelled' })).items;
    assert.equal(event?.sequence, 2);
    assert.equal((await commerce.events.retrieve(event!.id)).id, event!.id);
    const deliveries = await commerce.webhookDeliveries.list({ eventId: event!.id });
    assert.equal(deliveries.total, 1);
    const detail = await commerce.webhookDeliveries.retrieve(deliveries.items[0]!.id);
    assert.deepEqual(detail.payload, event!.payload);
    assert.equal((await commerce.webhookDeliveries.retry(detail.id)).id, detail.id);
    assert.equal((await commerce.webhookEndpoints.stats(endpoint.id)).endpointId, endpoint.id);
    assert.equal((await commerce.webhookEndpoints.recover(endpoint.id, { since: '2020-01-01' })).recovered, 0);
    assert.deepEqual(await commerce.webhookEndpoints.del(endpoint.id), { deleted: true });
  });
});
