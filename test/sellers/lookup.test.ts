import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import {
  expectError,
  expectStatus,
  startTestApp,
  type TestApp,
  type TestBusiness,
  type TestResponse,
} from '../support/harness.js';
import { BALANCE, setPlan } from '../payments/support.js';
import { act, createIntent, INTENTS } from '../intents/support.js';
import { PRODUCTS } from '../products/support.js';
import { createPayout, PAYOUTS } from '../payouts/support.js';
import { createSeller, patchSeller, SELLERS } from './support.js';

/**
 * Decision 079 (amended 2026-12-07): one rule wherever a request names a seller. A malformed id
 * is the schema's 400 VALIDATION_ERROR; a well-formed one that is not the caller's, 404
 * SELLER_NOT_FOUND naming the field; the other environment's, 403 SANDBOX_MISMATCH; where a
 * DISABLED seller cannot take the act, 409 SELLER_DISABLED.
 */

const PAYER = '+22252000491';
const UNKNOWN = 'SL-0000000000000000';
const MALFORMED = ['nope', 'SL-123', 'sl-0000000000000000', 'SL-00000000000000001'];

/** A request that names the seller `id`, in one place of the API. */
interface Place {
  name: string;
  field: string;
  send: (id: string) => Promise<TestResponse>;
}

function expectNamed(response: TestResponse, status: number, code: string, field: string) {
  expectError(response, status, code);
  assert.ok(response.body.error.message.includes(field), `${code} names ${field}: ${response.body.error.message}`);
}

