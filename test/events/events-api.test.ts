import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import pino from 'pino';
import { eventRecord } from '../../src/modules/events/outbox.js';
import { unitOfWork } from '../../src/modules/events/unit-of-work.js';
import { startWorker, type Worker } from '../../src/worker/worker.js';
import {
  expectError,
  expectStatus,
  startTestApp,
  waitUntil,
  type TestApp,
  type TestBusiness,
} from '../support/harness.js';
import { act, createIntent } from '../intents/support.js';
import { webhookHelpers } from '../webhooks/support.js';

const EVENTS = '/api/v1/dev/events';

describe('the Events API and per-object sequences', () => {
  let t: TestApp;
  let business: TestBusiness;
  let sk: string;
  let hooks: ReturnType<typeof webhookHelpers>;
  let worker: Worker;
  beforeAll(async () => {
    t = await startTestApp({
      config: { RATE_LIMIT_TEST_PER_MINUTE: '100000', WEBHOOK_ALLOW_PRIVATE: 'true' },
    });
    business = await t.createBusiness();
    sk = business.keys.secretTest;
    hooks = webhookHelpers(t);
    worker = startWorker(t.runtime, pino({ level: 'silent' }), [], 60_000);
  });
  afterAll(async () => {
    await worker.stop();
    await hooks.closeAll();
    await t.close();
  });

  const list = (query = '', key = sk) => t.request('GET', `${EVENTS}${query}`, { key });

  test('lists the events newest first with a sequence per object, in the API and in the delivered body', async () => {
    const { receiver } = await hooks.receiverWithEndpoint(sk, ['payment.created', 'payment.confirmed']);
    const intent = await createIntent(t, sk, { amount: 700 });
    expectStatus(await act(t, sk, intent.referenceNumber, 'simulate', { outcome: 'success' }), 200);
    const other = await createIntent(t, sk, { amount: 800 });

    const listed = await list(`?object=${intent.referenceNumber}`);
    expectStatus(listed, 200);
    const items = listed.body.data.items;
    assert.deepEqual(
      items.map((e: any) => [e.type, e.sequence]),
      [
        ['payment.confirmed', 2],
        ['payment.created', 1],
      ],
    );
    for (const event of items) {
      assert.equal(event.object, intent.referenceNumber);
      assert.equal(event.sandbox, true);
      assert.equal(event.payload.id, event.id);
      assert.equal(event.payload.sequence, event.sequence);
      assert.equal(event.payload.data.reference_number, intent.referenceNumber);
    }
    assert.equal(listed.body.data.total, 2);

    const all = await list();
    assert.equal(all.body.data.items[0].object, other.referenceNumber, 'newest first');
    assert.equal(all.body.data.items[0].sequence, 1);

    const received = await hooks.waitFor(
      async () => receiver.requests.map((r) => JSON.parse(r.body)),
      (bodies) => bodies.filter((b) => b.data.reference_number === intent.referenceNumber).length === 2,
      'both deliveries',
    );
    const confirmed = received.find((b) => b.event === 'payment.confirmed');
    assert.equal(confirmed.sequence, 2);
    assert.deepEqual(confirmed, items[0].payload);

    const one = await t.request('GET', `${EVENTS}/${items[0].id}`, { key: sk });
    expectStatus(one, 200);
    assert.deepEqual(one.body.data, items[0]);

    const deliveries = await t.request('GET', `/api/v1/dev/webhooks/events?eventId=${items[0].id}`, { key: sk });
    expectStatus(deliveries, 200);
    assert.equal(deliveries.body.data.total, 1);
    assert.equal(deliveries.body.data.items[0].eventId, items[0].id);
  });

  test('filters by type, exact or by prefix, and polls oldest first after an id', async () => {
    const first = await createIntent(t, sk, { amount: 900 });
    const anchor = (await list(`?object=${first.referenceNumber}`)).body.data.items[0];
    const second = await createIntent(t, sk, { amount: 901 });
    expectStatus(await act(t, sk, second.referenceNumber, 'cancel'), 200);

    // Polling shows an event once every transaction older than its own has ended: wait for both.
    const polled = await waitUntil(async () => {
      const response = await list(`?after=${anchor.id}`);
      expectStatus(response, 200);
      return response.body.data.items.length >= 2 ? response : undefined;
    }, 'both events after the anchor');
    assert.deepEqual(
      polled.body.data.items.map((e: any) => [e.type, e.object]),
      [
        ['payment.created', second.referenceNumber],
        ['payment.cancelled', second.referenceNumber],
      ],
    );
    const cancelledOnly = await list(`?after=${anchor.id}&type=payment.cancelled`);
    assert.deepEqual(
      cancelledOnly.body.data.items.map((e: any) => e.type),
      ['payment.cancelled'],
    );
    const prefix = await list(`?type=payment.*&limit=100`);
    assert.ok(prefix.body.data.items.length >= 5);
    assert.ok(prefix.body.data.items.every((e: any) => e.type.startsWith('payment.')));
    assert.equal((await list('?type=order.*')).body.data.total, 0);

    const paged = await list(`?after=${anchor.id}&limit=1`);
    assert.equal(paged.body.data.items.length, 1);
    assert.equal(paged.body.data.hasMore, true);
    const caughtUp = await list(`?after=${polled.body.data.items[1].id}`);
    assert.deepEqual(caughtUp.body.data.items, []);
    assert.equal(caughtUp.body.data.hasMore, false);
  });

  test('long polling: with after and wait, a caught-up request answers with the next event; without one, empty', async () => {
    const own = await t.createBusiness();
    const key = own.keys.secretTest;
    const first = await createIntent(t, key, { amount: 100 });
    const newest = (await list('?limit=1', key)).body.data.items[0];
    assert.equal(newest.object, first.referenceNumber);
    const waiting = list(`?after=${newest.id}&wait=20`, key);
    const second = await createIntent(t, key, { amount: 200 });
    const answered = await waiting;
    expectStatus(answered, 200);
    assert.deepEqual(
      answered.body.data.items.map((event: any) => [event.type, event.object]),
      [['payment.created', second.referenceNumber]],
    );
    const caughtUp = answered.body.data.items[0].id;
    const nothing = await list(`?after=${caughtUp}&wait=1`, key);
    expectStatus(nothing, 200);
    assert.deepEqual(nothing.body.data.items, []);
    expectError(await list('?wait=5', key), 400, 'VALIDATION_ERROR');
    expectError(await list(`?after=${caughtUp}&wait=31`, key), 400, 'VALIDATION_ERROR');
  });

  test('errors: unknown event, unknown cursor, page with after, keys that may not read', async () => {
    expectError(await t.request('GET', `${EVENTS}/evt_unknown`, { key: sk }), 404, 'EVENT_NOT_FOUND');
    expectError(await list('?after=evt_unknown'), 404, 'EVENT_NOT_FOUND');
    const someEvent = (await list()).body.data.items[0];
    expectError(await list(`?after=${someEvent.id}&page=2`), 400, 'VALIDATION_ERROR');
    expectError(await list('?unknown=1'), 400, 'VALIDATION_ERROR');
    expectError(await list('', business.keys.publishableTest), 403, 'SECRET_KEY_REQUIRED');
    expectError(await t.request('GET', EVENTS), 401, 'MISSING_CREDENTIALS');

    // The live key lists the live environment only; a test event of its own business is a
    // mismatch through it, as every other resource is (api.md 5 rule 4), another business's is not found.
    const live = await list('', business.keys.secretLive);
    expectStatus(live, 200);
    assert.equal(live.body.data.total, 0);
    expectError(
      await t.request('GET', `${EVENTS}/${someEvent.id}`, { key: business.keys.secretLive }),
      403,
      'SANDBOX_MISMATCH',
    );
    const stranger = await t.createBusiness({ name: 'Another business' });
    for (const key of [stranger.keys.secretLive, stranger.keys.secretTest]) {
      expectError(await t.request('GET', `${EVENTS}/${someEvent.id}`, { key }), 404, 'EVENT_NOT_FOUND');
    }

    const issue = async (scopes: string[]) => {
      const response = await t.admin('POST', '/keys', {
        businessId: business.id,
        kind: 'secret',
        environment: 'test',
        scopes,
      });
      expectStatus(response, 201);
      return response.body.data.key as string;
    };
    expectError(await list('', await issue(['intents:read'])), 403, 'SCOPE_REQUIRED');
    // webhooks:read without intents:read: payment events are not readable through that key.
    const webhooksOnly = await issue(['webhooks:read']);
    const seen = await list('?limit=100', webhooksOnly);
    expectStatus(seen, 200);
    assert.ok(seen.body.data.items.every((e: any) => !e.type.startsWith('payment.')));
    expectError(await t.request('GET', `${EVENTS}/${someEvent.id}`, { key: webhooksOnly }), 404, 'EVENT_NOT_FOUND');
  });

  test('racing writers of one object get distinct, gap-free sequences', async () => {
    const subject = `race_${Date.now()}`;
    const scope = { businessId: business.id, environment: 'test' as const };
    const writers = 12;
    await Promise.all(
      Array.from({ length: writers }, (_, writer) =>
        t.runtime.db.transaction().execute(async (trx) => {
          // Two events per transaction for half the writers: numbered in order within the statement
          // (their data is the test's marks, not a stock event's).
          const events = [eventRecord('product.stock_low', scope, subject, { writer, n: 1 } as never)];
          if (writer % 2 === 0)
            events.push(eventRecord('product.stock_out', scope, subject, { writer, n: 2 } as never));
          await unitOfWork().events(events).run(trx);
        }),
      ),
    );
    const rows = await t.runtime.db
      .selectFrom('events')
      .select(['sequence', 'body'])
      .where('subject', '=', subject)
      .orderBy('sequence')
      .execute();
    assert.deepEqual(
      rows.map((row) => Number(row.sequence)),
      Array.from({ length: writers * 1.5 }, (_, i) => i + 1),
    );
    for (const row of rows) {
      const body = JSON.parse(row.body);
      assert.equal(body.sequence, Number(row.sequence));
      if (body.data.n === 2) {
        const first = rows.find(
          (r) => JSON.parse(r.body).data.writer === body.data.writer && JSON.parse(r.body).data.n === 1,
        )!;
        assert.equal(Number(first.sequence) + 1, body.sequence, 'one statement numbers its events in order');
      }
    }
  });

  test('racing partial refunds of one intent over HTTP: each refund event has its own next sequence', async () => {
    const intent = await createIntent(t, sk, { amount: 10_000 });
    expectStatus(await act(t, sk, intent.referenceNumber, 'simulate', { outcome: 'success' }), 200);
    const refunds = await Promise.all(
      Array.from({ length: 4 }, () => act(t, sk, intent.referenceNumber, 'refund', { amount: 1000 })),
    );
    const succeeded = refunds.filter((r) => r.status === 200).length;
    assert.ok(succeeded >= 1, refunds.map((r) => r.text).join('\n'));
    const events = (await list(`?object=${intent.referenceNumber}&limit=100`)).body.data.items;
    assert.equal(events.filter((e: any) => e.type === 'payment.refunded').length, succeeded);
    assert.deepEqual(
      events.map((e: any) => e.sequence).sort((a: number, b: number) => a - b),
      Array.from({ length: 2 + succeeded }, (_, i) => i + 1),
    );
  });
});
