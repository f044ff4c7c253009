import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { createIntent, INTENTS } from '../intents/support.js';
import { expectError, expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { multipartBody } from '../support/multipart.js';

/**
 * decisions.md: a body whose Content-Type the route does not take answers 415
 * UNSUPPORTED_MEDIA_TYPE; JSON routes take only application/json. The products import takes CSV
 * and multipart, the dashboard's forms take urlencoded forms, and a bodiless action needs neither
 * body nor Content-Type.
 */
describe('request media types', () => {
  let t: TestApp;
  let business: TestBusiness;
  beforeAll(async () => {
    t = await startTestApp();
    business = await t.createBusiness();
  });
  afterAll(() => t.close());

  const send = (
    method: string,
    path: string,
    contentType: string | undefined,
    rawBody?: string | Buffer,
    key?: string,
  ) =>
    t.request(method, path, {
      key: key ?? business.keys.secretTest,
      idempotencyKey: true,
      ...(rawBody !== undefined ? { rawBody } : {}),
      ...(contentType !== undefined ? { headers: { 'content-type': contentType } } : {}),
    });

  test('a text/plain body on JSON routes of every API is 415, whatever it holds', async () => {
    const intent = await createIntent(t, business.keys.secretTest);
    const json = '{"amount":5000}';
    for (const [method, path] of [
      ['POST', INTENTS],
      ['POST', `${INTENTS}/${intent.referenceNumber}/cancel`],
      ['POST', `${INTENTS}/${intent.referenceNumber}/refund`],
      ['POST', '/api/v1/dev/webhooks/endpoints'],
      ['PATCH', '/api/v1/dev/store/products/prod_unknown'],
      ['DELETE', '/api/v1/dev/store/products/prod_unknown'],
      ['POST', '/api/v1/dev/store/orders/simulate'],
      ['POST', '/api/v1/dev/payouts'],
      [`POST`, `/storefront/shops/${business.shopId}/quote`],
      ['POST', '/checkout/intents/abcdef/pay'],
    ] as const) {
      for (const contentType of ['text/plain', 'text/plain; charset=utf-8', 'application/xml']) {
        const response = await send(method, path, contentType, json);
        expectError(response, 415, 'UNSUPPORTED_MEDIA_TYPE');
        assert.match(response.body.error.message, /application\/json/, `${method} ${path}`);
      }
    }
    // The operator API too.
    const operator = await t.request('POST', '/api/v1/admin/businesses', {
      headers: { authorization: 'Bearer test-admin-token-0123456789', 'content-type': 'text/plain' },
      rawBody: '{"name":"Text"}',
    });
    assert.equal(operator.status, 415, operator.text);
    assert.equal(operator.body.error.code, 'UNSUPPORTED_MEDIA_TYPE');
  });

  test('CSV and multipart bodies are refused by the JSON routes of the products module', async () => {
    const csv = await send('POST', '/api/v1/dev/store/products', 'text/csv', 'name,price\nTea,100\n');
    expectError(csv, 415, 'UNSUPPORTED_MEDIA_TYPE');
    const form = multipartBody([{ field: 'name', content: 'Tea' }]);
    const multipart = await send('POST', '/api/v1/dev/store/products', form.contentType, form.body);
    expectError(multipart, 415, 'UNSUPPORTED_MEDIA_TYPE');
    const urlencoded = await send('POST', '/api/v1/dev/store/products', 'application/x-www-form-urlencoded', 'a=1');
    expectError(urlencoded, 415, 'UNSUPPORTED_MEDIA_TYPE');
  });

  test('the products import takes text/csv and multipart, and nothing else', async () => {
    const IMPORT = '/api/v1/dev/store/products/import';
    const rows = 'externalId,name,price\nMT-1,Media tea,100\n';
    expectStatus(await send('POST', IMPORT, 'text/csv', rows), 200);
    const upload = multipartBody([{ field: 'file', filename: 'p.csv', contentType: 'text/csv', content: rows }]);
    expectStatus(await send('POST', IMPORT, upload.contentType, upload.body), 200);
    for (const contentType of ['text/plain', 'application/json']) {
      const refused = await send('POST', IMPORT, contentType, rows);
      expectError(refused, 415, 'UNSUPPORTED_MEDIA_TYPE');
      assert.match(refused.body.error.message, /multipart\/form-data or text\/csv/);
    }
  });

  test('a bodiless action works with no body and no Content-Type, and with an empty JSON body', async () => {
    const bare = await createIntent(t, business.keys.secretTest);
    expectStatus(await send('POST', `${INTENTS}/${bare.referenceNumber}/cancel`, undefined), 200);
    const empty = await createIntent(t, business.keys.secretTest);
    expectStatus(await send('POST', `${INTENTS}/${empty.referenceNumber}/cancel`, 'application/json', ''), 200);
    const charset = await createIntent(t, business.keys.secretTest);
    expectStatus(
      await send('POST', `${INTENTS}/${charset.referenceNumber}/cancel`, 'application/json; charset=utf-8', '{}'),
      200,
    );
  });

  test('a body without a Content-Type is 415 too', async () => {
    // fetch sends a Buffer with no Content-Type of its own.
    const response = await send('POST', INTENTS, undefined, Buffer.from('{"amount":5000}'));
    expectError(response, 415, 'UNSUPPORTED_MEDIA_TYPE');
  });

  test('a 415 is not kept under its idempotency key: the same key with JSON then runs', async () => {
    const key = `media-${Date.now()}`;
    const refused = await t.request('POST', INTENTS, {
      key: business.keys.secretTest,
      idempotencyKey: key,
      rawBody: '{"amount":5000}',
      headers: { 'content-type': 'text/plain' },
    });
    expectError(refused, 415, 'UNSUPPORTED_MEDIA_TYPE');
    const created = await t.request('POST', INTENTS, {
      key: business.keys.secretTest,
      idempotencyKey: key,
      body: { amount: 5000 },
    });
    expectStatus(created, 201);
  });

  test('authentication comes first: a refused key learns nothing about its body', async () => {
    const response = await send('POST', INTENTS, 'text/plain', 'x', 'sk_test_not_a_key');
    expectError(response, 401, 'INVALID_API_KEY');
  });

  test("the dashboard's urlencoded forms are still read", async () => {
    const response = await t.request('POST', '/dashboard/login', {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      rawBody: 'email=nobody%40example.com&password=wrong&_csrf=forged',
    });
    // The form was read (the CSRF check of its fields refused it), not refused for its type.
    assert.equal(response.status, 403, response.text.slice(0, 300));
    assert.match(response.headers.get('content-type') ?? '', /text\/html/);
  });
});
