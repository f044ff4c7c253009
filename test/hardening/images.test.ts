import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { expectError, expectStatus, startTestApp, type TestApp } from '../support/harness.js';
import { multipartBody } from '../support/multipart.js';
import { createProduct, PRODUCTS } from '../products/support.js';

const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=',
  'base64',
);

describe('image files: written after validation, gone with their image (issue 15 item 4)', () => {
  let t: TestApp;
  let sk: string;
  let dataDir: string;
  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'devapi-media-'));
    t = await startTestApp({
      config: { DATA_DIR: dataDir, PUBLIC_URL: 'https://api.example.test', RATE_LIMIT_TEST_PER_MINUTE: '100000' },
    });
    sk = (await t.createBusiness()).keys.secretTest;
  });
  afterAll(async () => {
    await t.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** Files are deleted just after the commit that released them: poll for it. */
  const gone = async (key: string) => {
    for (let i = 0; i < 500 && files().includes(key); i++) await new Promise((resolve) => setTimeout(resolve, 10));
    return !files().includes(key);
  };
  const files = () => (existsSync(path.join(dataDir, 'media')) ? readdirSync(path.join(dataDir, 'media')) : []);
  const upload = (ref: string) => {
    const { body, contentType } = multipartBody([
      { field: 'file', filename: 'p.png', contentType: 'image/png', content: PNG },
    ]);
    return t.request('POST', `${PRODUCTS}/${ref}/images`, {
      key: sk,
      rawBody: body,
      headers: { 'content-type': contentType },
      idempotencyKey: true,
    });
  };
  const uploaded = async (ref: string) => {
    const response = await upload(ref);
    expectStatus(response, 201);
    const key = new URL(response.body.data.url).pathname.replace('/media/', '');
    return { imageId: response.body.data.imageId as string, key, path: `/media/${key}` };
  };

  test('a rejected upload leaves nothing on disk: past the 20-image limit, unknown product, wrong type', async () => {
    const full = await createProduct(t, sk, {
      name: 'Full',
      price: 100,
      images: Array.from({ length: 20 }, (_, i) => ({ url: `https://cdn.example/${i}.png` })),
    });
    const before = files().length;
    expectError(await upload(full.id), 400, 'VALIDATION_ERROR');
    expectError(await upload('prod_nope'), 404, 'PRODUCT_NOT_FOUND');
    assert.equal(files().length, before);
  });

  test('an image removed by PATCH or PUT is no longer served and its file is deleted; kept ones stay', async () => {
    const product = await createProduct(t, sk, { name: 'Photo', price: 100 });
    const first = await uploaded(product.id);
    const second = await uploaded(product.id);
    expectStatus(await t.request('GET', first.path), 200);
    assert.ok(files().includes(first.key) && files().includes(second.key));

    const current = (await t.request('GET', `${PRODUCTS}/${product.id}`, { key: sk })).body.data;
    const keep = current.images.filter((image: { id: string }) => image.id === second.imageId);
    expectStatus(
      await t.request('PATCH', `${PRODUCTS}/${product.id}`, { key: sk, idempotencyKey: true, body: { images: keep } }),
      200,
    );
    expectError(await t.request('GET', first.path), 404, 'NOT_FOUND');
    assert.ok(await gone(first.key), 'the removed file is deleted');
    expectStatus(await t.request('GET', second.path), 200);

    expectStatus(
      await t.request('PUT', `${PRODUCTS}/${product.id}`, {
        key: sk,
        idempotencyKey: true,
        body: { name: 'Photo', price: 100, images: [] },
      }),
      200,
    );
    expectError(await t.request('GET', second.path), 404, 'NOT_FOUND');
    assert.ok(await gone(second.key));
  });

  test("a deleted product's images are no longer served and their files are deleted", async () => {
    const product = await createProduct(t, sk, { name: 'Doomed', price: 100 });
    const image = await uploaded(product.id);
    expectStatus(await t.request('DELETE', `${PRODUCTS}/${product.id}`, { key: sk, idempotencyKey: true }), 200);
    expectError(await t.request('GET', image.path), 404, 'NOT_FOUND');
    assert.ok(await gone(image.key));
  });

  test('another product cannot claim an image id it does not own', async () => {
    const owner = await createProduct(t, sk, { name: 'Owner', price: 100 });
    const image = await uploaded(owner.id);
    const other = await createProduct(t, sk, { name: 'Other', price: 100 });
    expectError(
      await t.request('PATCH', `${PRODUCTS}/${other.id}`, {
        key: sk,
        idempotencyKey: true,
        body: { images: [{ id: image.imageId, url: 'https://cdn.example/x.png' }] },
      }),
      400,
      'VALIDATION_ERROR',
    );
    expectStatus(await t.request('GET', image.path), 200);
  });
});
