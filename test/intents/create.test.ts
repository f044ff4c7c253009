import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import pg from 'pg';
import { testDatabaseKind } from '../support/database.js';
import {
  expectError,
  expectStatus,
  sharedDatabase,
  startTestApp,
  type TestApp,
  type TestBusiness,
} from '../support/harness.js';
import { eventsOf } from '../support/read-api.js';
import { createIntent, INTENTS } from './support.js';

const CREATE_FIELDS = [
  'amount',
  'amountType',
  'code',
  'codeExpiresAt',
  'createdAt',
  'currency',
  'expiresAt',
  'label',
  'metadata',
  'payUrl',
  'referenceNumber',
  'sandbox',
  'shortCode',
  'status',
];
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('POST /dev/intents', () => {
  let t: TestApp;
  let business: TestBusiness;
  beforeAll(async () => {
    t = await startTestApp({ config: { PUBLIC_URL: 'https://api.example.test/' } });
    business = await t.createBusiness();
  });
  afterAll(() => t.close());

  const post = (body: unknown, key = business.keys.secretTest) =>
    t.request('POST', INTENTS, { key, body, idempotencyKey: true });

  test('answers 201 with exactly the create fields of decisions.md', async () => {
    const response = await post({
      amount: 12_500,
      label: 'Order 42',
      metadata: { orderId: '42' },
      success_url: 'https://shop.example/ok',
      cancel_url: 'http://shop.example/cancel',
    });
    expectStatus(response, 201);
    assert.equal(response.body.success, true);
    const intent = response.body.data;
    assert.deepEqual(Object.keys(intent).sort(), CREATE_FIELDS);
    assert.match(intent.referenceNumber, /^PI-\d{12,}$/);
    assert.match(intent.shortCode, /^[A-Za-z0-9]{6}$/);
    assert.match(intent.code, /^\d{6}$/);
    assert.equal(intent.payUrl, `https://api.example.test/p/${intent.shortCode}`);
    assert.equal(intent.amount, 12_500);
    assert.equal(intent.amountType, 'FIXED');
    assert.equal(intent.currency, 'MRU');
    assert.equal(intent.label, 'Order 42');
    assert.equal(intent.status, 'PENDING');
    assert.equal(intent.sandbox, true);
    assert.deepEqual(intent.metadata, { orderId: '42' });
    for (const field of ['createdAt', 'expiresAt', 'codeExpiresAt']) assert.match(intent[field], ISO);
    assert.equal(Date.parse(intent.expiresAt) - Date.parse(intent.createdAt), 24 * 3600 * 1000);
    assert.equal(intent.codeExpiresAt, intent.expiresAt);

    const fetched = await t.request('GET', `${INTENTS}/${intent.referenceNumber}`, { key: business.keys.secretTest });
    expectStatus(fetched, 200);
    assert.equal(fetched.body.data.code, intent.code);
    assert.equal(fetched.body.data.successUrl, 'https://shop.example/ok');
    assert.equal(fetched.body.data.cancelUrl, 'http://shop.example/cancel');
  });

  test('PAY_URL wins over PUBLIC_URL, and the request origin is the fallback', async () => {
    // Config variants on this file's database, each with its own business.
    const payUrlApp = await startTestApp({
      config: { PUBLIC_URL: 'https://api.example.test', PAY_URL: 'https://pay.example.test' },
      testDatabase: sharedDatabase(t.testDatabase),
    });
    const originApp = await startTestApp({ testDatabase: sharedDatabase(t.testDatabase) });
    try {
      const first = await payUrlApp.createBusiness();
      const withPayUrl = await createIntent(payUrlApp, first.keys.secretTest);
      assert.equal(withPayUrl.payUrl, `https://pay.example.test/p/${withPayUrl.shortCode}`);
      const second = await originApp.createBusiness();
      const withOrigin = await createIntent(originApp, second.keys.secretTest);
      assert.equal(withOrigin.payUrl, `${originApp.baseUrl}/p/${withOrigin.shortCode}`);
    } finally {
      await payUrlApp.close();
      await originApp.close();
    }
  });

  test('label defaults to "" and metadata to {}', async () => {
    const intent = await createIntent(t, business.keys.secretTest, { amount: 100 });
    assert.equal(intent.label, '');
    assert.deepEqual(intent.metadata, {});
  });

  test('writes payment.created in the same transaction, with the exact envelope and data', async () => {
    const intent = await createIntent(t, business.keys.secretTest, { amount: 777, metadata: { a: 'b' } });
    const events = await eventsOf(t, business.keys.secretTest, intent.referenceNumber);
    assert.equal(events.length, 1);
    const [event] = events;
    assert.deepEqual(Object.keys(event!), ['id', 'event', 'created_at', 'sandbox', 'data', 'sequence']);
    assert.match(event!.id, /^evt_[A-Za-z0-9]{24,}$/);
    assert.equal(event!.event, 'payment.created');
    assert.equal(event!.created_at, intent.createdAt);
    assert.equal(event!.sandbox, true);
    assert.deepEqual(event!.data, {
      reference_number: intent.referenceNumber,
      short_code: intent.shortCode,
      amount: 777,
      currency: 'MRU',
      status: 'PENDING',
      paid_at: null,
      payer_phone: null,
      metadata: { a: 'b' },
      commission: { provider_ttc: 0, payer_ttc: 0, tof: 0, tte: 0, total_revenue: 0 },
    });
  });

  test('live keys create live intents (sandbox false)', async () => {
    const intent = await createIntent(t, business.keys.secretLive, { amount: 100 });
    assert.equal(intent.sandbox, false);
    const [event] = await eventsOf(t, business.keys.secretLive, intent.referenceNumber);
    assert.equal(event!.sandbox, false);
  });

  test('OPEN intents: amount is null, a sent amount is kept as suggestedAmount', async () => {
    const open = await createIntent(t, business.keys.secretTest, { amountType: 'OPEN' });
    assert.equal(open.amount, null);
    assert.equal(open.amountType, 'OPEN');
    const suggested = await createIntent(t, business.keys.secretTest, { amountType: 'OPEN', amount: 2500 });
    assert.equal(suggested.amount, null);
    const fetched = await t.request('GET', `${INTENTS}/${suggested.referenceNumber}`, {
      key: business.keys.secretTest,
    });
    assert.equal(fetched.body.data.suggestedAmount, 2500);
    assert.equal(fetched.body.data.amount, null);
    const [event] = await eventsOf(t, business.keys.secretTest, open.referenceNumber);
    assert.equal(event!.data.amount, null);
  });

  test('AMOUNT_OUT_OF_RANGE below 1 and above the maximum; the bounds themselves are accepted', async () => {
    for (const amount of [0, -1, 100_000_001, 1e20]) {
      expectError(await post({ amount }), 400, 'AMOUNT_OUT_OF_RANGE');
    }
    expectStatus(await post({ amount: 1 }), 201);
    expectStatus(await post({ amount: 100_000_000 }), 201);
    expectError(await post({ amountType: 'OPEN', amount: 0 }), 400, 'AMOUNT_OUT_OF_RANGE');
  });

  test('the maximum amount is configurable', async () => {
    const small = await startTestApp({
      config: { INTENT_MAX_AMOUNT: '1000' },
      testDatabase: sharedDatabase(t.testDatabase),
    });
    try {
      const owner = await small.createBusiness();
      const over = await small.request('POST', INTENTS, {
        key: owner.keys.secretTest,
        body: { amount: 1001 },
        idempotencyKey: true,
      });
      expectError(over, 400, 'AMOUNT_OUT_OF_RANGE');
    } finally {
      await small.close();
    }
  });

  test('non-integer, missing or non-numeric amounts are VALIDATION_ERROR', async () => {
    for (const body of [{ amount: 12.5 }, { amount: '100' }, { amount: null }, {}, { amountType: 'FIXED' }]) {
      const response = await post(body);
      expectError(response, 400, 'VALIDATION_ERROR');
      assert.ok(
        response.body.error.details.some((d: { field: string }) => d.field === 'body.amount'),
        response.text,
      );
    }
    expectError(await post({ amount: 100, amountType: 'CUSTOM' }), 400, 'VALIDATION_ERROR');
  });

  test('metadata: 50 keys pass, 51 give METADATA_TOO_MANY_KEYS', async () => {
    const keys = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, 'v']));
    expectStatus(await post({ amount: 100, metadata: keys(50) }), 201);
    expectError(await post({ amount: 100, metadata: keys(51) }), 400, 'METADATA_TOO_MANY_KEYS');
  });

  test('metadata: a value of 500 characters passes, 501 gives METADATA_VALUE_TOO_LONG', async () => {
    expectStatus(await post({ amount: 100, metadata: { note: 'é'.repeat(500) } }), 201);
    expectError(await post({ amount: 100, metadata: { note: 'x'.repeat(501) } }), 400, 'METADATA_VALUE_TOO_LONG');
  });

  test('metadata: non-string values, nested objects and over-long keys are VALIDATION_ERROR', async () => {
    for (const metadata of [
      { n: 1 },
      { b: true },
      { o: { x: 'y' } },
      { a: null },
      ['x'],
      'text',
      { ['k'.repeat(41)]: 'v' },
    ]) {
      const response = await post({ amount: 100, metadata });
      expectError(response, 400, 'VALIDATION_ERROR');
      assert.match(response.body.error.details[0].field, /^body\.metadata/, response.text);
    }
  });

  test('label: 200 characters pass, 201 is a VALIDATION_ERROR', async () => {
    expectStatus(await post({ amount: 100, label: 'l'.repeat(200) }), 201);
    const response = await post({ amount: 100, label: 'l'.repeat(201) });
    expectError(response, 400, 'VALIDATION_ERROR');
    assert.equal(response.body.error.details[0].field, 'body.label');
  });

  test('success_url and cancel_url must be absolute http(s) URLs', async () => {
    for (const [field, value] of [
      ['success_url', 'not a url'],
      ['success_url', 'ftp://example.com/file'],
      ['cancel_url', 'javascript:alert(1)'],
      ['cancel_url', '/relative/path'],
      ['success_url', 42],
    ] as const) {
      const response = await post({ amount: 100, [field]: value });
      expectError(response, 400, 'VALIDATION_ERROR');
      assert.equal(response.body.error.details[0].field, `body.${field}`, response.text);
    }
  });

  test('unknown fields are rejected, and nothing is written for any refused body', async () => {
    const before = await t.runtime.db
      .selectFrom('payment_intents')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirst();
    expectError(await post({ amount: 100, currency: 'EUR' }), 400, 'VALIDATION_ERROR');
    expectError(await post({ amount: 0 }), 400, 'AMOUNT_OUT_OF_RANGE');
    const response = await t.request('POST', INTENTS, {
      key: business.keys.secretTest,
      rawBody: '{"amount": 100',
      headers: { 'content-type': 'application/json' },
      idempotencyKey: true,
    });
    expectError(response, 400, 'INVALID_JSON');
    const afterCount = await t.runtime.db
      .selectFrom('payment_intents')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirst();
    assert.equal(Number(afterCount?.n), Number(before?.n));
  });

  test('auth: publishable key, missing idempotency key, missing scope', async () => {
    expectError(await post({ amount: 100 }, business.keys.publishableTest), 403, 'SECRET_KEY_REQUIRED');
    expectError(
      await t.request('POST', INTENTS, { key: business.keys.secretTest, body: { amount: 100 } }),
      400,
      'IDEMPOTENCY_KEY_REQUIRED',
    );
    const readOnly = await t.admin('POST', '/keys', {
      businessId: business.id,
      kind: 'secret',
      environment: 'test',
      scopes: ['intents:read'],
    });
    expectStatus(readOnly, 201);
    expectError(await post({ amount: 100 }, readOnly.body.data.key), 403, 'SCOPE_REQUIRED');
    expectError(
      await t.request('POST', INTENTS, { body: { amount: 100 }, idempotencyKey: true }),
      401,
      'MISSING_CREDENTIALS',
    );
  });

  test('the same idempotency key replays the same intent, code included, and creates one intent', async () => {
    const idempotencyKey = `create-${Date.now()}`;
    const first = await t.request('POST', INTENTS, {
      key: business.keys.secretTest,
      body: { amount: 4242 },
      idempotencyKey,
    });
    const second = await t.request('POST', INTENTS, {
      key: business.keys.secretTest,
      body: { amount: 4242 },
      idempotencyKey,
    });
    expectStatus(first, 201);
    expectStatus(second, 201);
    assert.equal(second.headers.get('idempotent-replayed'), 'true');
    assert.equal(second.text, first.text);
    const rows = await t.runtime.db
      .selectFrom('payment_intents')
      .select('reference_number')
      .where('business_id', '=', business.id)
      .where('amount', '=', 4242)
      .execute();
    assert.equal(rows.length, 1);
    const other = await t.request('POST', INTENTS, {
      key: business.keys.secretTest,
      body: { amount: 4243 },
      idempotencyKey,
    });
    expectError(other, 422, 'IDEMPOTENCY_KEY_REUSED');
  });

  test('a refused create is stored under its key: same body replays the 400, another body gets 422', async () => {
    const idempotencyKey = `bad-create-${Date.now()}`;
    const first = await t.request('POST', INTENTS, {
      key: business.keys.secretTest,
      body: { amount: 0 },
      idempotencyKey,
    });
    expectError(first, 400, 'AMOUNT_OUT_OF_RANGE');
    const again = await t.request('POST', INTENTS, {
      key: business.keys.secretTest,
      body: { amount: 0 },
      idempotencyKey,
    });
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.equal(again.text, first.text);
    const fixed = await t.request('POST', INTENTS, {
      key: business.keys.secretTest,
      body: { amount: 10 },
      idempotencyKey,
    });
    expectError(fixed, 422, 'IDEMPOTENCY_KEY_REUSED');

    const schemaKey = `schema-create-${Date.now()}`;
    const invalid = await t.request('POST', INTENTS, {
      key: business.keys.secretTest,
      body: { amount: 'ten' },
      idempotencyKey: schemaKey,
    });
    expectError(invalid, 400, 'VALIDATION_ERROR');
    const replay = await t.request('POST', INTENTS, {
      key: business.keys.secretTest,
      body: { amount: 'ten' },
      idempotencyKey: schemaKey,
    });
    assert.equal(replay.text, invalid.text);
  });

  test.skipIf(
    testDatabaseKind === 'pglite'
      ? 'PGlite runs one transaction at a time: a second request waits instead of overlapping'
      : false,
  )('a key held by a running request answers 409; once that request is gone the key executes once', async () => {
    // A request in flight holds its key's transaction-scoped lock (the claim commits with its
    // effect); another connection holding that lock stands for it, then dies (rolls back).
    const client = new pg.Client({ connectionString: t.testDatabase.url });
    await client.connect();
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`${business.id}:test:live-create`]);
      const busy = await t.request('POST', INTENTS, {
        key: business.keys.secretTest,
        body: { amount: 4711 },
        idempotencyKey: 'live-create',
      });
      expectError(busy, 409, 'IDEMPOTENCY_KEY_IN_PROGRESS');
      await client.query('ROLLBACK');
    } finally {
      await client.end();
    }
    const response = await t.request('POST', INTENTS, {
      key: business.keys.secretTest,
      body: { amount: 4711 },
      idempotencyKey: 'live-create',
    });
    expectStatus(response, 201);
    const replay = await t.request('POST', INTENTS, {
      key: business.keys.secretTest,
      body: { amount: 4711 },
      idempotencyKey: 'live-create',
    });
    assert.equal(replay.text, response.text);
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    const rows = await t.runtime.db
      .selectFrom('payment_intents')
      .select('id')
      .where('business_id', '=', business.id)
      .where('amount', '=', 4711)
      .execute();
    assert.equal(rows.length, 1);
  });
});
