import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { expectError, expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { probeRoutes } from '../support/probe-routes.js';

describe('HTTP conventions', () => {
  let t: TestApp;
  let business: TestBusiness;
  beforeAll(async () => {
    t = await startTestApp({ routes: [probeRoutes] });
    business = await t.createBusiness();
  });
  afterAll(() => t.close());

  test('unknown routes, methods and paths outside the base answer ENDPOINT_NOT_FOUND', async () => {
    for (const [method, path] of [
      ['GET', '/api/v1/dev/nothing-here'],
      ['DELETE', '/api/v1/dev/probe/read'],
      ['GET', '/api/v2/dev/probe/read'],
      ['GET', '/nothing-here'],
      ['POST', '/anything?x=1'],
    ] as const) {
      const response = await t.request(method, path, { key: business.keys.secretTest });
      expectError(response, 404, 'ENDPOINT_NOT_FOUND');
    }
  });

  test('X-Request-Id: a valid incoming id is echoed, anything else gets a generated one', async () => {
    const echoed = await t.request('GET', '/api/v1/dev/probe/read', {
      key: business.keys.secretTest,
      headers: { 'x-request-id': 'client-trace-123456' },
    });
    expectStatus(echoed, 200);
    assert.equal(echoed.headers.get('x-request-id'), 'client-trace-123456');

    const replaced = await t.request('GET', '/api/v1/dev/missing', {
      headers: { 'x-request-id': 'bad id with spaces' },
    });
    const generated = replaced.headers.get('x-request-id') ?? '';
    assert.match(generated, /^req_[0-9A-Za-z]{20}$/);
    assert.equal(replaced.body.error.requestId, generated);
  });

  test('a body that is not JSON answers INVALID_JSON, never a 500', async () => {
    for (const rawBody of ['{"name": ', 'not json', '{"__proto__": {"x": 1}}', '[1,2']) {
      const response = await t.request('POST', '/api/v1/dev/probe/counter', {
        key: business.keys.secretTest,
        idempotencyKey: true,
        rawBody,
        headers: { 'content-type': 'application/json' },
      });
      expectError(response, 400, 'INVALID_JSON');
    }
  });

  test('a JSON body over 1 MB answers PAYLOAD_TOO_LARGE', async () => {
    const response = await t.request('POST', '/api/v1/dev/probe/counter', {
      key: business.keys.secretTest,
      idempotencyKey: true,
      body: { name: 'x'.repeat(1024 * 1024 + 10) },
    });
    expectError(response, 413, 'PAYLOAD_TOO_LARGE');
  });

  test('schema failures answer VALIDATION_ERROR with every issue in details', async () => {
    const response = await t.request('POST', '/api/v1/dev/probe/counter', {
      key: business.keys.secretTest,
      idempotencyKey: true,
      body: { name: '', delayMs: 'soon', colour: 'red' },
    });
    expectError(response, 400, 'VALIDATION_ERROR');
    const fields = (response.body.error.details as { field: string; message: string }[]).map((d) => d.field);
    assert.ok(fields.includes('body.name'), response.text);
    assert.ok(fields.includes('body.delayMs'), response.text);
    assert.ok(fields.includes('body.colour'), response.text);
    const unknown = response.body.error.details.find((d: { field: string }) => d.field === 'body.colour');
    assert.equal(unknown.message, 'unknown field');
  });

  test('a missing required field and a wrong content type are clear 4xx answers', async () => {
    const missing = await t.request('POST', '/api/v1/dev/probe/counter', {
      key: business.keys.secretTest,
      idempotencyKey: true,
      body: {},
    });
    expectError(missing, 400, 'VALIDATION_ERROR');
    assert.deepEqual(missing.body.error.details, [
      { field: 'body.name', message: missing.body.error.details[0].message },
    ]);

    const xml = await t.request('POST', '/api/v1/dev/probe/counter', {
      key: business.keys.secretTest,
      idempotencyKey: true,
      rawBody: '<name>x</name>',
      headers: { 'content-type': 'application/xml' },
    });
    expectError(xml, 415, 'UNSUPPORTED_MEDIA_TYPE');
  });

  test('success responses use the envelope and serialize only schema fields', async () => {
    const response = await t.request('GET', '/api/v1/dev/probe/read', { key: business.keys.publishableTest });
    expectStatus(response, 200);
    assert.deepEqual(response.body, { success: true, data: { businessId: business.id, sandbox: true } });
  });

  test('health and readiness live outside the base', async () => {
    const health = await t.request('GET', '/health');
    expectStatus(health, 200);
    assert.equal(health.body.data.status, 'ok');
    const ready = await t.request('GET', '/ready');
    expectStatus(ready, 200);
    assert.equal(ready.body.data.status, 'ready');
  });

  test('OpenAPI document and docs page are served', async () => {
    const doc = await t.request('GET', '/api/v1/dev/openapi.json');
    expectStatus(doc, 200);
    assert.equal(doc.body.openapi, '3.1.0');
    assert.ok(doc.body.paths['/api/v1/dev/probe/counter'], 'routes appear in the document');
    assert.equal(
      doc.body.paths['/api/v1/admin/keys'],
      undefined,
      'the operator API is not in the Developer API document',
    );
    const page = await t.request('GET', '/docs');
    expectStatus(page, 200);
    assert.match(page.text, /swagger/i);
  });

  test('CORS: preflight is answered and publishable read endpoints allow any origin', async () => {
    const preflight = await t.request('OPTIONS', '/api/v1/dev/probe/read', {
      headers: { origin: 'https://shop.example', 'access-control-request-method': 'GET' },
    });
    expectStatus(preflight, 204);
    assert.equal(preflight.headers.get('access-control-allow-origin'), '*');
    assert.match(preflight.headers.get('access-control-allow-headers') ?? '', /Authorization/);
    assert.equal(preflight.headers.get('access-control-allow-methods'), 'GET, OPTIONS');
    assert.equal(preflight.headers.get('access-control-max-age'), '600');
    assert.equal(preflight.text, '');

    const read = await t.request('GET', '/api/v1/dev/probe/read', {
      key: business.keys.publishableTest,
      headers: { origin: 'https://shop.example' },
    });
    assert.equal(read.headers.get('access-control-allow-origin'), '*');
    const write = await t.request('POST', '/api/v1/dev/probe/counter', {
      key: business.keys.secretTest,
      idempotencyKey: true,
      body: { name: 'cors' },
      headers: { origin: 'https://shop.example' },
    });
    expectStatus(write, 201);
    assert.equal(
      write.headers.get('access-control-allow-origin'),
      null,
      'secret-key endpoints are not open to browsers',
    );
  });

  test('an unexpected failure answers a generic 500 with the request id and no stack', async () => {
    const response = await t.request('POST', '/api/v1/dev/probe/counter', {
      key: business.keys.secretTest,
      idempotencyKey: true,
      body: { name: 'boom' },
      headers: { 'x-probe-fail': '1' },
    });
    expectError(response, 500, 'INTERNAL_ERROR');
    assert.doesNotMatch(response.text, /probe failure on purpose/);
  });
});