describe('one seller lookup, one rule (decision 079)', () => {
  let t: TestApp;
  let shop: TestBusiness;
  let key: string;
  let ours: string;
  let disabled: string;
  let theirs: string;
  let live: string;
  let places: Place[];
  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '1000000' } });
    shop = await t.createBusiness({ name: 'Lookup market', approveLive: true });
    key = shop.keys.secretTest;
    await setPlan(t, shop.id, { providerBps: 100, payerFee: 0, tofBps: 0, tteBps: 0 });
    expectStatus(
      await t.admin('POST', '/wallets', { phone: PAYER, pin: '1234', balance: 100_000_000, environment: 'test' }),
      201,
    );
    ours = (await createSeller(t, key, { name: 'Ours', phone: '+22236000491' })).id;
    disabled = (await createSeller(t, key, { name: 'Off', phone: '+22236000492' })).id;
    // Paid a share before it is disabled: it can still be paid out.
    const intent = await createIntent(t, key, { amount: 10_000, splits: [{ seller: disabled, amount: 5_000 }] });
    expectStatus(await act(t, key, intent.referenceNumber, 'simulate', { payerPhone: PAYER }), 200);
    expectStatus(await patchSeller(t, key, disabled, { status: 'DISABLED' }), 200);
    const other = await t.createBusiness({ name: 'Other market' });
    theirs = (await createSeller(t, other.keys.secretTest)).id;
    live = (await createSeller(t, shop.keys.secretLive)).id;
    const get = (path: string) => () => t.request('GET', path, { key });
    places = [
      { name: 'GET /sellers/{id}', field: 'params.id', send: (id) => get(`${SELLERS}/${id}`)() },
      { name: 'PATCH /sellers/{id}', field: 'params.id', send: (id) => patchSeller(t, key, id, { name: 'Renamed' }) },
      { name: 'GET /sellers/{id}/balance', field: 'params.id', send: (id) => get(`${SELLERS}/${id}/balance`)() },
      {
        name: 'POST /intents splits',
        field: 'body.splits[1].seller',
        send: (id) =>
          t.request('POST', INTENTS, {
            key,
            idempotencyKey: true,
            body: {
              amount: 10_000,
              splits: [
                { seller: ours, amount: 100 },
                { seller: id, amount: 100 },
              ],
            },
          }),
      },
      {
        name: 'POST /store/products',
        field: 'body.seller',
        send: (id) =>
          t.request('POST', PRODUCTS, { key, idempotencyKey: true, body: { name: 'X', price: 100, seller: id } }),
      },
      {
        name: 'POST /payouts',
        field: 'body.seller',
        send: (id) => createPayout(t, key, { amount: 100, seller: id }),
      },
      { name: 'GET /payouts?seller=', field: 'query.seller', send: (id) => get(`${PAYOUTS}?seller=${id}`)() },
      { name: 'GET /intents?seller=', field: 'query.seller', send: (id) => get(`${INTENTS}?seller=${id}`)() },
      {
        name: 'GET /balance/transactions?seller=',
        field: 'query.seller',
        send: (id) => get(`${BALANCE}/transactions?seller=${id}`)(),
      },
      {
        name: 'GET /balance/transactions/export?seller=',
        field: 'query.seller',
        send: (id) => get(`${BALANCE}/transactions/export?seller=${id}`)(),
      },
      {
        name: 'GET /balance/statements/{month}?seller=',
        field: 'query.seller',
        send: (id) => get(`${BALANCE}/statements/2026-12?seller=${id}`)(),
      },
      {
        name: 'GET /balance/statements?from&to&seller=',
        field: 'query.seller',
        send: (id) => get(`${BALANCE}/statements?from=2026-12-01&to=2026-12-07&seller=${id}`)(),
      },
    ];
  });
  afterAll(() => t.close());

  test('a malformed id is 400 VALIDATION_ERROR everywhere, from the schema', async () => {
    for (const place of places) {
      for (const id of MALFORMED) {
        const response = await place.send(id);
        assert.equal(response.status, 400, `${place.name} with ${id}: ${response.status} ${response.text}`);
        assert.equal(response.body.error.code, 'VALIDATION_ERROR', place.name);
      }
    }
  });

  test("unknown or another business's: 404 SELLER_NOT_FOUND naming the field; the other environment's: 403", async () => {
    for (const place of places) {
      expectNamed(await place.send(UNKNOWN), 404, 'SELLER_NOT_FOUND', place.field);
      expectNamed(await place.send(theirs), 404, 'SELLER_NOT_FOUND', place.field);
      const mismatch = await place.send(live);
      assert.equal(mismatch.status, 403, `${place.name}: ${mismatch.text}`);
      assert.equal(mismatch.body.error.code, 'SANDBOX_MISMATCH', place.name);
    }
  });

  test('a DISABLED seller: 409 where it cannot take the act, read and paid out elsewhere', async () => {
    const refusing = new Set(['POST /intents splits', 'POST /store/products']);
    for (const place of places) {
      const response = await place.send(disabled);
      if (refusing.has(place.name)) {
        expectNamed(response, 409, 'SELLER_DISABLED', place.field);
      } else {
        assert.ok(response.status < 300, `${place.name} takes a DISABLED seller: ${response.status} ${response.text}`);
      }
    }
  });
});

