import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { expectError, expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { multipartBody } from '../support/multipart.js';
import { createProduct, PRODUCTS } from './support.js';

const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=',
  'base64',
);
const JPEG = Buffer.concat([
  Buffer.from([
    0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00,
    0x00,
  ]),
  Buffer.alloc(64),
  Buffer.from([0xff, 0xd9]),
]);
const WEBP = Buffer.concat([
  Buffer.from('RIFF'),
  Buffer.from([0x24, 0, 0, 0]),
  Buffer.from('WEBPVP8 '),
  Buffer.alloc(32),
]);
const GIF = Buffer.concat([Buffer.from('GIF89a'), Buffer.alloc(32)]);

describe('product images (api.md 4.2 rule 4)', () => {
  let t: TestApp;
  let business: TestBusiness;
  let sk: string;
  let dataDir: string;
  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'devapi-media-'));
    t = await startTestApp({
      config: { DATA_DIR: dataDir, PUBLIC_URL: 'https://api.example.test', RATE_LIMIT_TEST_PER_MINUTE: '100000' },
    });
    business = await t.createBusiness();
    sk = business.keys.secretTest;
  });
  afterAll(async () => {
    await t.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const upload = (
    ref: string,
    content: Buffer,
    options: { field?: string; filename?: string; contentType?: string; idempotencyKey?: string } = {},
  ) => {
    const { body, contentType } = multipartBody([
      {
        field: options.field ?? 'file',
        filename: options.filename ?? 'photo.bin',
        contentType: options.contentType ?? 'application/octet-stream',
        content,
      },
    ]);
    return t.request('POST', `${PRODUCTS}/${ref}/images`, {
      key: sk,
      rawBody: body,
      headers: { 'content-type': contentType },
      idempotencyKey: options.idempotencyKey ?? true,
    });
  };
  const mediaPath = (url: string) => new URL(url).pathname;

  test('PNG, JPEG and WebP are stored, served with their type and appended to the product', async () => {
    const product = await createProduct(t, sk, {
      name: 'Photo',
      price: 100,
      externalId: 'PHOTO',
      images: [{ url: 'https://cdn.example/a.png' }],
    });
    const uploaded = [];
    for (const [bytes, type] of [
      [PNG, 'image/png'],
      [JPEG, 'image/jpeg'],
      [WEBP, 'image/webp'],
    ] as const) {
      // The declared name and type are ignored: the bytes decide.
      const response = await upload('PHOTO', bytes, { filename: 'whatever.txt', contentType: 'text/plain' });
      expectStatus(response, 201);
      assert.deepEqual(Object.keys(response.body.data).sort(), ['imageId', 'url']);
      assert.match(response.body.data.imageId, /^img_/);
      assert.match(response.body.data.url, /^https:\/\/api\.example\.test\/media\/img_[A-Za-z0-9]+\.(png|jpg|webp)$/);
      const served = await fetch(`${t.baseUrl}${mediaPath(response.body.data.url)}`);
      assert.equal(served.status, 200);
      assert.equal(served.headers.get('content-type'), type);
      assert.deepEqual(Buffer.from(await served.arrayBuffer()), bytes);
      uploaded.push(response.body.data);
    }
    const after = await t.request('GET', `${PRODUCTS}/${product.id}`, { key: sk });
    assert.deepEqual(
      after.body.data.images.map((i: { id: string; url: string; sortOrder: number }) => [i.url, i.sortOrder]),
      [['https://cdn.example/a.png', 0], ...uploaded.map((u, index) => [u.url, index + 1])],
    );
    assert.deepEqual(
      after.body.data.images.slice(1).map((i: { id: string }) => i.id),
      uploaded.map((u) => u.imageId),
    );
    assert.equal(readdirSync(path.join(dataDir, 'media')).length, 3, 'the files are under the data directory');
  });

  test('INVALID_FILE_TYPE for anything else, whatever its name says', async () => {
    const product = await createProduct(t, sk, { name: 'Typed', price: 100 });
    for (const [bytes, filename] of [
      [GIF, 'anim.gif'],
      [Buffer.from('just text, not an image'), 'photo.png'],
      [Buffer.from('%PDF-1.7\n%...'), 'doc.jpg'],
    ] as const) {
      expectError(await upload(product.id, bytes, { filename, contentType: 'image/png' }), 400, 'INVALID_FILE_TYPE');
    }
    const after = await t.request('GET', `${PRODUCTS}/${product.id}`, { key: sk });
    assert.deepEqual(after.body.data.images, []);
  });

  test('NO_FILE: no part, another field name, an empty multipart or no body; a JSON body is 415', async () => {
    const product = await createProduct(t, sk, { name: 'Empty', price: 100 });
    expectError(await upload(product.id, PNG, { field: 'image' }), 400, 'NO_FILE');
    const noParts = multipartBody([]);
    expectError(
      await t.request('POST', `${PRODUCTS}/${product.id}/images`, {
        key: sk,
        rawBody: noParts.body,
        headers: { 'content-type': noParts.contentType },
        idempotencyKey: true,
      }),
      400,
      'NO_FILE',
    );
    expectError(
      await t.request('POST', `${PRODUCTS}/${product.id}/images`, {
        key: sk,
        body: { url: 'x' },
        idempotencyKey: true,
      }),
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    );
    expectError(
      await t.request('POST', `${PRODUCTS}/${product.id}/images`, { key: sk, idempotencyKey: true }),
      400,
      'NO_FILE',
    );
  });

  test('FILE_TOO_LARGE above 5 MB, enforced while reading; exactly 5 MB is accepted', async () => {
    const product = await createProduct(t, sk, { name: 'Big', price: 100 });
    const limit = 5 * 1024 * 1024;
    const tooBig = Buffer.concat([PNG, Buffer.alloc(limit - PNG.length + 1)]);
    expectError(await upload(product.id, tooBig), 400, 'FILE_TOO_LARGE');
    const justRight = Buffer.concat([PNG, Buffer.alloc(limit - PNG.length)]);
    expectStatus(await upload(product.id, justRight), 201);
  });

  test('PRODUCT_NOT_FOUND, the 20-image limit, and idempotent replays of the same file', async () => {
    expectError(await upload('prod_nope', PNG), 404, 'PRODUCT_NOT_FOUND');
    const product = await createProduct(t, sk, {
      name: 'Full',
      price: 100,
      images: Array.from({ length: 19 }, (_, i) => ({ url: `https://cdn.example/${i}.png` })),
    });
    const first = await upload(product.id, PNG, { idempotencyKey: 'image-once' });
    expectStatus(first, 201);
    const replay = await upload(product.id, PNG, { idempotencyKey: 'image-once' });
    assert.equal(replay.text, first.text);
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    expectError(await upload(product.id, JPEG, { idempotencyKey: 'image-once' }), 422, 'IDEMPOTENCY_KEY_REUSED');
    expectError(await upload(product.id, JPEG), 400, 'VALIDATION_ERROR');
    const after = await t.request('GET', `${PRODUCTS}/${product.id}`, { key: sk });
    assert.equal(after.body.data.images.length, 20);
  });

  test('uploads need a secret key and an idempotency key; unknown media answer 404', async () => {
    const product = await createProduct(t, sk, { name: 'Guarded', price: 100 });
    const { body, contentType } = multipartBody([{ field: 'file', filename: 'a.png', content: PNG }]);
    const publishable = await t.request('POST', `${PRODUCTS}/${product.id}/images`, {
      key: business.keys.publishableTest,
      rawBody: body,
      headers: { 'content-type': contentType },
      idempotencyKey: true,
    });
    expectError(publishable, 403, 'SECRET_KEY_REQUIRED');
    const noKey = await t.request('POST', `${PRODUCTS}/${product.id}/images`, {
      key: sk,
      rawBody: body,
      headers: { 'content-type': contentType },
    });
    expectError(noKey, 400, 'IDEMPOTENCY_KEY_REQUIRED');
    const missing = await fetch(`${t.baseUrl}/media/img_missing.png`);
    assert.equal(missing.status, 404);
    const traversal = await fetch(`${t.baseUrl}/media/..%2F..%2Fetc%2Fpasswd`);
    assert.equal(traversal.status, 404);
  });
});
