import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, test } from 'vitest';
import pino from 'pino';
import { verifyWebhook, WebhookVerificationError } from '../../src/modules/webhooks/signing.js';
import { startWorker, type Worker } from '../../src/worker/worker.js';
import {
  expectError,
  expectStatus,
  startTestApp,
  waitUntil,
  type TestApp,
  type TestBusiness,
} from '../support/harness.js';
import { eventIdOf } from '../support/read-api.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { act, createIntent } from '../intents/support.js';

const ENDPOINTS = '/api/v1/dev/webhooks/endpoints';
const DELIVERIES = '/api/v1/dev/webhooks/events';
const SCALE = 0.0001;
const GAPS_MS = [30, 120, 900, 3600, 14_400, 43_200, 86_400].map((seconds) => seconds * 1000 * SCALE);

/** The signature, computed here independently of the service's code (api.md 6.3). */
function expectedSignature(secret: string, timestamp: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

describe('webhook deliveries (api.md 6; decisions "Events and deliveries")', () => {
  let t: TestApp;
  let worker: Worker;
  let business: TestBusiness;
  let sk: string;
  const receivers: Receiver[] = [];
  beforeAll(async () => {
    t = await startTestApp({
      config: {
        WEBHOOK_ALLOW_PRIVATE: 'true',
        WEBHOOK_RETRY_SCALE: String(SCALE),
        RATE_LIMIT_TEST_PER_MINUTE: '100000',
      },
      configOverrides: { webhookTimeoutMs: 1000 },
    });
    worker = startWorker(t.runtime, pino({ level: 'silent' }), [], 60_000);
  });
  beforeEach(async () => {
    // A business per test: each may hold five endpoints per environment.
    business = await t.createBusiness();
    sk = business.keys.secretTest;
  });
  afterAll(async () => {
    await worker.stop();
    for (const receiver of receivers) await receiver.close();
    await t.close();
  });

  async function receiverWithEndpoint(events: string[], key = sk) {
    const receiver = await startReceiver();
    receivers.push(receiver);
    const response = await t.request('POST', ENDPOINTS, {
      key,
      idempotencyKey: true,
      body: { url: receiver.url, events },
    });
    expectStatus(response, 201);
    return { receiver, endpoint: response.body.data as { id: string; secret: string } };
  }

  /** A live endpoint pointing at a local receiver: only the database can hold one (the API refuses it). */
  async function liveEndpointAt(url: string, events: string[]) {
    const id = `we_live_${Date.now()}${Math.random().toString(36).slice(2, 8)}`;
    await t.runtime.db
      .insertInto('webhook_endpoints')
      .values({
        id,
        business_id: business.id,
        environment: 'live',
        url,
        events,
        secret: 'c'.repeat(64),
        previous_secret: null,
        previous_secret_expires_at: null,
        deleted_at: null,
      })
      .execute();
    return id;
  }

  async function deliveryOf(eventId: string) {
    const row = await t.runtime.db
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('event_id', '=', eventId)
      .executeTakeFirstOrThrow();
    const response = await t.request('GET', `${DELIVERIES}/${row.id}`, { key: sk });
    expectStatus(response, 200);
    return response.body.data;
  }

  async function waitForDelivery(id: string, check: (delivery: any) => boolean, timeoutMs = 20_000) {
    return waitUntil(
      async () => {
        const response = await t.request('GET', `${DELIVERIES}/${id}`, { key: sk });
        return check(response.body.data) ? response.body.data : undefined;
      },
      `delivery ${id} to settle`,
      timeoutMs,
    );
  }

  /** The deliveries the fan-out wrote for these endpoints: none means nothing will ever be sent. */
  async function deliveriesTo(endpointIds: string[]) {
    return t.runtime.db.selectFrom('webhook_deliveries').select('id').where('endpoint_id', 'in', endpointIds).execute();
  }

  /** Waits until the delivery of this event to this endpoint has succeeded (the worker is past it). */
  async function waitForSuccess(eventName: string, endpointId: string) {
    await waitUntil(async () => {
      const row = await t.runtime.db
        .selectFrom('webhook_deliveries')
        .select('status')
        .where('endpoint_id', '=', endpointId)
        .where('event', '=', eventName)
        .executeTakeFirst();
      return row?.status === 'SUCCEEDED';
    }, `${eventName} to be delivered to ${endpointId}`);
  }

  test('the exact event body, every header, and a signature computed independently', async () => {
    const { receiver, endpoint } = await receiverWithEndpoint(['payment.created']);
    const before = Math.floor(Date.now() / 1000);
    const intent = await createIntent(t, sk, { amount: 2500, metadata: { order: '9' } });
    const [request] = await receiver.waitFor(1);
    const stored = await t.runtime.db
      .selectFrom('events')
      .selectAll()
      .where('subject', '=', intent.referenceNumber)
      .executeTakeFirstOrThrow();
    assert.equal(request!.method, 'POST');
    assert.equal(request!.path, '/hook');
    assert.equal(request!.body, stored.body, 'the raw body is the stored event text, byte for byte');
    const delivery = await deliveryOf(stored.id);
    const headers = request!.headers;
    assert.equal(headers['content-type'], 'application/json');
    assert.equal(headers['x-commerce-event'], 'payment.created');
    assert.equal(headers['x-commerce-delivery'], delivery.id);
    const timestamp = String(headers['x-commerce-timestamp']);
    assert.match(timestamp, /^\d{10}$/);
    assert.ok(Number(timestamp) >= before && Number(timestamp) <= Math.floor(Date.now() / 1000));
    assert.equal(headers['x-commerce-signature'], expectedSignature(endpoint.secret, timestamp, request!.body));
    const event = verifyWebhook(request!.body, headers, endpoint.secret) as any;
    assert.equal(event.event, 'payment.created');
    assert.equal(event.data.reference_number, intent.referenceNumber);

    const settled = await waitForDelivery(delivery.id, (d) => d.status === 'SUCCEEDED');
    assert.equal(settled.attemptCount, 1);
    assert.equal(settled.lastStatusCode, 200);
    assert.equal(settled.eventId, stored.id);
    assert.equal(settled.endpointId, endpoint.id);
    assert.equal(settled.url, receiver.url);
    assert.deepEqual(settled.payload, JSON.parse(stored.body));
    assert.equal(settled.attempts.length, 1);
    const [attempt] = settled.attempts;
    assert.equal(attempt.attempt, 1);
    assert.equal(attempt.statusCode, 200);
    assert.equal(attempt.error, null);
    assert.equal(attempt.responseBodySnippet, 'ok');
    assert.ok(Number.isInteger(attempt.durationMs) && attempt.durationMs >= 0);
    assert.ok(Date.parse(settled.createdAt) <= Date.parse(attempt.at));
  });

  test('only active endpoints of the same business and environment subscribed to the event get it', async () => {
    const subscribed = await receiverWithEndpoint(['payment.cancelled']);
    const otherEvent = await receiverWithEndpoint(['payment.confirmed']);
    const live = { receiver: await startReceiver() };
    receivers.push(live.receiver);
    const liveEndpointId = await liveEndpointAt(live.receiver.url, ['payment.cancelled']);
    const other = await t.createBusiness({ name: 'Other' });
    const otherBusiness = await receiverWithEndpoint(['payment.cancelled'], other.keys.secretTest);
    const inactive = await receiverWithEndpoint(['payment.cancelled']);
    await t.request('PATCH', `${ENDPOINTS}/${inactive.endpoint.id}`, {
      key: sk,
      idempotencyKey: true,
      body: { active: false },
    });

    const intent = await createIntent(t, sk, { amount: 100 });
    expectStatus(await act(t, sk, intent.referenceNumber, 'cancel'), 200);
    const [request] = await subscribed.receiver.waitFor(1);
    assert.equal(JSON.parse(request!.body).event, 'payment.cancelled');
    // Nothing is sent without a delivery row, and the fan-out wrote none for the others (in the
    // transaction of the cancel). Once the worker is past the subscribed delivery, none got a request.
    const quietIds = [otherEvent.endpoint.id, liveEndpointId, otherBusiness.endpoint.id, inactive.endpoint.id];
    assert.deepEqual(await deliveriesTo(quietIds), []);
    await waitForSuccess('payment.cancelled', subscribed.endpoint.id);
    for (const quiet of [otherEvent, live, otherBusiness, inactive]) assert.equal(quiet.receiver.requests.length, 0);
  });

  test('the full schedule: 8 attempts with the scaled gaps, then DEAD; a manual retry starts again', async () => {
    const { receiver } = await receiverWithEndpoint(['payment.failed']);
    receiver.answer = () => ({ status: 500, body: 'e'.repeat(3000) });
    const intent = await createIntent(t, sk, { amount: 1313 });
    await act(t, sk, intent.referenceNumber, 'simulate');
    const requests = await receiver.waitFor(8, 40_000);
    const eventId = await eventIdOf(t, sk, intent.referenceNumber, 'payment.failed');
    const dead = await waitForDelivery((await deliveryOf(eventId)).id, (d) => d.status === 'DEAD');
    for (let i = 1; i < 8; i++) {
      const gap = requests[i]!.at - requests[i - 1]!.at;
      // Each gap is jittered by up to 10 % either way (RETRY_JITTER; exact gaps before).
      assert.ok(
        gap >= GAPS_MS[i - 1]! * 0.9 - 5,
        `gap before attempt ${i + 1}: ${gap} ms < 0.9 x ${GAPS_MS[i - 1]} ms`,
      );
      assert.ok(
        gap <= GAPS_MS[i - 1]! * 1.1 + 3000,
        `gap before attempt ${i + 1}: ${gap} ms, far above ${GAPS_MS[i - 1]} ms`,
      );
      assert.equal(requests[i]!.body, requests[0]!.body, 'every attempt sends the same body');
    }
    assert.equal(dead.attemptCount, 8);
    assert.equal(dead.nextAttemptAt, null);
    assert.equal(dead.deadReason, 'MAX_ATTEMPTS');
    assert.equal(dead.lastStatusCode, 500);
    assert.equal(dead.lastError, 'HTTP 500');
    assert.ok(dead.completedAt);
    assert.deepEqual(
      dead.attempts.map((a: { attempt: number }) => a.attempt),
      [1, 2, 3, 4, 5, 6, 7, 8],
    );
    for (const attempt of dead.attempts) {
      assert.equal(attempt.statusCode, 500);
      assert.equal(attempt.responseBodySnippet, 'e'.repeat(1024), 'the first 1 KB of the answer');
    }
    // DEAD is written after the eighth answer and only waiting deliveries are claimed; the count
    // of 9 after the manual retry below shows no ninth scheduled attempt came later either.
    assert.equal(receiver.requests.length, 8, 'no ninth attempt');

    const listed = await t.request('GET', `${DELIVERIES}?status=DEAD`, { key: sk });
    assert.ok(listed.body.data.items.some((d: { id: string }) => d.id === dead.id));

    receiver.answer = () => ({ status: 204 });
    const retried = await t.request('POST', `${DELIVERIES}/${dead.id}/retry`, { key: sk, idempotencyKey: true });
    expectStatus(retried, 200);
    assert.equal(retried.body.data.status, 'PENDING');
    assert.equal(retried.body.data.attemptCount, 0);
    const succeeded = await waitForDelivery(dead.id, (d) => d.status === 'SUCCEEDED');
    assert.equal(succeeded.attemptCount, 1, 'a fresh schedule');
    assert.equal(succeeded.attempts.length, 9, 'the log keeps every attempt');
    assert.equal(succeeded.attempts[8].statusCode, 204);
    assert.equal(receiver.requests.length, 9);
  });

  test('no answer within the time limit is a failure, retried later', async () => {
    const { receiver } = await receiverWithEndpoint(['payment.expired']);
    receiver.answer = () => 'hang';
    const intent = await createIntent(t, sk, { amount: 100 });
    await act(t, sk, intent.referenceNumber, 'simulate-expiry');
    await receiver.waitFor(1);
    const eventId = await eventIdOf(t, sk, intent.referenceNumber, 'payment.expired');
    const delivery = await deliveryOf(eventId);
    const failed = await waitForDelivery(delivery.id, (d) => d.attempts[0]?.error?.startsWith('no answer within'));
    assert.equal(failed.attempts[0].statusCode, null);
    assert.ok(failed.attempts[0].durationMs >= 1000);
    receiver.answer = () => ({ status: 200 });
    await waitForDelivery(delivery.id, (d) => d.status === 'SUCCEEDED');
  });

  test('redirects are not followed: a 3xx is a failed attempt', async () => {
    const { receiver } = await receiverWithEndpoint(['payment.confirmed']);
    receiver.answer = (request) =>
      request.path === '/hook' ? { status: 302, headers: { location: '/elsewhere' } } : { status: 200 };
    const intent = await createIntent(t, sk, { amount: 100 });
    await act(t, sk, intent.referenceNumber, 'simulate');
    await receiver.waitFor(2);
    const eventId = await eventIdOf(t, sk, intent.referenceNumber, 'payment.confirmed');
    // An attempt's outcome is recorded after its HTTP exchange (a followed redirect included):
    // once two are recorded as 302, any visit to the Location would already have arrived.
    const delivery = await waitForDelivery(
      (await deliveryOf(eventId)).id,
      (d) => d.attempts[0]?.statusCode === 302 && d.attempts[1]?.statusCode === 302,
    );
    assert.ok(
      receiver.requests.every((r) => r.path === '/hook'),
      'the Location is never visited; the delivery is retried at its own URL',
    );
    assert.equal(delivery.status, 'FAILED', 'a failed attempt, its retry scheduled');
    assert.ok(delivery.nextAttemptAt);
    assert.equal(delivery.lastError, 'HTTP 302');
  });

  test('ping goes to that endpoint only, whatever it subscribes to', async () => {
    const target = await receiverWithEndpoint(['payment.refunded']);
    const bystander = await receiverWithEndpoint(['payment.refunded']);
    const response = await t.request('POST', `${ENDPOINTS}/${target.endpoint.id}/test`, {
      key: sk,
      idempotencyKey: true,
    });
    expectStatus(response, 200);
    assert.equal(response.body.data.event, 'ping');
    assert.equal(response.body.data.endpointId, target.endpoint.id);
    const [request] = await target.receiver.waitFor(1);
    assert.equal(request!.headers['x-commerce-event'], 'ping');
    const body = verifyWebhook(request!.body, request!.headers, target.endpoint.secret) as any;
    assert.deepEqual(Object.keys(body), ['id', 'event', 'timestamp', 'sandbox', 'data', 'sequence']);
    assert.equal(body.event, 'ping');
    assert.equal(body.sandbox, true);
    assert.equal(body.data.endpointId, target.endpoint.id);
    assert.deepEqual(await deliveriesTo([bystander.endpoint.id]), [], 'no delivery was written for the bystander');
    await waitForSuccess('ping', target.endpoint.id);
    assert.equal(bystander.receiver.requests.length, 0);
  });

  test('after a rotation both secrets sign for the overlap, each signature valid on its own', async () => {
    const { receiver, endpoint } = await receiverWithEndpoint(['payment.created']);
    const rotated = await t.request('POST', `${ENDPOINTS}/${endpoint.id}/rotate-secret`, {
      key: sk,
      idempotencyKey: true,
    });
    const newSecret = rotated.body.data.secret as string;
    await createIntent(t, sk, { amount: 100 });
    const [request] = await receiver.waitFor(1);
    const timestamp = String(request!.headers['x-commerce-timestamp']);
    assert.equal(
      request!.headers['x-commerce-signature'],
      `${expectedSignature(newSecret, timestamp, request!.body)},${expectedSignature(endpoint.secret, timestamp, request!.body)}`,
    );
    verifyWebhook(request!.body, request!.headers, newSecret);
    verifyWebhook(request!.body, request!.headers, endpoint.secret);
    assert.throws(() => verifyWebhook(request!.body, request!.headers, 'f'.repeat(64)), WebhookVerificationError);

    // Once the overlap is over, only the new secret signs.
    await t.runtime.db
      .updateTable('webhook_endpoints')
      .set({ previous_secret_expires_at: new Date(Date.now() - 1000) })
      .where('id', '=', endpoint.id)
      .execute();
    await createIntent(t, sk, { amount: 100 });
    const [, later] = await receiver.waitFor(2);
    const laterTimestamp = String(later!.headers['x-commerce-timestamp']);
    assert.equal(later!.headers['x-commerce-signature'], expectedSignature(newSecret, laterTimestamp, later!.body));
  });

  test('the address is checked again at every attempt: a URL that now points inside is refused', async () => {
    const receiver = await startReceiver();
    receivers.push(receiver);
    const port = new URL(receiver.url).port;
    const endpointId = await liveEndpointAt(receiver.url, ['payment.created']);
    for (const url of [`https://127.0.0.1:${port}/hook`, `https://localhost:${port}/hook`]) {
      await t.runtime.db.updateTable('webhook_endpoints').set({ url }).where('id', '=', endpointId).execute();
      const intent = await createIntent(t, business.keys.secretLive, { amount: 100 });
      const eventId = await eventIdOf(t, business.keys.secretLive, intent.referenceNumber);
      const row = await t.runtime.db
        .selectFrom('webhook_deliveries')
        .select('id')
        .where('event_id', '=', eventId)
        .executeTakeFirstOrThrow();
      const failed = await waitUntil(async () => {
        const response = await t.request('GET', `${DELIVERIES}/${row.id}`, { key: business.keys.secretLive });
        const attempts = response.body.data.attempts;
        return attempts.length > 0 && attempts[0].durationMs !== null ? response.body.data : undefined;
      }, 'an attempt to be recorded');
      assert.match(failed.attempts[0].error, /not a public address|non-public address/);
    }
    assert.equal(receiver.requests.length, 0);
  });

  test('attempts to one receiver reuse their connections', async (context) => {
    const { receiver } = await receiverWithEndpoint(['payment.created']);
    for (let i = 0; i < 12; i++) await createIntent(t, sk, { amount: 100 + i });
    await receiver.waitFor(12);
    // How many connections depends on timing: at most 4 attempts are in flight to an endpoint, a
    // socket goes back to the pool a moment after its answer is read (an attempt starting in that
    // moment opens another), and the receiver closes one idle for 5 s. Without reuse, every attempt
    // would open its own: 12.
    void context.annotate(`${receiver.connections()} connections for 12 attempts`);
    assert.ok(receiver.connections() < 12, `${receiver.connections()} connections for 12 attempts: none reused`);
  });

  test('a slow receiver holds at most 4 attempts and does not delay another endpoint', async () => {
    // This test's worker waits a minute for an answer, so the slow receiver's attempts stay open
    // for the whole test: the fast endpoint is served while every slow slot is held.
    await worker.stop();
    const patient = startWorker(
      { ...t.runtime, config: { ...t.runtime.config, webhookTimeoutMs: 60_000 } },
      pino({ level: 'silent' }),
      [],
      60_000,
    );
    const slowOwner = await t.createBusiness({ name: 'Slow' });
    const slow = await receiverWithEndpoint(['payment.created'], slowOwner.keys.secretTest);
    const fast = await receiverWithEndpoint(['payment.created']);
    let maxInFlight = 0;
    slow.receiver.answer = () => {
      maxInFlight = Math.max(maxInFlight, slow.receiver.inFlight());
      return 'hang';
    };
    try {
      for (let i = 0; i < 10; i++) await createIntent(t, slowOwner.keys.secretTest, { amount: 100 });
      await slow.receiver.waitFor(4);
      for (let i = 0; i < 10; i++) await createIntent(t, sk, { amount: 100 });
      await fast.receiver.waitFor(10, 20_000);
      assert.equal(slow.receiver.requests.length, 4, 'the slow endpoint still holds its first 4 attempts');
      assert.equal(slow.receiver.inFlight(), 4, 'none of them has been answered');
      assert.ok(maxInFlight <= 4, `slow endpoint had ${maxInFlight} attempts at once`);
    } finally {
      await slow.receiver.close(); // ends the hanging attempts, so the worker can stop
      await patient.stop();
      worker = startWorker(t.runtime, pino({ level: 'silent' }), [], 60_000);
    }
  });

  test('delivery log: filters, pagination and DELIVERY_NOT_FOUND', async () => {
    const { endpoint } = await receiverWithEndpoint(['payment.created', 'payment.cancelled']);
    const intent = await createIntent(t, sk, { amount: 100 });
    await act(t, sk, intent.referenceNumber, 'cancel');
    const byEndpoint = await t.request('GET', `${DELIVERIES}?endpointId=${endpoint.id}`, { key: sk });
    expectStatus(byEndpoint, 200);
    assert.equal(byEndpoint.body.data.total, 2);
    assert.deepEqual(
      byEndpoint.body.data.items.map((d: { event: string }) => d.event),
      ['payment.cancelled', 'payment.created'],
    );
    const cancelled = await t.request(
      'GET',
      `${DELIVERIES}?endpointId=${endpoint.id}&event=payment.cancelled&limit=1`,
      { key: sk },
    );
    assert.equal(cancelled.body.data.total, 1);
    assert.equal(cancelled.body.data.limit, 1);
    const future = await t.request('GET', `${DELIVERIES}?from=2999-01-01`, { key: sk });
    assert.equal(future.body.data.total, 0);
    expectError(await t.request('GET', `${DELIVERIES}?status=LOST`, { key: sk }), 400, 'VALIDATION_ERROR');

    const id = byEndpoint.body.data.items[0].id;
    const other = await t.createBusiness({ name: 'Stranger' });
    expectError(
      await t.request('GET', `${DELIVERIES}/${id}`, { key: other.keys.secretTest }),
      404,
      'DELIVERY_NOT_FOUND',
    );
    // The owner's live key on a sandbox delivery: SANDBOX_MISMATCH (issue 15 item 10).
    expectError(
      await t.request('GET', `${DELIVERIES}/${id}`, { key: business.keys.secretLive }),
      403,
      'SANDBOX_MISMATCH',
    );
    expectError(
      await t.request('POST', `${DELIVERIES}/${id}/retry`, { key: other.keys.secretTest, idempotencyKey: true }),
      404,
      'DELIVERY_NOT_FOUND',
    );
    expectError(await t.request('GET', `${DELIVERIES}/dlv_nothing`, { key: sk }), 404, 'DELIVERY_NOT_FOUND');

    // Deleting the endpoint ends its waiting deliveries; they can no longer be retried.
    await t.request('DELETE', `${ENDPOINTS}/${endpoint.id}`, { key: sk, idempotencyKey: true });
    const gone = await t.request('POST', `${DELIVERIES}/${id}/retry`, { key: sk, idempotencyKey: true });
    expectError(gone, 404, 'ENDPOINT_NOT_FOUND');
    const kept = await t.request('GET', `${DELIVERIES}/${id}`, { key: sk });
    expectStatus(kept, 200);
  });
});

describe('verifyWebhook (the receiver helper)', () => {
  const secret = 'a'.repeat(64);
  const body = '{"id":"evt_1","event":"payment.created"}';
  const now = Date.parse('2026-11-22T10:00:00.000Z');
  const timestamp = String(now / 1000);
  const headers = (signature: string, ts = timestamp) => ({
    'x-commerce-signature': signature,
    'x-commerce-timestamp': ts,
  });

  test('accepts a good signature, from a plain object or a Headers instance', () => {
    const signature = expectedSignature(secret, timestamp, body);
    assert.deepEqual(verifyWebhook(body, headers(signature), secret, { now }), JSON.parse(body));
    const fetchHeaders = new Headers(headers(signature));
    assert.deepEqual(verifyWebhook(Buffer.from(body), fetchHeaders, secret, { now }), JSON.parse(body));
  });

  test('refuses a changed body, a wrong secret, a missing header and an old or future timestamp', () => {
    const signature = expectedSignature(secret, timestamp, body);
    assert.throws(
      () => verifyWebhook(body.replace('created', 'confirmed'), headers(signature), secret, { now }),
      WebhookVerificationError,
    );
    assert.throws(() => verifyWebhook(body, headers(signature), 'b'.repeat(64), { now }), WebhookVerificationError);
    assert.throws(
      () => verifyWebhook(body, { 'x-commerce-timestamp': timestamp }, secret, { now }),
      WebhookVerificationError,
    );
    assert.throws(
      () => verifyWebhook(body, { 'x-commerce-signature': signature }, secret, { now }),
      WebhookVerificationError,
    );
    const old = String(now / 1000 - 301);
    assert.throws(
      () => verifyWebhook(body, headers(expectedSignature(secret, old, body), old), secret, { now }),
      /tolerance/,
    );
    const future = String(now / 1000 + 301);
    assert.throws(
      () => verifyWebhook(body, headers(expectedSignature(secret, future, body), future), secret, { now }),
      /tolerance/,
    );
    const edge = String(now / 1000 - 300);
    verifyWebhook(body, headers(expectedSignature(secret, edge, body), edge), secret, { now });
    verifyWebhook(body, headers(expectedSignature(secret, edge, body), edge), secret, {
      now: now + 100_000,
      toleranceSeconds: 400,
    });
  });
});
