import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { sql } from 'kysely';
import { expectError, expectStatus, startTestApp, type TestApp } from '../support/harness.js';
import { createProduct, PRODUCTS, write } from '../products/support.js';

/** Issue 36, item 6: what the contract promised and the API did not do. */
describe('contract gaps (issue 36, item 6)', () => {
  let t: TestApp;
  let sk: string;
  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    sk = (await t.createBusiness()).keys.secretTest;
  });
  afterAll(() => t.close());

  test('an externalId of 256 characters resolves in paths; 257 is refused with 400', async () => {
    // Percent-encoded, the path segment is far longer than 256: the limit counts it decoded.
    const externalId = `É/${'x'.repeat(250)}é ?%`;
    assert.equal(externalId.length, 256);
    const created = await createProduct(t, sk, { name: 'Long id', price: 100, externalId });
    const path = `/${encodeURIComponent(externalId)}`;

    const got = await t.request('GET', `${PRODUCTS}${path}`, { key: sk });
    expectStatus(got, 200);
    assert.equal(got.body.data.id, created.id);

    const patched = await write(t, sk, 'PATCH', path, { price: 150 });
    expectStatus(patched, 200);
    assert.equal(patched.body.data.price, 150);

    const replaced = await write(t, sk, 'PUT', path, { name: 'Long id 2', price: 200, externalId });
    expectStatus(replaced, 200);
    assert.equal(replaced.body.data.name, 'Long id 2');

    const stocked = await write(t, sk, 'PATCH', `${path}/inventory`, { quantity: 5 });
    expectStatus(stocked, 200);

    // Outside the BMP a character is two UTF-16 units; 256 of them are still 256 characters.
    const astral = '😀'.repeat(256);
    const astralProduct = await createProduct(t, sk, { name: 'Emoji id', price: 100, externalId: astral });
    const astralGot = await t.request('GET', `${PRODUCTS}/${encodeURIComponent(astral)}`, { key: sk });
    expectStatus(astralGot, 200);
    assert.equal(astralGot.body.data.id, astralProduct.id);

    const tooLong = `${externalId}y`;
    expectError(
      await t.request('GET', `${PRODUCTS}/${encodeURIComponent(tooLong)}`, { key: sk }),
      400,
      'VALIDATION_ERROR',
    );
    expectError(await write(t, sk, 'PATCH', `/${encodeURIComponent(tooLong)}`, { price: 1 }), 400, 'VALIDATION_ERROR');
    expectError(await write(t, sk, 'DELETE', `/${encodeURIComponent('z'.repeat(600))}`), 400, 'VALIDATION_ERROR');

    const deleted = await write(t, sk, 'DELETE', path);
    expectStatus(deleted, 200);
    expectError(await t.request('GET', `${PRODUCTS}${path}`, { key: sk }), 404, 'PRODUCT_NOT_FOUND');
  });

  test('every Developer API route refuses an unknown query parameter, not only the lists', async () => {
    const product = await createProduct(t, sk, { name: 'Query probe', price: 100, externalId: 'QUERY-1' });
    const reads = [
      `${PRODUCTS}/${product.id}`,
      `${PRODUCTS}/QUERY-1`,
      `${PRODUCTS}/export`,
      '/api/v1/dev/balance',
      '/api/v1/dev/balance/transactions/export',
      '/api/v1/dev/intents/PI-NOPE',
      '/api/v1/dev/store/orders/ORD-NOPE',
      '/api/v1/dev/events/evt_nope',
      '/api/v1/dev/webhooks/endpoints/we_nope',
      '/api/v1/dev/payouts/PO-0000000000000000',
      `${PRODUCTS}`,
    ];
    for (const path of reads) {
      const response = await t.request('GET', `${path}?colour=blue`, { key: sk });
      expectError(response, 400, 'VALIDATION_ERROR');
      assert.match(JSON.stringify(response.body.error), /querystring|colour/, path);
    }
    // A write too: the parameter is refused before anything is written.
    expectError(await write(t, sk, 'PATCH', `/${product.id}?colour=blue`, { price: 1 }), 400, 'VALIDATION_ERROR');
    const unchanged = await t.request('GET', `${PRODUCTS}/${product.id}`, { key: sk });
    expectStatus(unchanged, 200);
    assert.equal(unchanged.body.data.price, 100);
    // Without it, and with the parameters a route names, they answer as before.
    expectStatus(await t.request('GET', `${PRODUCTS}/${product.id}`, { key: sk }), 200);
    expectStatus(await t.request('GET', '/api/v1/dev/balance', { key: sk }), 200);
    expectStatus(await t.request('GET', `${PRODUCTS}?limit=5`, { key: sk }), 200);
    // Outside the Developer API (pages a browser opens) other query strings still pass.
    expectStatus(await t.request('GET', '/health?colour=blue'), 200);
  });

  test('an exported CSV imports again without failures: products without externalId match by id', async () => {
    const business = await t.createBusiness();
    const key = business.keys.secretTest;
    const importCsv = (csv: string) =>
      t.request('POST', `${PRODUCTS}/import`, {
        key,
        idempotencyKey: true,
        rawBody: csv,
        headers: { 'content-type': 'text/csv' },
      });
    await createProduct(t, key, { name: 'With id', price: 100, externalId: 'CSV-1' });
    const bare = await createProduct(t, key, { name: 'No externalId', price: 200, quantity: 3 });
    await createProduct(t, key, { name: 'No externalId either', price: 300 });

    const exported = await t.request('GET', `${PRODUCTS}/export`, { key });
    expectStatus(exported, 200);
    const lines = exported.text.trim().split(/\r?\n/);
    assert.equal(lines[0], 'externalId,name,price,description,quantity,status,categoryId,costBasis,seller,id');
    assert.equal(lines.length, 4);

    const again = await importCsv(exported.text);
    expectStatus(again, 200);
    assert.deepEqual(
      { ...again.body.data, errors: again.body.data.errors.length },
      { dryRun: false, created: 0, updated: 0, unchanged: 3, failed: 0, errors: 0 },
    );

    // Edited, the rows without externalId update their product, by id, and create nothing.
    const edited = exported.text.replace('No externalId,200', 'No externalId (edited),250');
    const changed = await importCsv(edited);
    expectStatus(changed, 200);
    assert.deepEqual(
      { ...changed.body.data, errors: changed.body.data.errors.length },
      { dryRun: false, created: 0, updated: 1, unchanged: 2, failed: 0, errors: 0 },
    );
    const after = await t.request('GET', `${PRODUCTS}/${bare.id}`, { key });
    assert.equal(after.body.data.name, 'No externalId (edited)');
    assert.equal(after.body.data.price, 250);
    assert.equal(after.body.data.externalId, null);
    const listed = await t.request('GET', `${PRODUCTS}?status=ALL`, { key });
    assert.equal(listed.body.data.total, 3);

    // An id naming no product of the shop fails its row; a row needs an id or an externalId.
    const unknown = await importCsv('id,name,price\nprod_nope,Ghost,100\n,Nobody,100\n');
    expectStatus(unknown, 200);
    assert.equal(unknown.body.data.failed, 2);
    assert.equal(unknown.body.data.created, 0);
    assert.deepEqual(
      unknown.body.data.errors.map((error: { row: number; code: string }) => [error.row, error.code]).sort(),
      [
        [2, 'PRODUCT_NOT_FOUND'],
        [3, 'VALIDATION_ERROR'],
      ],
    );
    // Another shop's product id is not found either.
    const other = await importCsv(`id,name,price\n${bare.id},Stolen,1\n`);
    expectStatus(other, 200);
    assert.equal(other.body.data.failed, 0);
    const stranger = await t.createBusiness();
    const foreign = await t.request('POST', `${PRODUCTS}/import`, {
      key: stranger.keys.secretTest,
      idempotencyKey: true,
      rawBody: `id,name,price\n${bare.id},Stolen,1\n`,
      headers: { 'content-type': 'text/csv' },
    });
    expectStatus(foreign, 200);
    assert.equal(foreign.body.data.failed, 1);
    assert.equal(foreign.body.data.errors[0].code, 'PRODUCT_NOT_FOUND');
  });

  test('externalIds are NFC: both spellings of "THÉ-1" are one product, a second is a duplicate', async () => {
    const business = await t.createBusiness();
    const key = business.keys.secretTest;
    const composed = 'TH\u00C9-1';
    const decomposed = 'THE\u0301-1';
    assert.notEqual(composed, decomposed);
    const tea = await createProduct(t, key, { name: 'Thé', price: 100, externalId: composed });

    const got = await t.request('GET', `${PRODUCTS}/${encodeURIComponent(decomposed)}`, { key });
    expectStatus(got, 200);
    assert.equal(got.body.data.id, tea.id);
    const duplicate = await t.request('POST', PRODUCTS, {
      key,
      idempotencyKey: true,
      body: { name: 'Thé bis', price: 100, externalId: decomposed },
    });
    expectError(duplicate, 409, 'EXTERNAL_ID_TAKEN');

    // Written in NFD, stored and answered in NFC; found by either.
    const coffee = await createProduct(t, key, { name: 'Café', price: 100, externalId: 'CAFE\u0301-2' });
    assert.equal(coffee.externalId, 'CAF\u00C9-2');
    const patched = await t.request('PATCH', `${PRODUCTS}/${encodeURIComponent('CAF\u00C9-2')}`, {
      key,
      idempotencyKey: true,
      body: { externalId: 'CAFE\u0301-3' },
    });
    expectStatus(patched, 200);
    assert.equal(patched.body.data.externalId, 'CAF\u00C9-3');

    // Bulk inventory and order-less lookups by externalId, and the CSV import, normalise too.
    const bulk = await t.request('POST', '/api/v1/dev/store/inventory', {
      key,
      idempotencyKey: true,
      body: { items: [{ externalId: decomposed, quantity: 7 }] },
    });
    expectStatus(bulk, 200);
    const imported = await t.request('POST', `${PRODUCTS}/import`, {
      key,
      idempotencyKey: true,
      rawBody: `externalId,name,price\n${decomposed},Thé renamed,100\n`,
      headers: { 'content-type': 'text/csv' },
    });
    expectStatus(imported, 200);
    assert.equal(imported.body.data.created, 0);
    assert.equal(imported.body.data.updated, 1);
    const renamed = await t.request('GET', `${PRODUCTS}/${tea.id}`, { key });
    assert.equal(renamed.body.data.name, 'Thé renamed');
    assert.equal(renamed.body.data.quantity, 7);
  });

  test('migration 030 normalises stored externalIds unless that would make a duplicate', async () => {
    const business = await t.createBusiness();
    const key = business.keys.secretTest;
    const alone = await createProduct(t, key, { name: 'Alone', price: 100, externalId: 'MIG-ALONE' });
    const kept = await createProduct(t, key, { name: 'NFC twin', price: 100, externalId: 'MIG-\u00C9' });
    const twin = await createProduct(t, key, { name: 'NFD twin', price: 100, externalId: 'MIG-TWIN' });
    const gone = await createProduct(t, key, { name: 'Deleted', price: 100, externalId: 'MIG-GONE' });
    // Stored as they were before the rule, by writing the columns directly.
    const store = (id: string, externalId: string) =>
      t.runtime.db.updateTable('products').set({ external_id: externalId }).where('id', '=', id).execute();
    await store(alone.id, 'MIG-E\u0301-ALONE');
    await store(twin.id, 'MIG-E\u0301');
    await t.runtime.db.updateTable('products').set({ deleted_at: new Date() }).where('id', '=', gone.id).execute();
    await store(gone.id, 'MIG-E\u0301');

    const migration = readFileSync(new URL('../../src/db/migrations/029_external_id_nfc.sql', import.meta.url), 'utf8');
    await sql.raw(migration).execute(t.runtime.db);
    const stored = async (id: string) =>
      (await t.runtime.db.selectFrom('products').select('external_id').where('id', '=', id).executeTakeFirstOrThrow())
        .external_id;
    assert.equal(await stored(alone.id), 'MIG-\u00C9-ALONE');
    assert.equal(await stored(kept.id), 'MIG-\u00C9');
    assert.equal(await stored(twin.id), 'MIG-E\u0301', 'left as it was: normalised, it would be its twin');
    assert.equal(await stored(gone.id), 'MIG-\u00C9');

    // The one left over is still found by its own spelling; the NFC spelling finds its twin.
    const byNfd = await t.request('GET', `${PRODUCTS}/${encodeURIComponent('MIG-E\u0301')}`, { key });
    assert.equal(byNfd.body.data.id, twin.id);
    const byNfc = await t.request('GET', `${PRODUCTS}/${encodeURIComponent('MIG-\u00C9')}`, { key });
    assert.equal(byNfc.body.data.id, kept.id);
    const normalised = await t.request('GET', `${PRODUCTS}/${encodeURIComponent('MIG-E\u0301-ALONE')}`, { key });
    assert.equal(normalised.body.data.id, alone.id);
  });
});