describe('the seller filters of the intent and payout lists', () => {
  let t: TestApp;
  let shop: TestBusiness;
  let key: string;
  let a: string;
  let b: string;
  const references: Record<string, string[]> = {};
  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '1000000' } });
    shop = await t.createBusiness({ name: 'Filter market', approveLive: true });
    key = shop.keys.secretTest;
    await setPlan(t, shop.id, { providerBps: 100, payerFee: 0, tofBps: 0, tteBps: 0 });
    expectStatus(
      await t.admin('POST', '/wallets', { phone: PAYER, pin: '1234', balance: 100_000_000, environment: 'test' }),
      201,
    );
    a = (await createSeller(t, key, { name: 'A', phone: '+22236000493' })).id;
    b = (await createSeller(t, key, { name: 'B', phone: '+22236000494' })).id;
    const made = async (splits?: unknown[]) =>
      (await createIntent(t, key, { amount: 10_000, ...(splits ? { splits } : {}) })).referenceNumber as string;
    references.a = [await made([{ seller: a, amount: 3_000 }])];
    references.both = [
      await made([
        { seller: b, bps: 2_000 },
        { seller: a, bps: 1_000 },
      ]),
    ];
    references.b = [await made([{ seller: b, amount: 1_000 }])];
    await made();
    for (const reference of [...references.a!, ...references.both!]) {
      expectStatus(await act(t, key, reference, 'simulate', { payerPhone: PAYER }), 200);
    }
  });
  afterAll(() => t.close());

  test("GET /intents?seller= lists the intents whose split names the seller, newest first, with the list's filters", async () => {
    const list = async (query: string) => {
      const response = await t.request('GET', `${INTENTS}?${query}`, { key });
      expectStatus(response, 200);
      return response.body.data;
    };
    const ofA = await list(`seller=${a}`);
    assert.deepEqual(
      ofA.items.map((intent: { referenceNumber: string }) => intent.referenceNumber),
      [references.both![0], references.a![0]],
    );
    assert.equal(ofA.total, 2);
    assert.equal(ofA.hasMore, false);
    const firstOfB = await list(`seller=${b}&limit=1`);
    assert.equal(firstOfB.items[0].referenceNumber, references.b![0]);
    assert.equal(firstOfB.total, 2);
    assert.equal(firstOfB.hasMore, true);
    const paidOfB = await list(`seller=${b}&status=PAID`);
    assert.deepEqual(
      paidOfB.items.map((intent: { referenceNumber: string }) => intent.referenceNumber),
      references.both,
    );
    assert.equal((await list(`seller=${b}&from=2000-01-01&to=2000-01-02`)).total, 0);
    // A publishable key lists intents but cannot name a seller: seller lookups need a secret key (decision 079).
    expectError(
      await t.request('GET', `${INTENTS}?seller=${a}`, { key: shop.keys.publishableTest }),
      403,
      'SECRET_KEY_REQUIRED',
    );
    expectStatus(await t.request('GET', INTENTS, { key: shop.keys.publishableTest }), 200);
  });

  test("GET /payouts?seller= lists the seller's payouts only", async () => {
    const fromA = await createPayout(t, key, { amount: 500, seller: a });
    expectStatus(fromA, 201);
    const fromB = await createPayout(t, key, { amount: 400, seller: b });
    expectStatus(fromB, 201);
    const ofA = await t.request('GET', `${PAYOUTS}?seller=${a}`, { key });
    expectStatus(ofA, 200);
    assert.deepEqual(
      ofA.body.data.items.map((payout: { referenceNumber: string; seller: string }) => [
        payout.referenceNumber,
        payout.seller,
      ]),
      [[fromA.body.data.referenceNumber, a]],
    );
    assert.equal(ofA.body.data.total, 1);
    const all = await t.request('GET', PAYOUTS, { key });
    assert.equal(all.body.data.total, 2);
  });

  test("a seller's balance transactions are paged with an exact total and hasMore", async () => {
    const page = async (n: number) => {
      const response = await t.request('GET', `${BALANCE}/transactions?seller=${a}&limit=2&page=${n}`, { key });
      expectStatus(response, 200);
      return response.body.data;
    };
    const rows = await t.runtime.db
      .selectFrom('balance_transactions')
      .select('id')
      .where('seller_id', '=', a)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .execute();
    // Two shares and a payout (and its fee, if the plan takes one).
    assert.ok(rows.length === 3 || rows.length === 4, `A has ${rows.length} rows`);
    const first = await page(1);
    assert.equal(first.items.length, 2);
    assert.equal(first.hasMore, true);
    assert.equal(first.total, rows.length, 'exact on every page');
    const second = await page(2);
    assert.equal(second.items.length, rows.length - 2);
    assert.equal(second.hasMore, false);
    assert.equal(second.total, rows.length, 'exact on the last page');
    assert.deepEqual(
      [...first.items, ...second.items].map((item: { id: string }) => item.id),
      rows.map((row) => row.id),
    );
    const beyond = await page(3);
    assert.deepEqual([beyond.items.length, beyond.hasMore], [0, false]);
  });
});
