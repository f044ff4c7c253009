import assert from 'node:assert/strict';
import { afterAll, beforeAll, beforeEach, describe, test } from 'vitest';
import { setMuted } from '../../src/modules/requests/service.js';
import { manualClock } from '../support/clock.js';
import { expectError, expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { listEvents } from '../support/read-api.js';
import { newWallet } from '../links/support.js';
import {
  INTENTS,
  PAYMENT_REQUESTS,
  act,
  askPayment,
  cancelRequest,
  createIntent,
  createRequest,
  endDueIn,
  getRequest,
} from './support.js';

const REQUEST_FIELDS = [
  'amount',
  'createdAt',
  'currency',
  'endedAt',
  'expiresAt',
  'failureCode',
  'id',
  'intent',
  'message',
  'phone',
  'status',
];

describe('payment requests API (issue 51 item 1)', () => {
  const clock = manualClock();
  let t: TestApp;
  let business: TestBusiness;
  let sk: string;
  beforeAll(async () => {
    t = await startTestApp({ clock, config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    business = await t.createBusiness({ name: 'Épicerie Ksar' });
    sk = business.keys.secretTest;
  });
  afterAll(() => t.close());
  beforeEach(() => clock.advance(60_000));

  /** A phone no other test asks, with a funded sandbox wallet. */
  const payer = async () => (await newWallet(t, 100_000)).phone;

  test('create for a FIXED intent: 201 PENDING with its amount, 300 s by default, payment_request.created', async () => {
    const intent = await createIntent(t, sk, { amount: 2500 });
    const phone = await payer();
    const before = Date.now();
    const response = await askPayment(t, sk, intent.referenceNumber, { phone, message: '  Table 4, merci  ' });
    expectStatus(response, 201);
    const created = response.body.data;
    assert.deepEqual(Object.keys(created).sort(), REQUEST_FIELDS);
    assert.match(created.id, /^PR-\d{16}$/);
    assert.deepEqual(
      [created.intent, created.status, created.amount, created.currency, created.phone, created.message],
      [intent.referenceNumber, 'PENDING', 2500, 'MRU', phone, 'Table 4, merci'],
    );
    assert.equal(created.failureCode, null);
    assert.equal(created.endedAt, null);
    const lifetime = Date.parse(created.expiresAt) - Date.parse(created.createdAt);
    assert.equal(lifetime, 300_000);
    assert.ok(Date.parse(created.createdAt) >= before - 1000);
    assert.deepEqual(await getRequest(t, sk, created.id), created);

    const events = await listEvents(t, sk, created.id);
    assert.deepEqual(
      events.map((event) => event.type),
      ['payment_request.created'],
    );
    const data = events[0]!.payload.data;
    assert.equal(data.id, created.id);
    assert.equal(data.intent, intent.referenceNumber);
    assert.equal(data.status, 'PENDING');
    assert.equal(data.amount, 2500);
    assert.notEqual(data.phone, phone, 'the event masks the phone');
    assert.equal(data.expires_at, created.expiresAt);
    // The intent stays payable while the request waits.
    const got = await t.request('GET', `${INTENTS}/${intent.referenceNumber}`, { key: sk });
    assert.equal(got.body.data.status, 'PENDING');
  });

  test('create for an OPEN intent takes the amount given; without one, 400 body.amount', async () => {
    const intent = await createIntent(t, sk, { amountType: 'OPEN' });
    const phone = await payer();
    const missing = await askPayment(t, sk, intent.referenceNumber, { phone });
    expectError(missing, 400, 'VALIDATION_ERROR');
    assert.match(JSON.stringify(missing.body.error), /body\.amount/);
    expectError(await askPayment(t, sk, intent.referenceNumber, { phone, amount: 0 }), 400, 'AMOUNT_OUT_OF_RANGE');
    const created = await createRequest(t, sk, intent.referenceNumber, { phone, amount: 1234, expiresIn: 60 });
    assert.equal(created.amount, 1234);
    assert.equal(Date.parse(created.expiresAt) - Date.parse(created.createdAt), 60_000);
  });

  test('the body is checked: a FIXED intent another amount, expiresIn 59 or 901, a long message, a bad phone: 400', async () => {
    const intent = await createIntent(t, sk, { amount: 2500 });
    const phone = await payer();
    const refused = async (body: Record<string, unknown>, field: RegExp) => {
      const response = await askPayment(t, sk, intent.referenceNumber, body);
      expectError(response, 400, 'VALIDATION_ERROR');
      assert.match(JSON.stringify(response.body.error), field);
    };
    await refused({ phone, amount: 2501 }, /body\.amount/);
    await refused({ phone, expiresIn: 59 }, /expiresIn/);
    await refused({ phone, expiresIn: 901 }, /expiresIn/);
    await refused({ phone, message: 'x'.repeat(101) }, /message/);
    await refused({ phone: '22220000021' }, /phone/);
    await refused({ phone: '+222 2000 0021' }, /phone/);
    await refused({}, /phone/);
    // The edges are accepted, and the intent's own amount may be repeated.
    const edge = await createRequest(t, sk, intent.referenceNumber, {
      phone,
      amount: 2500,
      expiresIn: 900,
      message: 'x'.repeat(100),
    });
    assert.equal(Date.parse(edge.expiresAt) - Date.parse(edge.createdAt), 900_000);
  });

  test('one pending request per intent: the second is 409 PAYMENT_REQUEST_PENDING, and allowed again once cancelled', async () => {
    const intent = await createIntent(t, sk, { amount: 700 });
    const first = await createRequest(t, sk, intent.referenceNumber, { phone: await payer() });
    expectError(
      await askPayment(t, sk, intent.referenceNumber, { phone: await payer() }),
      409,
      'PAYMENT_REQUEST_PENDING',
    );
    expectStatus(await cancelRequest(t, sk, first.id), 200);
    await createRequest(t, sk, intent.referenceNumber, { phone: await payer() });
  });

  test('an intent that cannot be paid (paid, cancelled) refuses a request: INTENT_NOT_PENDING', async () => {
    const cancelled = await createIntent(t, sk, { amount: 700 });
    expectStatus(await act(t, sk, cancelled.referenceNumber, 'cancel'), 200);
    expectError(
      await askPayment(t, sk, cancelled.referenceNumber, { phone: await payer() }),
      400,
      'INTENT_NOT_PENDING',
    );
    const paid = await createIntent(t, sk, { amount: 700 });
    expectStatus(await act(t, sk, paid.referenceNumber, 'simulate'), 200);
    expectError(await askPayment(t, sk, paid.referenceNumber, { phone: await payer() }), 400, 'INTENT_NOT_PENDING');
    expectError(await askPayment(t, sk, 'PI-0000000000000000', { phone: await payer() }), 404, 'INTENT_NOT_FOUND');
  });

  test('live: a phone without a wallet is WALLET_NOT_FOUND; one with a wallet is asked', async () => {
    const live = business.keys.secretLive;
    const intent = await createIntent(t, live, { amount: 900 });
    expectError(await askPayment(t, live, intent.referenceNumber, { phone: '+22249999999' }), 404, 'WALLET_NOT_FOUND');
    const wallet = await newWallet(t, 5000, 'live');
    const created = await createRequest(t, live, intent.referenceNumber, { phone: wallet.phone });
    assert.equal(created.status, 'PENDING');
    // Across environments: SANDBOX_MISMATCH both ways.
    expectError(await t.request('GET', `${PAYMENT_REQUESTS}/${created.id}`, { key: sk }), 403, 'SANDBOX_MISMATCH');
    expectError(await askPayment(t, sk, intent.referenceNumber, { phone: wallet.phone }), 403, 'SANDBOX_MISMATCH');
    expectError(
      await t.request('GET', `${INTENTS}/${intent.referenceNumber}/requests`, { key: sk }),
      403,
      'SANDBOX_MISMATCH',
    );
    expectError(await cancelRequest(t, sk, created.id), 403, 'SANDBOX_MISMATCH');
    expectStatus(await cancelRequest(t, live, created.id), 200);
  });

  test('a payer who muted the business gets no request (403 PAYMENT_REQUESTS_MUTED); unmuted, it does', async () => {
    const phone = await payer();
    await setMuted(t.runtime.db, { phone, environment: 'test' }, business.id, true);
    const intent = await createIntent(t, sk, { amount: 800 });
    expectError(await askPayment(t, sk, intent.referenceNumber, { phone }), 403, 'PAYMENT_REQUESTS_MUTED');
    // Muting one business leaves the others.
    const other = await t.createBusiness({ name: 'Autre boutique' });
    const theirs = await createIntent(t, other.keys.secretTest, { amount: 800 });
    await createRequest(t, other.keys.secretTest, theirs.referenceNumber, { phone });
    await setMuted(t.runtime.db, { phone, environment: 'test' }, business.id, false);
    await createRequest(t, sk, intent.referenceNumber, { phone });
  });

  test('at most 3 pending requests per business and phone: the 4th is 429 with Retry-After until the soonest expiry', async () => {
    const phone = await payer();
    const intents = await Promise.all([1, 2, 3, 4].map(() => createIntent(t, sk, { amount: 300 })));
    const expiries = [120, 600, 900];
    for (const [i, expiresIn] of expiries.entries()) {
      await createRequest(t, sk, intents[i]!.referenceNumber, { phone, expiresIn });
    }
    const refused = await askPayment(t, sk, intents[3]!.referenceNumber, { phone });
    expectError(refused, 429, 'TOO_MANY_PAYMENT_REQUESTS');
    const retryAfter = Number(refused.headers.get('retry-after'));
    assert.ok(retryAfter > 100 && retryAfter <= 120, `Retry-After ${retryAfter}`);
    // Another phone is not held up by this one's.
    await createRequest(t, sk, intents[3]!.referenceNumber, { phone: await payer() });
  });

  test('at most 10 requests an hour per business and phone: the 11th is 429 with Retry-After up to an hour', async () => {
    const phone = await payer();
    const intent = await createIntent(t, sk, { amount: 300 });
    for (let i = 0; i < 10; i++) {
      const created = await createRequest(t, sk, intent.referenceNumber, { phone });
      expectStatus(await cancelRequest(t, sk, created.id), 200);
    }
    const refused = await askPayment(t, sk, intent.referenceNumber, { phone });
    expectError(refused, 429, 'TOO_MANY_PAYMENT_REQUESTS');
    const retryAfter = Number(refused.headers.get('retry-after'));
    assert.ok(retryAfter > 3500 && retryAfter <= 3600, `Retry-After ${retryAfter}`);
  });

  test("list an intent's requests: newest first, paginated", async () => {
    const intent = await createIntent(t, sk, { amount: 400 });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const created = await createRequest(t, sk, intent.referenceNumber, { phone: await payer() });
      ids.push(created.id);
      expectStatus(await cancelRequest(t, sk, created.id), 200);
    }
    const path = `${INTENTS}/${intent.referenceNumber}/requests`;
    const all = await t.request('GET', path, { key: sk });
    expectStatus(all, 200);
    assert.deepEqual(
      all.body.data.items.map((item: { id: string }) => item.id),
      [...ids].reverse(),
    );
    assert.equal(all.body.data.total, 3);
    const page2 = await t.request('GET', `${path}?limit=2&page=2`, { key: sk });
    expectStatus(page2, 200);
    assert.deepEqual(
      page2.body.data.items.map((item: { id: string }) => item.id),
      [ids[0]],
    );
    assert.equal(page2.body.data.hasMore, false);
    const page1 = await t.request('GET', `${path}?limit=2`, { key: sk });
    assert.equal(page1.body.data.hasMore, true);
    const empty = await createIntent(t, sk, { amount: 400 });
    const none = await t.request('GET', `${INTENTS}/${empty.referenceNumber}/requests`, { key: sk });
    assert.deepEqual([none.body.data.items, none.body.data.total], [[], 0]);
    expectError(
      await t.request('GET', `${INTENTS}/PI-0000000000000000/requests`, { key: sk }),
      404,
      'INTENT_NOT_FOUND',
    );
  });

  test('cancel: CANCELLED with endedAt, its payment FAILED CANCELLED, one event; again 409 PAYMENT_REQUEST_NOT_PENDING', async () => {
    const intent = await createIntent(t, sk, { amount: 600 });
    const created = await createRequest(t, sk, intent.referenceNumber, { phone: await payer() });
    const cancelled = await cancelRequest(t, sk, created.id);
    expectStatus(cancelled, 200);
    assert.equal(cancelled.body.data.status, 'CANCELLED');
    assert.ok(cancelled.body.data.endedAt);
    assert.equal(cancelled.body.data.failureCode, null);
    expectError(await cancelRequest(t, sk, created.id), 409, 'PAYMENT_REQUEST_NOT_PENDING');
    assert.deepEqual(
      (await listEvents(t, sk, created.id)).map((event) => event.type),
      ['payment_request.created', 'payment_request.cancelled'],
    );
    const payments = await t.runtime.db
      .selectFrom('payments')
      .select(['method', 'status', 'failure_code'])
      .where(
        'id',
        '=',
        (
          await t.runtime.db
            .selectFrom('payment_requests')
            .select('payment_id')
            .where('id', '=', created.id)
            .executeTakeFirstOrThrow()
        ).payment_id,
      )
      .execute();
    assert.deepEqual(payments, [{ method: 'WALLET_REQUEST', status: 'FAILED', failure_code: 'CANCELLED' }]);
    const got = await t.request('GET', `${INTENTS}/${intent.referenceNumber}`, { key: sk });
    assert.equal(got.body.data.status, 'PENDING', 'the intent stays payable');
    // An expired request cannot be cancelled either.
    const again = await createRequest(t, sk, intent.referenceNumber, { phone: await payer(), expiresIn: 60 });
    assert.ok((await endDueIn(t, 61)) >= 1);
    assert.equal((await getRequest(t, sk, again.id)).status, 'EXPIRED');
    expectError(await cancelRequest(t, sk, again.id), 409, 'PAYMENT_REQUEST_NOT_PENDING');
  });

  test("an unknown request, or another business's, is 404 PAYMENT_REQUEST_NOT_FOUND", async () => {
    const intent = await createIntent(t, sk, { amount: 600 });
    const created = await createRequest(t, sk, intent.referenceNumber, { phone: await payer() });
    const other = await t.createBusiness();
    const theirs = other.keys.secretTest;
    expectError(
      await t.request('GET', `${PAYMENT_REQUESTS}/${created.id}`, { key: theirs }),
      404,
      'PAYMENT_REQUEST_NOT_FOUND',
    );
    expectError(await cancelRequest(t, theirs, created.id), 404, 'PAYMENT_REQUEST_NOT_FOUND');
    expectError(
      await t.request('GET', `${PAYMENT_REQUESTS}/PR-0000000000000000`, { key: sk }),
      404,
      'PAYMENT_REQUEST_NOT_FOUND',
    );
    expectError(await askPayment(t, theirs, intent.referenceNumber, { phone: await payer() }), 404, 'INTENT_NOT_FOUND');
    expectError(
      await t.request('GET', `${INTENTS}/${intent.referenceNumber}/requests`, { key: theirs }),
      404,
      'INTENT_NOT_FOUND',
    );
    assert.equal((await getRequest(t, sk, created.id)).status, 'PENDING');
  });

  test('keys: a secret key with the right scope; publishable keys and missing scopes are refused', async () => {
    const intent = await createIntent(t, sk, { amount: 600 });
    const phone = await payer();
    const pk = business.keys.publishableTest;
    const create = (key: string) => askPayment(t, key, intent.referenceNumber, { phone });
    expectError(await create(pk), 403, 'SECRET_KEY_REQUIRED');
    expectError(
      await t.request('POST', `${INTENTS}/${intent.referenceNumber}/requests`, { key: sk, body: { phone } }),
      400,
      'IDEMPOTENCY_KEY_REQUIRED',
    );
    const keyWith = async (scopes: string[]) =>
      (await t.admin('POST', '/keys', { businessId: business.id, kind: 'secret', environment: 'test', scopes })).body
        .data.key as string;
    const readOnly = await keyWith(['intents:read']);
    const writeOnly = await keyWith(['intents:write']);
    expectError(await create(readOnly), 403, 'SCOPE_REQUIRED');
    const created = await createRequest(t, writeOnly, intent.referenceNumber, { phone });
    expectError(await t.request('GET', `${PAYMENT_REQUESTS}/${created.id}`, { key: writeOnly }), 403, 'SCOPE_REQUIRED');
    expectError(
      await t.request('GET', `${INTENTS}/${intent.referenceNumber}/requests`, { key: writeOnly }),
      403,
      'SCOPE_REQUIRED',
    );
    expectError(await t.request('GET', `${PAYMENT_REQUESTS}/${created.id}`, { key: pk }), 403, 'SECRET_KEY_REQUIRED');
    expectError(await cancelRequest(t, readOnly, created.id), 403, 'SCOPE_REQUIRED');
    assert.equal((await getRequest(t, readOnly, created.id)).status, 'PENDING');
    expectStatus(await cancelRequest(t, writeOnly, created.id), 200);
  });

  test('bad input is a 400, never a 500: wrong types, unknown fields, an over-long id', async () => {
    const intent = await createIntent(t, sk, { amountType: 'OPEN' });
    const phone = await payer();
    for (const body of [
      { phone, amount: 1.5 },
      { phone, amount: '100' },
      { phone: 22220000021, amount: 100 },
      { phone, amount: 100, expiresIn: '300' },
      { phone, amount: 100, message: 7 },
      { phone, amount: 100, note: 'unknown field' },
    ]) {
      expectError(await askPayment(t, sk, intent.referenceNumber, body), 400, 'VALIDATION_ERROR');
    }
    expectError(await askPayment(t, sk, intent.referenceNumber, { phone, amount: -5 }), 400, 'AMOUNT_OUT_OF_RANGE');
    expectError(
      await t.request('GET', `${PAYMENT_REQUESTS}/PR-${'1'.repeat(70)}`, { key: sk }),
      400,
      'VALIDATION_ERROR',
    );
    expectError(
      await t.request('GET', `${PAYMENT_REQUESTS}/${encodeURIComponent("PR-1' OR '1'='1")}`, { key: sk }),
      404,
      'PAYMENT_REQUEST_NOT_FOUND',
    );
    expectError(
      await t.request('GET', `${INTENTS}/${intent.referenceNumber}/requests?limit=0`, { key: sk }),
      400,
      'VALIDATION_ERROR',
    );
  });

  test('a replayed create or cancel answers the first response and writes nothing more', async () => {
    const intent = await createIntent(t, sk, { amount: 900 });
    const phone = await payer();
    const path = `${INTENTS}/${intent.referenceNumber}/requests`;
    const first = await t.request('POST', path, { key: sk, body: { phone }, idempotencyKey: 'ask-once' });
    const second = await t.request('POST', path, { key: sk, body: { phone }, idempotencyKey: 'ask-once' });
    expectStatus(first, 201);
    expectStatus(second, 201);
    assert.equal(second.text, first.text);
    const id = first.body.data.id;
    const cancelPath = `${PAYMENT_REQUESTS}/${id}/cancel`;
    const cancelled = await t.request('POST', cancelPath, { key: sk, idempotencyKey: 'cancel-once' });
    const again = await t.request('POST', cancelPath, { key: sk, idempotencyKey: 'cancel-once' });
    expectStatus(again, 200);
    assert.equal(again.text, cancelled.text);
    const listed = await t.request('GET', path, { key: sk });
    assert.equal(listed.body.data.total, 1);
    assert.deepEqual(
      (await listEvents(t, sk, id)).map((event) => event.type),
      ['payment_request.created', 'payment_request.cancelled'],
    );
  });
});
