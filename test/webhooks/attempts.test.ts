import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, test } from 'vitest';
import pino from 'pino';
import { Webhook } from 'standardwebhooks';
import { startWorker, type Worker } from '../../src/worker/worker.js';
import { expectError, expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { createIntent } from '../intents/support.js';
import { eventIdOf } from '../support/read-api.js';
import { closedPort, ENDPOINTS, webhookHelpers } from './support.js';

const SCALE = 0.0001;

describe('attempts keep what happened (issue 17, item 4)', () => {
  let t: TestApp;
  let worker: Worker;
  let business: TestBusiness;
  let sk: string;
  let hooks: ReturnType<typeof webhookHelpers>;
  beforeAll(async () => {
    // Retries at the real schedule (30 s on): each case looks at one first attempt only.
    t = await startTestApp({
      config: { WEBHOOK_ALLOW_PRIVATE: 'true', RATE_LIMIT_TEST_PER_MINUTE: '100000' },
      configOverrides: { webhookTimeoutMs: 1000 },
    });
    hooks = webhookHelpers(t);
    worker = startWorker(t.runtime, pino({ level: 'silent' }), [], 60_000);
  });
  beforeEach(async () => {
    business = await t.createBusiness();
    sk = business.keys.secretTest;
  });
  afterAll(async () => {
    await worker.stop();
    await hooks.closeAll();
    await t.close();
  });

  test('an answered attempt: the request headers sent, the status, the answer headers and 4 KB of its body', async () => {
    const { receiver, endpoint } = await hooks.receiverWithEndpoint(sk, ['payment.created']);
    receiver.answer = () => ({
      status: 202,
      body: 'é'.repeat(1500) + 'x'.repeat(3000),
      headers: { 'x-receiver': 'yes' },
    });
    const id = await hooks.ping(sk, endpoint.id);
    const [request] = await receiver.waitFor(1);
    const delivery = await hooks.waitForDelivery(sk, id, (d) => d.status === 'SUCCEEDED');
    const [attempt] = delivery.attempts;
    assert.equal(attempt.statusCode, 202);
    assert.equal(attempt.error, null);
    assert.equal(attempt.errorClass, null);
    assert.ok(Number.isInteger(attempt.durationMs) && attempt.durationMs >= 0);
    // The headers as sent, signature included, the same the receiver saw.
    const sent = attempt.request.headers as Record<string, string>;
    for (const [name, value] of Object.entries(sent)) {
      assert.equal(request!.headers[name.toLowerCase()], value, `header ${name}`);
    }
    assert.equal(sent['X-Commerce-Delivery'], id);
    assert.match(sent['X-Commerce-Signature']!, /^sha256=[0-9a-f]{64}$/);
    assert.equal(sent['Content-Length'], String(Buffer.byteLength(request!.body)));
    assert.equal(attempt.response.statusCode, 202);
    assert.equal(attempt.response.headers['x-receiver'], 'yes');
    assert.equal(attempt.response.headers['content-type'], 'text/plain');
    const kept = Buffer.from(attempt.response.body, 'utf8');
    assert.ok(kept.length <= 4096 && kept.length >= 4093, `kept ${kept.length} bytes`);
    assert.ok(attempt.response.body.startsWith('é'.repeat(1500)));
    assert.ok(Buffer.byteLength(attempt.responseBodySnippet) <= 1024);
    assert.ok(attempt.responseBodySnippet.startsWith('é'.repeat(500)), 'the 1 KB snippet of decisions.md stays');
  });

  test('each failure has its class: non-2xx, redirect, timeout, connection refused, TLS, DNS, refused address', async () => {
    const { receiver, endpoint } = await hooks.receiverWithEndpoint(sk, ['payment.created']);
    const setUrl = (url: string) =>
      t.runtime.db.updateTable('webhook_endpoints').set({ url }).where('id', '=', endpoint.id).execute();
    const firstAttempt = async () => {
      const id = await hooks.ping(sk, endpoint.id);
      const delivery = await hooks.waitForDelivery(sk, id, (d) => d.attempts[0]?.durationMs != null);
      return delivery.attempts[0];
    };
    const port = new URL(receiver.url).port;

    receiver.answer = () => ({ status: 503, body: 'down for maintenance', headers: { 'retry-after': '120' } });
    let attempt = await firstAttempt();
    assert.equal(attempt.errorClass, 'NON_2XX');
    assert.equal(attempt.error, 'HTTP 503');
    assert.equal(attempt.response.body, 'down for maintenance');
    assert.equal(attempt.response.headers['retry-after'], '120');

    receiver.answer = () => ({ status: 301, headers: { location: 'https://elsewhere.example/' } });
    attempt = await firstAttempt();
    assert.equal(attempt.errorClass, 'REDIRECT_REFUSED');
    assert.equal(attempt.response.headers.location, 'https://elsewhere.example/');

    receiver.answer = () => 'hang';
    attempt = await firstAttempt();
    assert.equal(attempt.errorClass, 'TIMEOUT');
    assert.equal(attempt.statusCode, null);
    assert.equal(attempt.response, null);
    assert.ok(attempt.request.headers['X-Commerce-Signature']);
    receiver.answer = () => ({ status: 200 });

    await setUrl(`http://127.0.0.1:${await closedPort()}/hook`);
    attempt = await firstAttempt();
    assert.equal(attempt.errorClass, 'CONNECTION_REFUSED', attempt.error);

    // https to a plain-http server: the TLS handshake fails.
    await setUrl(`https://127.0.0.1:${port}/hook`);
    attempt = await firstAttempt();
    assert.equal(attempt.errorClass, 'TLS', attempt.error);

    await setUrl(`http://no-such-host.invalid:${port}/hook`);
    attempt = await firstAttempt();
    assert.equal(attempt.errorClass, 'DNS', attempt.error);

    // A live endpoint never reaches a loopback address.
    await t.runtime.db
      .updateTable('webhook_endpoints')
      .set({ url: `https://127.0.0.1:${port}/hook`, environment: 'live' })
      .where('id', '=', endpoint.id)
      .execute();
    const live = await createIntent(t, business.keys.secretLive, { amount: 100 });
    assert.ok(live.referenceNumber);
    const row = await hooks.waitFor(
      () =>
        t.runtime.db
          .selectFrom('webhook_attempts as a')
          .innerJoin('webhook_deliveries as d', 'd.id', 'a.delivery_id')
          .select(['a.error_class', 'a.error', 'a.duration_ms'])
          .where('d.endpoint_id', '=', endpoint.id)
          .where('d.environment', '=', 'live')
          .executeTakeFirst(),
      (found) => found?.duration_ms != null,
      'the live attempt',
    );
    assert.equal(row!.error_class, 'ADDRESS_REFUSED', row!.error!);
  });

  test('a listed delivery filters on FAILED, and its status list has the four states', async () => {
    expectError(
      await t.request('GET', '/api/v1/dev/webhooks/events?status=BROKEN', { key: sk }),
      400,
      'VALIDATION_ERROR',
    );
    expectStatus(await t.request('GET', '/api/v1/dev/webhooks/events?status=FAILED', { key: sk }), 200);
  });
});

/** Standard Webhooks: the signature computed here from the spec, independently of the service. */
function standardSignature(secret: string, id: string, timestamp: string, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
}

describe('Standard Webhooks mode (issue 17, item 5)', () => {
  let t: TestApp;
  let worker: Worker;
  let business: TestBusiness;
  let sk: string;
  let hooks: ReturnType<typeof webhookHelpers>;
  beforeAll(async () => {
    t = await startTestApp({
      config: {
        WEBHOOK_ALLOW_PRIVATE: 'true',
        WEBHOOK_RETRY_SCALE: String(SCALE),
        RATE_LIMIT_TEST_PER_MINUTE: '100000',
      },
    });
    hooks = webhookHelpers(t);
    worker = startWorker(t.runtime, pino({ level: 'silent' }), [], 60_000);
  });
  beforeEach(async () => {
    business = await t.createBusiness();
    sk = business.keys.secretTest;
  });
  afterAll(async () => {
    await worker.stop();
    await hooks.closeAll();
    await t.close();
  });

  test('commerce is the default; standard gives a whsec_ secret; the scheme is set at creation only', async () => {
    const commerce = await hooks.createEndpoint(sk, { url: 'https://93.184.216.34/hook', events: ['payment.created'] });
    assert.equal(commerce.signatureScheme, 'commerce');
    assert.match(commerce.secret, /^[0-9a-f]{64}$/);
    const standard = await hooks.createEndpoint(sk, {
      url: 'https://93.184.216.34/hook',
      events: ['payment.created'],
      signatureScheme: 'standard',
    });
    assert.equal(standard.signatureScheme, 'standard');
    assert.match(standard.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.equal(Buffer.from(standard.secret.slice(6), 'base64').length, 32);
    const rotated = await t.request('POST', `${ENDPOINTS}/${standard.id}/rotate-secret`, {
      key: sk,
      idempotencyKey: true,
    });
    expectStatus(rotated, 200);
    assert.match(rotated.body.data.secret, /^whsec_/);
    expectError(
      await t.request('POST', ENDPOINTS, {
        key: sk,
        idempotencyKey: true,
        body: { url: 'https://93.184.216.34/hook', events: ['payment.created'], signatureScheme: 'svix' },
      }),
      400,
      'VALIDATION_ERROR',
    );
    expectError(
      await t.request('PATCH', `${ENDPOINTS}/${standard.id}`, {
        key: sk,
        idempotencyKey: true,
        body: { signatureScheme: 'commerce' },
      }),
      400,
      'VALIDATION_ERROR',
    );
  });

  test('real deliveries verify with the standardwebhooks package, before and after a rotation', async () => {
    const { receiver, endpoint } = await hooks.receiverWithEndpoint(sk, ['payment.created'], {
      signatureScheme: 'standard',
    });
    const intent = await createIntent(t, sk, { amount: 4200 });
    const [request] = await receiver.waitFor(1);
    const headers = request!.headers as Record<string, string>;
    const eventId = await eventIdOf(t, sk, intent.referenceNumber, 'payment.created');
    assert.equal(headers['webhook-id'], eventId, 'webhook-id is the event id, the same on every attempt');
    assert.match(headers['webhook-timestamp']!, /^\d{10}$/);
    assert.equal(
      headers['webhook-signature'],
      `v1,${standardSignature(endpoint.secret, eventId, headers['webhook-timestamp']!, request!.body)}`,
    );
    assert.equal(headers['x-commerce-signature'], undefined);
    assert.equal(headers['x-commerce-event'], 'payment.created');
    const verified = new Webhook(endpoint.secret).verify(request!.body, headers) as { id: string; event: string };
    assert.equal(verified.id, eventId);
    assert.equal(verified.event, 'payment.created');
    assert.throws(() => new Webhook(`whsec_${Buffer.alloc(32, 7).toString('base64')}`).verify(request!.body, headers));

    const rotated = await t.request('POST', `${ENDPOINTS}/${endpoint.id}/rotate-secret`, {
      key: sk,
      idempotencyKey: true,
    });
    const newSecret = rotated.body.data.secret as string;
    await hooks.ping(sk, endpoint.id);
    const [, second] = await receiver.waitFor(2);
    const secondHeaders = second!.headers as Record<string, string>;
    assert.equal(secondHeaders['webhook-signature']!.split(' ').length, 2, 'both secrets sign during the overlap');
    for (const secret of [newSecret, endpoint.secret]) {
      const ping = new Webhook(secret).verify(second!.body, secondHeaders) as { event: string };
      assert.equal(ping.event, 'ping');
    }
  });
});
