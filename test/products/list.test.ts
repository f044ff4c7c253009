import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { sql } from 'kysely';
import { expectError, expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { createProduct, PRODUCTS } from './support.js';

describe('GET /dev/store/products: search, filters, sorting, pagination', () => {
  let t: TestApp;
  let business: TestBusiness;
  let sk: string;
  const ids: Record<string, string> = {};
  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    business = await t.createBusiness();
    sk = business.keys.secretTest;
    const catalog = [
      ['creme', 'Crème Brûlée', 900, 'ACTIVE', 'desserts'],
      ['cake', 'Chocolate cake', 1500, 'ACTIVE', 'desserts'],
      ['cream', 'Ice cream', 900, 'DISABLED', 'desserts'],
      ['tea', 'THÉ À LA MENTHE', 300, 'ACTIVE', 'drinks'],
      ['coffee', 'Café noir', 300, 'DISABLED', 'drinks'],
    ] as const;
    for (const [key, name, price, status, categoryId] of catalog) {
      ids[key] = (await createProduct(t, sk, { name, price, status, categoryId })).id;
    }
    // Known creation times: creme is the oldest, coffee the newest; cream and creme tie on price.
    for (const [index, [key]] of catalog.entries()) {
      await t.runtime.db
        .updateTable('products')
        .set({ created_at: new Date(Date.UTC(2026, 0, 1, 0, index)) })
        .where('id', '=', ids[key]!)
        .execute();
    }
  });
  afterAll(() => t.close());

  const names = async (query: string) => {
    const response = await t.request('GET', `${PRODUCTS}${query}`, { key: sk });
    expectStatus(response, 200);
    return response.body.data.items.map((p: { name: string }) => p.name);
  };

  test('search matches words of the name, case- and accent-insensitive', async () => {
    assert.deepEqual(await names('?search=creme'), ['Crème Brûlée']);
    assert.deepEqual(await names('?search=CRÈME'), ['Crème Brûlée']);
    assert.deepEqual(await names('?search=brulee'), ['Crème Brûlée']);
    assert.deepEqual(await names('?search=the%20menthe'), ['THÉ À LA MENTHE']);
    assert.deepEqual(await names('?search=cafe'), ['Café noir']);
    assert.deepEqual(await names('?search=cream'), ['Ice cream'], 'whole words: cream is not in crème');
    assert.deepEqual(await names('?search=choc'), ['Chocolate cake'], 'a word may be given by its start');
    assert.deepEqual(await names('?search=ate'), [], 'but not by its middle');
    assert.deepEqual(await names('?search=chocolate%20tea'), [], 'every word must match');
    assert.deepEqual(await names('?search=%27%3B%20drop%20table%20products%3B'), []);
    assert.equal((await names('?search=%20%21%21')).length, 5, 'no words: no filter');
  });

  test('search is backed by a word index', async () => {
    const indexes = await sql<{ indexdef: string }>`
      SELECT indexdef FROM pg_indexes WHERE tablename = 'products' AND indexname = 'products_search_idx'`.execute(
      t.runtime.db,
    );
    assert.match(indexes.rows[0]?.indexdef ?? '', /USING gin \(search_vector\)/);
  });

  test('status: ACTIVE, DISABLED, ALL (the default)', async () => {
    assert.equal((await names('')).length, 5);
    assert.equal((await names('?status=ALL')).length, 5);
    assert.deepEqual(await names('?status=ACTIVE&sortBy=oldest'), [
      'Crème Brûlée',
      'Chocolate cake',
      'THÉ À LA MENTHE',
    ]);
    assert.deepEqual(await names('?status=DISABLED&sortBy=oldest'), ['Ice cream', 'Café noir']);
    expectError(await t.request('GET', `${PRODUCTS}?status=ARCHIVED`, { key: sk }), 400, 'VALIDATION_ERROR');
  });

  test('sortBy newest (default), oldest, price_asc, price_desc, ties broken by id', async () => {
    const byId = (a: string, b: string) => (ids[a]! < ids[b]! ? -1 : 1);
    const nameOf: Record<string, string> = {
      creme: 'Crème Brûlée',
      cake: 'Chocolate cake',
      cream: 'Ice cream',
      tea: 'THÉ À LA MENTHE',
      coffee: 'Café noir',
    };
    assert.deepEqual(await names(''), ['Café noir', 'THÉ À LA MENTHE', 'Ice cream', 'Chocolate cake', 'Crème Brûlée']);
    assert.deepEqual(await names('?sortBy=newest'), await names(''));
    assert.deepEqual(await names('?sortBy=oldest'), [
      'Crème Brûlée',
      'Chocolate cake',
      'Ice cream',
      'THÉ À LA MENTHE',
      'Café noir',
    ]);
    const cheap = ['tea', 'coffee'].sort(byId);
    const mid = ['creme', 'cream'].sort(byId);
    assert.deepEqual(
      await names('?sortBy=price_asc'),
      [...cheap, ...mid, 'cake'].map((k) => nameOf[k]),
    );
    assert.deepEqual(
      await names('?sortBy=price_desc'),
      ['cake', ...mid.reverse(), ...cheap.reverse()].map((k) => nameOf[k]),
    );
    expectError(await t.request('GET', `${PRODUCTS}?sortBy=name`, { key: sk }), 400, 'VALIDATION_ERROR');
  });

  test('categoryId filter, combined with search and status', async () => {
    assert.deepEqual(await names('?categoryId=drinks&sortBy=oldest'), ['THÉ À LA MENTHE', 'Café noir']);
    assert.deepEqual(await names('?categoryId=desserts&status=ACTIVE&search=cake'), ['Chocolate cake']);
    assert.deepEqual(await names('?categoryId=none'), []);
  });

  test('pagination: limit default 20, capped at 100, exact total and hasMore', async () => {
    const page = await t.request('GET', `${PRODUCTS}?limit=2&page=2&sortBy=oldest`, { key: sk });
    assert.deepEqual(
      page.body.data.items.map((p: { name: string }) => p.name),
      ['Ice cream', 'THÉ À LA MENTHE'],
    );
    assert.equal(page.body.data.total, 5);
    assert.equal(page.body.data.hasMore, true);
    const last = await t.request('GET', `${PRODUCTS}?limit=2&page=3`, { key: sk });
    assert.equal(last.body.data.hasMore, false);
    const capped = await t.request('GET', `${PRODUCTS}?limit=500`, { key: sk });
    assert.equal(capped.body.data.limit, 100);
    const defaults = await t.request('GET', PRODUCTS, { key: sk });
    assert.equal(defaults.body.data.limit, 20);
    assert.equal(defaults.body.data.page, 1);
    expectError(await t.request('GET', `${PRODUCTS}?limit=0`, { key: sk }), 400, 'VALIDATION_ERROR');
    const beyond = await t.request('GET', `${PRODUCTS}?page=9`, { key: sk });
    assert.deepEqual(beyond.body.data.items, []);
  });

  test("lists show the key's own environment only", async () => {
    await createProduct(t, business.keys.secretLive, { name: 'Live only', price: 1 });
    assert.ok(!(await names('?limit=100')).includes('Live only'));
    const live = await t.request('GET', PRODUCTS, { key: business.keys.secretLive });
    assert.deepEqual(
      live.body.data.items.map((p: { name: string }) => p.name),
      ['Live only'],
    );
  });
});
