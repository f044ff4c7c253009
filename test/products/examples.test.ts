/**
 * The README's catalog examples send examples/products.csv and examples/photo.jpg: this keeps both
 * files acceptable to the API they are examples for.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { expectStatus, startTestApp, type TestApp } from '../support/harness.js';
import { multipartBody } from '../support/multipart.js';
import { PRODUCTS } from './support.js';

const examples = path.join(process.cwd(), 'examples');

describe('the example files of the README (examples/)', () => {
  let t: TestApp;
  let sk: string;
  let dataDir: string;
  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'devapi-examples-'));
    t = await startTestApp({ config: { DATA_DIR: dataDir } });
    sk = (await t.createBusiness()).keys.secretTest;
  });
  afterAll(async () => {
    await t.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const importCsv = (query: string) =>
    t.request('POST', `${PRODUCTS}/import${query}`, {
      key: sk,
      rawBody: readFileSync(path.join(examples, 'products.csv')),
      headers: { 'content-type': 'text/csv' },
      idempotencyKey: true,
    });

  test('products.csv imports without an error, dry run first, and again changes nothing', async () => {
    const dryRun = await importCsv('?dryRun=true');
    expectStatus(dryRun, 200);
    assert.deepEqual(dryRun.body.data, { dryRun: true, created: 4, updated: 0, unchanged: 0, failed: 0, errors: [] });
    const written = await importCsv('');
    expectStatus(written, 200);
    assert.deepEqual(written.body.data, { dryRun: false, created: 4, updated: 0, unchanged: 0, failed: 0, errors: [] });
    const again = await importCsv('');
    assert.deepEqual(again.body.data, { dryRun: false, created: 0, updated: 0, unchanged: 4, failed: 0, errors: [] });
    const dates = await t.request('GET', `${PRODUCTS}/DATE-001`, { key: sk });
    expectStatus(dates, 200);
    assert.equal(dates.body.data.description, 'Soft dates, pitted');
    assert.equal(dates.body.data.status, 'ACTIVE');
  });

  test('photo.jpg is a small JPEG the image upload takes and serves back as it is', async () => {
    const photo = readFileSync(path.join(examples, 'photo.jpg'));
    assert.ok(photo.length > 1000 && photo.length < 20_000, `a few KB, not ${photo.length} bytes`);
    assert.deepEqual([...photo.subarray(0, 3)], [0xff, 0xd8, 0xff], 'starts as a JPEG');
    assert.deepEqual([...photo.subarray(-2)], [0xff, 0xd9], 'ends as a JPEG');

    const { body, contentType } = multipartBody([
      { field: 'file', filename: 'photo.jpg', contentType: 'image/jpeg', content: photo },
    ]);
    // COUS-001: a product of the imported example file (the test above).
    const uploaded = await t.request('POST', `${PRODUCTS}/COUS-001/images`, {
      key: sk,
      rawBody: body,
      headers: { 'content-type': contentType },
      idempotencyKey: true,
    });
    expectStatus(uploaded, 201);
    assert.match(uploaded.body.data.url, /\/media\/img_[A-Za-z0-9]+\.jpg$/);
    const served = await fetch(`${t.baseUrl}${new URL(uploaded.body.data.url).pathname}`);
    assert.equal(served.status, 200);
    assert.equal(served.headers.get('content-type'), 'image/jpeg');
    assert.deepEqual(Buffer.from(await served.arrayBuffer()), photo);
  });
});
