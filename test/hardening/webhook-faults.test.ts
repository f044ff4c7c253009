import assert from 'node:assert/strict';
import http from 'node:http';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, test } from 'vitest';
import pino from 'pino';
import { startWorker, type Worker } from '../../src/worker/worker.js';
import { createIntent } from '../intents/support.js';
import { expectStatus, startTestApp, waitUntil, type TestApp } from '../support/harness.js';
import { patience } from '../support/patience.js';
import { startReceiver, type Receiver } from '../support/receiver.js';

const ENDPOINTS = '/api/v1/dev/webhooks/endpoints';
const SCALE = 0.0001;

/** A receiver that resets every connection as soon as the request arrives. */
async function startResetter(): Promise<{ url: string; hits: () => number; close: () => Promise<void> }> {
  let hits = 0;
  const server = http.createServer((req) => {
    hits += 1;
    req.socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    hits: () => hits,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describe('webhook receivers that hang, reset or crawl do not hold back the others (issue 15, faults)', () => {
  let t: TestApp;
  let worker: Worker;
  const closers: (() => Promise<void>)[] = [];
  beforeAll(async () => {
    t = await startTestApp({
      config: {
        WEBHOOK_ALLOW_PRIVATE: 'true',
        WEBHOOK_RETRY_SCALE: String(SCALE),
        RATE_LIMIT_TEST_PER_MINUTE: '100000',
      },
      // Long enough that a healthy receiver's answer is never late on a loaded machine (each of
      // its deliveries is asserted to take one attempt); the hanging one is only asserted to hang.
      configOverrides: { webhookTimeoutMs: 10_000 },
    });
    worker = startWorker(t.runtime, pino({ level: 'silent' }), [], 60_000);
  });
  afterAll(async () => {
    // The receivers first: the worker waits for its attempts in flight when it stops.
    for (const close of closers) await close();
    await worker.stop();
    await t.close();
  });

  async function endpointFor(url: string) {
    const business = await t.createBusiness();
    const response = await t.request('POST', ENDPOINTS, {
      key: business.keys.secretTest,
      idempotencyKey: true,
      body: { url, events: ['payment.created'] },
    });
    expectStatus(response, 201);
    return { key: business.keys.secretTest, endpointId: response.body.data.id as string };
  }

  /** Polls until `check` holds (fails after 20 s instead of hanging). */
  async function until(what: string, check: () => Promise<boolean>): Promise<void> {
    await waitUntil(check, what, 20_000);
  }

  const attemptsOf = async (endpointId: string) =>
    t.runtime.db
      .selectFrom('webhook_deliveries')
      .select(['status', 'attempt_count', 'last_error'])
      .where('endpoint_id', '=', endpointId)
      .execute();

  test('a healthy endpoint gets every event while others hang, reset and crawl; the bad ones keep retrying', async () => {
    const hanging: Receiver = await startReceiver();
    hanging.answer = () => 'hang';
    const slow: Receiver = await startReceiver();
    slow.answer = () => ({ status: 200, body: 'late', delayMs: 1000 });
    const healthy: Receiver = await startReceiver();
    const resetter = await startResetter();
    closers.push(hanging.close, slow.close, healthy.close, resetter.close);

    const bad = [await endpointFor(hanging.url), await endpointFor(slow.url), await endpointFor(resetter.url)];
    const good = await endpointFor(healthy.url);
    for (let i = 0; i < 6; i++) for (const owner of bad) await createIntent(t, owner.key, { amount: 100 + i });
    await hanging.waitFor(1);
    for (let i = 0; i < 10; i++) await createIntent(t, good.key, { amount: 100 + i });

    // Every healthy delivery arrives, and succeeds once, while the hanging receiver still holds
    // attempts open: the bad endpoints did not take the worker's capacity.
    await healthy.waitFor(10, 15_000);
    assert.ok(hanging.inFlight() > 0, 'the hanging receiver still holds attempts');
    await until('the healthy deliveries succeed', async () =>
      (await attemptsOf(good.endpointId)).every((row) => row.status === 'SUCCEEDED'),
    );
    assert.deepEqual(
      (await attemptsOf(good.endpointId)).map((row) => row.attempt_count),
      Array(10).fill(1),
      'each delivered once',
    );

    // The reset endpoint's deliveries fail with a recorded error and keep to their schedule.
    await until('the reset deliveries are retried', async () => {
      const rows = await attemptsOf(bad[2]!.endpointId);
      return rows.length === 6 && rows.every((row) => row.attempt_count >= 2);
    });
    for (const row of await attemptsOf(bad[2]!.endpointId)) {
      assert.ok(row.last_error, JSON.stringify(row));
      assert.notEqual(row.status, 'SUCCEEDED');
    }
    assert.ok(resetter.hits() >= 12);
    // The slow one (1 s, under the limit) succeeds.
    await until('the slow deliveries succeed', async () => {
      const rows = await attemptsOf(bad[1]!.endpointId);
      return rows.length === 6 && rows.every((row) => row.status === 'SUCCEEDED');
    });
    expectStatus(await t.request('GET', '/health'), 200);
  });
});

/**
 * Issue 36, item 1: four businesses whose five endpoints each accept the connection and never
 * answer want 80 attempts in flight, more than the worker's 64 slots; sixteen more, with one such
 * endpoint each, stay under their own share (4 of 8) and want 64 more. They get their shares, and
 * another merchant's delivery still goes out while all of their attempts hang, not when one of
 * them times out.
 */
describe('silent endpoints of many businesses do not delay the others (issue 36, item 1)', () => {
  const SILENT_BUSINESSES = 4;
  const ENDPOINTS_EACH = 5;
  const SMALL_SILENT_BUSINESSES = 16;
  let t: TestApp;
  let worker: Worker;
  const receivers: Receiver[] = [];
  beforeAll(async () => {
    t = await startTestApp({
      config: { WEBHOOK_ALLOW_PRIVATE: 'true', RATE_LIMIT_TEST_PER_MINUTE: '100000' },
      configOverrides: { webhookTimeoutMs: patience(300_000) },
    });
    worker = startWorker(t.runtime, pino({ level: 'silent' }), [], 60_000);
  });
  afterAll(async () => {
    // The receivers first: the worker waits for its attempts in flight when it stops.
    for (const receiver of receivers) await receiver.close();
    await worker.stop();
    await t.close();
  });

  async function businessWithEndpoints(receiver: Receiver, count: number) {
    const business = await t.createBusiness();
    const key = business.keys.secretTest;
    for (let i = 0; i < count; i++) {
      const response = await t.request('POST', ENDPOINTS, {
        key,
        idempotencyKey: true,
        body: { url: `${receiver.url}?endpoint=${i}`, events: ['payment.created'] },
      });
      expectStatus(response, 201);
    }
    return key;
  }

  test("another merchant's first attempt goes out while every silent attempt still hangs", async (context) => {
    const silent = await startReceiver();
    silent.answer = () => 'hang';
    const healthy = await startReceiver();
    receivers.push(silent, healthy);
    const silentKeys: string[] = [];
    for (let i = 0; i < SILENT_BUSINESSES; i++) silentKeys.push(await businessWithEndpoints(silent, ENDPOINTS_EACH));
    for (let i = 0; i < SMALL_SILENT_BUSINESSES; i++) silentKeys.push(await businessWithEndpoints(silent, 1));
    const otherKey = await businessWithEndpoints(healthy, 1);

    // Four payments each: four deliveries to each silent endpoint, 144 in all.
    for (let round = 0; round < 4; round++) {
      await Promise.all(silentKeys.map((key) => createIntent(t, key, { amount: 100 + round })));
    }
    await waitUntil(async () => silent.inFlight() >= 64, 'the silent endpoints to hold every slot', 20_000);

    const committed = Date.now();
    await createIntent(t, otherKey, { amount: 500 });
    const [received] = await healthy.waitFor(1, 10_000);
    // Whatever the machine's speed: no silent attempt had ended (they hang until the answer limit,
    // far longer than this test), so the delivery did not wait for one of their slots to free.
    assert.equal(silent.requests.length - silent.inFlight(), 0, 'a silent attempt ended first');
    assert.ok(silent.inFlight() >= 64, `the silent endpoints still hold ${silent.inFlight()} attempts`);
    void context.annotate(`delivered ${received!.at - committed} ms after its commit`);
  });
});

/**
 * Issue 36, item 1: opening a connection has its own limit, shorter than the answer's. This
 * receiver takes the TCP connection and never says a word, so the TLS handshake never ends.
 */
describe('a receiver that never completes its connection is given up at the connect timeout', () => {
  let t: TestApp;
  let worker: Worker;
  const sockets = new Set<Socket>();
  const mute = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  beforeAll(async () => {
    await new Promise<void>((resolve) => mute.listen(0, '127.0.0.1', resolve));
    t = await startTestApp({
      config: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_SCALE: '1' },
      configOverrides: { webhookTimeoutMs: 20_000, webhookConnectTimeoutMs: 1000 },
    });
    worker = startWorker(t.runtime, pino({ level: 'silent' }), [], 60_000);
  });
  afterAll(async () => {
    await worker.stop();
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => mute.close(resolve));
    await t.close();
  });

  test('the attempt fails as TIMEOUT "could not connect within 1 s", long before the 20 s answer limit', async () => {
    const business = await t.createBusiness();
    const key = business.keys.secretTest;
    const url = `https://127.0.0.1:${(mute.address() as AddressInfo).port}/hook`;
    expectStatus(
      await t.request('POST', ENDPOINTS, { key, idempotencyKey: true, body: { url, events: ['payment.created'] } }),
      201,
    );
    const committed = Date.now();
    await createIntent(t, key, { amount: 100 });
    const attempt = await waitUntil(
      async () => {
        const list = await t.request('GET', '/api/v1/dev/webhooks/events', { key });
        const delivery = list.body.data.items[0] as
          { id: string; attemptCount: number; lastError: string | null } | undefined;
        if (!delivery?.lastError) return undefined;
        const detail = await t.request('GET', `/api/v1/dev/webhooks/events/${delivery.id}`, { key });
        return detail.body.data.attempts[0] as { error: string; errorClass: string; durationMs: number };
      },
      'the first attempt to fail',
      15_000,
    );
    assert.equal(attempt.errorClass, 'TIMEOUT');
    assert.match(attempt.error, /could not connect within 1 s/);
    assert.ok(attempt.durationMs >= 1000 && attempt.durationMs < 5000, `the attempt took ${attempt.durationMs} ms`);
    assert.ok(Date.now() - committed < 15_000);
  });
});
