import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { expectError, expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { act, createIntent, INTENTS } from './support.js';

describe('GET /dev/intents (api.md 4.1 and 8)', () => {
  let t: TestApp;
  let business: TestBusiness;
  let refs: string[] = [];
  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    business = await t.createBusiness();
    for (let i = 0; i < 105; i++) {
      refs.push((await createIntent(t, business.keys.secretTest, { amount: 100 + i })).referenceNumber);
    }
    // Spread creation times one minute apart so the order is known: refs[104] is the newest.
    const base = Date.parse('2026-03-01T00:00:00.000Z');
    for (const [i, ref] of refs.entries()) {
      await t.runtime.db
        .updateTable('payment_intents')
        .set({ created_at: new Date(base + i * 60_000) })
        .where('reference_number', '=', ref)
        .execute();
    }
    refs = refs.reverse();
  });
  afterAll(() => t.close());

  const list = (query: string, key = business.keys.publishableTest) => t.request('GET', `${INTENTS}${query}`, { key });

  test('defaults: page 1, limit 20, newest first, exact total and hasMore', async () => {
    const response = await list('');
    expectStatus(response, 200);
    const data = response.body.data;
    assert.deepEqual(Object.keys(data).sort(), ['hasMore', 'items', 'limit', 'page', 'total']);
    assert.equal(data.page, 1);
    assert.equal(data.limit, 20);
    assert.equal(data.total, 105);
    assert.equal(data.hasMore, true);
    assert.deepEqual(
      data.items.map((i: { referenceNumber: string }) => i.referenceNumber),
      refs.slice(0, 20),
    );
    assert.equal(data.items[0].type, 'API', 'items are full intents');
  });

  test('limit above 100 is capped silently and the response says 100', async () => {
    const response = await list('?limit=101');
    expectStatus(response, 200);
    assert.equal(response.body.data.limit, 100);
    assert.equal(response.body.data.items.length, 100);
    assert.equal(response.body.data.hasMore, true);
    const last = await list('?limit=1000&page=2');
    assert.equal(last.body.data.items.length, 5);
    assert.equal(last.body.data.hasMore, false);
    assert.deepEqual(
      last.body.data.items.map((i: { referenceNumber: string }) => i.referenceNumber),
      refs.slice(100),
    );
  });

  test('the last full page has hasMore false; a page past the end is empty', async () => {
    const exact = await list('?limit=35&page=3');
    assert.equal(exact.body.data.items.length, 35);
    assert.equal(exact.body.data.hasMore, false);
    const past = await list('?page=99');
    expectStatus(past, 200);
    assert.deepEqual(past.body.data.items, []);
    assert.equal(past.body.data.total, 105);
    assert.equal(past.body.data.hasMore, false);
    assert.equal(past.body.data.page, 99);
  });

  test('limit 0, page 0, negative or non-numeric values are VALIDATION_ERROR', async () => {
    for (const query of ['?limit=0', '?page=0', '?limit=-1', '?page=abc', '?limit=1.5', '?status=DONE', '?sort=asc']) {
      expectError(await list(query), 400, 'VALIDATION_ERROR');
    }
  });

  test('status filter', async () => {
    await act(t, business.keys.secretTest, refs[0]!, 'cancel');
    await act(t, business.keys.secretTest, refs[1]!, 'simulate');
    const cancelled = await list('?status=CANCELLED');
    assert.deepEqual(
      cancelled.body.data.items.map((i: { referenceNumber: string }) => i.referenceNumber),
      [refs[0]],
    );
    assert.equal(cancelled.body.data.total, 1);
    const pending = await list('?status=PENDING&limit=1');
    assert.equal(pending.body.data.total, 103);
    assert.equal(pending.body.data.items[0].referenceNumber, refs[2]);
    const refunded = await list('?status=REFUNDED');
    assert.equal(refunded.body.data.total, 0);
    assert.equal(refunded.body.data.hasMore, false);
  });

  test('from and to are inclusive, in full timestamps or plain dates', async () => {
    // refs[104] was created at 00:00, refs[103] at 00:01, ... refs[0] at 01:44 on 2026-03-01.
    const window = await list('?from=2026-03-01T00:01:00.000Z&to=2026-03-01T00:03:00.000Z');
    assert.deepEqual(
      window.body.data.items.map((i: { referenceNumber: string }) => i.referenceNumber),
      [refs[101], refs[102], refs[103]],
    );
    const day = await list('?from=2026-03-01&to=2026-03-01&limit=1');
    assert.equal(day.body.data.total, 105);
    const before = await list('?to=2026-02-28');
    assert.equal(before.body.data.total, 0);
    const after = await list('?from=2026-03-02');
    assert.equal(after.body.data.total, 0);
  });

  test('bad dates are VALIDATION_ERROR naming the parameter', async () => {
    for (const [query, field] of [
      ['?from=yesterday', 'query.from'],
      ['?from=2026-02-30', 'query.from'],
      ['?to=2026-03-01T25:00:00.000Z', 'query.to'],
      ['?to=2026-03-01T10:00:00+02:00', 'query.to'],
    ] as const) {
      const response = await list(query);
      expectError(response, 400, 'VALIDATION_ERROR');
      assert.equal(response.body.error.details[0].field, field, response.text);
    }
  });

  test('ties on createdAt are broken by reference, descending', async () => {
    const tied = refs.slice(50, 53);
    const at = new Date('2025-01-01T00:00:00.000Z');
    await t.runtime.db
      .updateTable('payment_intents')
      .set({ created_at: at })
      .where('reference_number', 'in', tied)
      .execute();
    const response = await list('?to=2025-01-01');
    assert.deepEqual(
      response.body.data.items.map((i: { referenceNumber: string }) => i.referenceNumber),
      [...tied].sort().reverse(),
    );
  });

  test('lists never show the other environment or another business', async () => {
    const live = await createIntent(t, business.keys.secretLive, { amount: 100 });
    const liveList = await list('', business.keys.publishableLive);
    assert.deepEqual(
      liveList.body.data.items.map((i: { referenceNumber: string }) => i.referenceNumber),
      [live.referenceNumber],
    );
    assert.equal(liveList.body.data.items[0].sandbox, false);
    const testList = await list('?limit=100&page=1');
    assert.ok(
      !testList.body.data.items.some((i: { referenceNumber: string }) => i.referenceNumber === live.referenceNumber),
    );
    const other = await t.createBusiness({ name: 'Other' });
    const empty = await list('', other.keys.secretTest);
    assert.equal(empty.body.data.total, 0);
    assert.deepEqual(empty.body.data.items, []);
  });

  test('publishable keys may list and read, with CORS headers', async () => {
    const response = await t.request('GET', INTENTS, {
      key: business.keys.publishableTest,
      headers: { origin: 'https://shop.example' },
    });
    expectStatus(response, 200);
    assert.equal(response.headers.get('access-control-allow-origin'), '*');
  });
});
