import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { sql } from 'kysely';
import { expectError, expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { multipartBody } from '../support/multipart.js';
import { eventsOf } from '../support/read-api.js';
import { createProduct, PRODUCTS } from './support.js';

const HEADER = 'externalId,name,price,description,quantity,status,categoryId,costBasis';

describe('CSV import and export (decisions "Products")', () => {
  let t: TestApp;
  let business: TestBusiness;
  let sk: string;
  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    business = await t.createBusiness();
    sk = business.keys.secretTest;
  });
  afterAll(() => t.close());

  const importCsv = (csv: string | Buffer, query = '', key = sk) =>
    t.request('POST', `${PRODUCTS}/import${query}`, {
      key,
      rawBody: csv,
      headers: { 'content-type': 'text/csv' },
      idempotencyKey: true,
    });
  const get = async (ref: string) => (await t.request('GET', `${PRODUCTS}/${ref}`, { key: sk })).body.data;

  test('creates and updates by externalId, reports bad rows and writes the good ones', async () => {
    await createProduct(t, sk, {
      name: 'Old name',
      price: 100,
      externalId: 'CSV-2',
      quantity: 10,
      variants: [{ type: 'SIZE', label: 'L' }],
    });
    const csv = [
      HEADER,
      'CSV-1,Couscous,1200,Semolina,30,ACTIVE,food,500',
      'CSV-2,New name,150,,4,,,',
      ',No id,100,,,,,',
      'CSV-4,Bad price,12.50,,,,,',
      'CSV-5,Bad status,100,,,SOLD,,',
      'CSV-6,,100,,,,,',
      'CSV-1,Duplicate,100,,,,,',
      'CSV-8,Negative stock,100,,-1,,,',
    ].join('\n');
    const response = await importCsv(csv);
    expectStatus(response, 200);
    const result = response.body.data;
    assert.deepEqual(
      {
        dryRun: result.dryRun,
        created: result.created,
        updated: result.updated,
        unchanged: result.unchanged,
        failed: result.failed,
      },
      { dryRun: false, created: 1, updated: 1, unchanged: 0, failed: 6 },
    );
    assert.deepEqual(
      result.errors.map((e: { row: number; code: string }) => [e.row, e.code]),
      [
        [4, 'VALIDATION_ERROR'],
        [5, 'VALIDATION_ERROR'],
        [6, 'VALIDATION_ERROR'],
        [7, 'VALIDATION_ERROR'],
        [8, 'VALIDATION_ERROR'],
        [9, 'VALIDATION_ERROR'],
      ],
    );
    for (const error of result.errors) assert.ok(error.message.length > 0);
    const created = await get('CSV-1');
    assert.deepEqual(
      [
        created.name,
        created.price,
        created.description,
        created.quantity,
        created.status,
        created.categoryId,
        created.costBasis,
      ],
      ['Couscous', 1200, 'Semolina', 30, 'ACTIVE', 'food', 500],
    );
    const updated = await get('CSV-2');
    assert.deepEqual([updated.name, updated.price, updated.quantity, updated.status], ['New name', 150, 4, 'DISABLED']);
    assert.equal(updated.variants.length, 1, 'columns not in the CSV are kept');
    assert.deepEqual(
      (await eventsOf(t, sk, updated.id)).map((e) => e.event),
      ['product.stock_low'],
      'a stock drop by import sends its event',
    );
    expectError(await t.request('GET', `${PRODUCTS}/CSV-4`, { key: sk }), 404, 'PRODUCT_NOT_FOUND');
  });

  test('dryRun validates and reports without writing', async () => {
    const response = await importCsv(`${HEADER}\nDRY-1,Dry,100,,,,,\nDRY-2,,100,,,,,`, '?dryRun=true');
    expectStatus(response, 200);
    assert.deepEqual([response.body.data.dryRun, response.body.data.created, response.body.data.failed], [true, 1, 1]);
    expectError(await t.request('GET', `${PRODUCTS}/DRY-1`, { key: sk }), 404, 'PRODUCT_NOT_FOUND');
    expectError(await importCsv(HEADER, '?dryRun=maybe'), 400, 'VALIDATION_ERROR');
  });

  test('quoted fields (commas, quotes, new lines), a UTF-8 BOM, CRLF, and a multipart upload', async () => {
    const csv = `\uFEFF${HEADER}\r\n"Q-1","Tea, mint and ""sugar""",300,"line one\nline two",,ACTIVE,,\r\n`;
    expectStatus(await importCsv(Buffer.from(csv, 'utf8')), 200);
    const product = await get('Q-1');
    assert.equal(product.name, 'Tea, mint and "sugar"');
    assert.equal(product.description, 'line one\nline two');
    const { body, contentType } = multipartBody([
      {
        field: 'file',
        filename: 'products.csv',
        contentType: 'text/csv',
        content: `${HEADER}\nMP-1,Multipart,100,,,,,\n`,
      },
    ]);
    const uploaded = await t.request('POST', `${PRODUCTS}/import`, {
      key: sk,
      rawBody: body,
      headers: { 'content-type': contentType },
      idempotencyKey: true,
    });
    expectStatus(uploaded, 200);
    assert.equal(uploaded.body.data.created, 1);
    assert.equal((await get('MP-1')).name, 'Multipart');
  });

  test('CSV_INVALID for a file that cannot be read; the header decides the columns', async () => {
    expectError(await importCsv('externalId,name,price\n"unterminated,x,1\n'), 400, 'CSV_INVALID');
    expectError(await importCsv('externalId,name,price\nA,B\n'), 400, 'CSV_INVALID');
    expectError(await importCsv('externalId,name,price,colour\nA,B,1,red\n'), 400, 'CSV_INVALID');
    expectError(await importCsv('externalId,name\nA,B\n'), 400, 'CSV_INVALID');
    expectError(await importCsv(''), 400, 'CSV_INVALID');
    const partial = await importCsv('externalId,name,price\nPART-1,Partial,700\n');
    expectStatus(partial, 200);
    assert.equal((await get('PART-1')).status, 'DISABLED');
    expectError(await t.request('POST', `${PRODUCTS}/import`, { key: sk, idempotencyKey: true }), 400, 'NO_FILE');
  });

  test('10,000 rows in one request; 10,001 is refused', async () => {
    const rows = Array.from(
      { length: 10_000 },
      (_, i) => `BULK-${i},Bulk product ${i},${100 + i},,${i % 50},ACTIVE,bulk,`,
    );
    const response = await importCsv([HEADER, ...rows].join('\n'));
    expectStatus(response, 200);
    assert.equal(response.body.data.created, 10_000);
    const list = await t.request('GET', `${PRODUCTS}?categoryId=bulk&limit=1`, { key: sk });
    assert.equal(list.body.data.total, 10_000);
    expectError(await importCsv([HEADER, ...rows, 'ONE-MORE,x,1,,,,,'].join('\n')), 400, 'CSV_INVALID');
    await t.runtime.db
      .updateTable('products')
      .set({ deleted_at: new Date() })
      .where('category_id', '=', 'bulk')
      .execute();
  });

  test('imports and bulk updates racing on the same products all apply: they queue, never deadlock', async () => {
    const made = [
      await createProduct(t, sk, { name: 'Race 1', price: 100, quantity: 500 }),
      await createProduct(t, sk, { name: 'Race 2', price: 100, quantity: 500 }),
    ];
    const compared = await sql<{ first: boolean }>`SELECT ${made[0]!.id}::text < ${made[1]!.id}::text AS first`.execute(
      t.runtime.db,
    );
    const [low, high] = compared.rows[0]!.first ? made : [made[1]!, made[0]!];
    // The import finds its products by externalId, in that order or in the table's: both are made
    // the opposite of id order (the low id renamed last), the bulk update's order.
    const rename = async (id: string, externalId: string) =>
      expectStatus(
        await t.request('PATCH', `${PRODUCTS}/${id}`, { key: sk, idempotencyKey: true, body: { externalId } }),
        200,
      );
    await rename(high!.id, 'RACE-A');
    await rename(low!.id, 'RACE-Z');
    const responses = await Promise.all(
      Array.from({ length: 16 }, (_, i) =>
        i % 2 === 0
          ? importCsv([HEADER, `RACE-A,Race,100,,${400 + i},,,`, `RACE-Z,Race,100,,${400 + i},,,`].join('\n'))
          : t.request('POST', '/api/v1/dev/store/inventory', {
              key: sk,
              idempotencyKey: true,
              body: { items: made.map((product) => ({ id: product.id, delta: -1 })) },
            }),
      ),
    );
    for (const response of responses) expectStatus(response, 200);
  });

  test('export, then import the same file: nothing changes', async () => {
    await createProduct(t, sk, {
      name: 'Quoted, "tricky"',
      price: 4200,
      externalId: 'RT-1',
      description: 'multi\nline, with comma',
      quantity: 0,
      status: 'ACTIVE',
      costBasis: 1000,
      categoryId: 'misc',
    });
    const exported = await t.request('GET', `${PRODUCTS}/export`, { key: sk });
    expectStatus(exported, 200);
    assert.match(exported.headers.get('content-type') ?? '', /^text\/csv/);
    assert.equal(exported.text.split(/\r?\n/)[0], `${HEADER},seller,id`);
    const before = await t.runtime.db
      .selectFrom('products')
      .select(['id', 'updated_at', 'name', 'price', 'description', 'quantity', 'status', 'category_id', 'cost_basis'])
      .where('deleted_at', 'is', null)
      .where('business_id', '=', business.id)
      .where('environment', '=', 'test')
      .orderBy('id')
      .execute();
    const reimport = await importCsv(exported.text);
    expectStatus(reimport, 200);
    assert.equal(reimport.body.data.created, 0);
    assert.equal(reimport.body.data.updated, 0);
    assert.equal(reimport.body.data.failed, 0);
    assert.equal(reimport.body.data.unchanged, before.length);
    const afterRows = await t.runtime.db
      .selectFrom('products')
      .select(['id', 'updated_at', 'name', 'price', 'description', 'quantity', 'status', 'category_id', 'cost_basis'])
      .where('deleted_at', 'is', null)
      .where('business_id', '=', business.id)
      .where('environment', '=', 'test')
      .orderBy('id')
      .execute();
    assert.deepEqual(afterRows, before);
    expectError(
      await t.request('GET', `${PRODUCTS}/export`, { key: business.keys.publishableTest }),
      403,
      'SECRET_KEY_REQUIRED',
    );
  });

  test("the export takes exactly the list's filters: search, status, categoryId (issue 47 item 13)", async () => {
    const shop = await t.createBusiness();
    const key = shop.keys.secretTest;
    const made = [
      { name: 'Thé vert', status: 'ACTIVE', categoryId: 'tea' },
      { name: 'Thé noir', status: 'DISABLED', categoryId: 'tea' },
      { name: 'Café', status: 'ACTIVE', categoryId: 'coffee' },
      { name: 'Sucre', status: 'DISABLED', categoryId: null },
    ];
    for (const [i, product] of made.entries()) await createProduct(t, key, { ...product, price: 100 + i });
    const listed = async (query: string) => {
      const response = await t.request('GET', `${PRODUCTS}?limit=100&sortBy=oldest&${query}`, { key });
      expectStatus(response, 200);
      return response.body.data.items.map((item: { id: string }) => item.id);
    };
    const exported = async (query: string) => {
      const response = await t.request('GET', `${PRODUCTS}/export?${query}`, { key });
      expectStatus(response, 200);
      return response.text
        .trim()
        .split('\n')
        .slice(1)
        .map((line) => line.split(',').at(-1));
    };
    for (const query of [
      '',
      'status=ALL',
      'status=ACTIVE',
      'status=DISABLED',
      'categoryId=tea',
      'search=the',
      'search=the&status=DISABLED',
    ]) {
      assert.deepEqual(await exported(query), await listed(query), query || 'no filter');
    }
    assert.equal((await exported('')).length, 4);
    assert.equal((await exported('search=the&status=DISABLED')).length, 1);
    for (const query of ['status=GONE', 'page=2', 'limit=5', 'categoryId=']) {
      expectError(await t.request('GET', `${PRODUCTS}/export?${query}`, { key }), 400, 'VALIDATION_ERROR');
    }
  });
});
