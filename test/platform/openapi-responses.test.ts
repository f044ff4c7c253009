import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, test } from 'vitest';
import { checkedFetch, openApiDrift, takeDrifts, type ObservedResponse } from '../support/openapi-check.js';

/**
 * The check every test's responses go through (test/support/openapi-check.ts, issue 36): it must
 * bite on each kind of drift, and let a documented answer through.
 */

const JSON_TYPE = 'application/json; charset=utf-8';

function errorAnswer(method: string, url: string, status: number, code: string): ObservedResponse {
  return {
    method,
    url,
    status,
    contentType: JSON_TYPE,
    text: JSON.stringify({
      success: false,
      error: { code, message: 'A message.', statusCode: status, requestId: 'req_4fP2kq9ZtX0bLmWc7sYd' },
    }),
  };
}

describe('responses checked against openapi.json', () => {
  test('a documented answer passes: success, error, CSV', () => {
    assert.equal(
      openApiDrift({
        method: 'GET',
        url: '/api/v1/dev/balance?x=1',
        status: 200,
        contentType: JSON_TYPE,
        text: JSON.stringify({ success: true, data: { available: 1500, currency: 'MRU', sandbox: true } }),
      }),
      undefined,
    );
    assert.equal(openApiDrift(errorAnswer('GET', '/api/v1/dev/intents/PI-1/', 404, 'INTENT_NOT_FOUND')), undefined);
    assert.equal(
      openApiDrift(errorAnswer('DELETE', '/api/v1/dev/store/products/p_1', 415, 'UNSUPPORTED_MEDIA_TYPE')),
      undefined,
    );
    // /store/products/export, not /store/products/{id}: the router prefers the literal segment.
    const csv = { method: 'GET', url: '/api/v1/dev/store/products/export', status: 200, text: 'name\n' };
    assert.equal(openApiDrift({ ...csv, contentType: 'text/csv; charset=utf-8' }), undefined);
  });

  test('an undocumented status is reported with the method, path template, status and code', () => {
    const drift = openApiDrift(errorAnswer('POST', '/api/v1/dev/store/orders/simulate', 418, 'INTERNAL_ERROR'));
    assert.match(drift ?? '', /^POST \/api\/v1\/dev\/store\/orders\/simulate answered 418 INTERNAL_ERROR, a status/);
  });

  test('a body that does not match the schema is reported with the validator errors', () => {
    const drift = openApiDrift({
      method: 'GET',
      url: '/api/v1/dev/balance',
      status: 200,
      contentType: JSON_TYPE,
      text: JSON.stringify({ success: true, data: { available: '1500', currency: 'MRU' } }),
    });
    assert.match(drift ?? '', /^GET \/api\/v1\/dev\/balance answered 200, a body that does not match/);
    assert.match(drift ?? '', /\/data\/available must be integer/);
    assert.match(drift ?? '', /must have required property 'sandbox'/);
  });

  test("an error code outside the operation's list is reported, though its status is documented", () => {
    const drift = openApiDrift(errorAnswer('GET', '/api/v1/dev/intents/PI-1', 404, 'ORDER_NOT_FOUND'));
    assert.match(drift ?? '', /^GET \/api\/v1\/dev\/intents\/\{referenceNumber\} answered 404 ORDER_NOT_FOUND/);
    assert.match(drift ?? '', /\/error\/code must be equal to one of the allowed values/);
  });

  test('a media type the status does not document, or a JSON answer that is not JSON, is reported', () => {
    const balance = { method: 'GET', url: '/api/v1/dev/balance', status: 200, text: '<p>1500</p>' };
    assert.match(openApiDrift({ ...balance, contentType: 'text/html' }) ?? '', /as text\/html, not documented/);
    assert.match(openApiDrift({ ...balance, contentType: JSON_TYPE }) ?? '', /the body is not JSON/);
  });

  test('paths and methods the document does not name are not checked', () => {
    for (const [method, url] of [
      ['GET', '/health'],
      ['GET', '/dashboard/payments'],
      ['POST', '/api/v1/admin/businesses'],
      ['GET', '/api/v1/dev/no-such-route'],
      ['OPTIONS', '/api/v1/dev/intents'],
    ] as const) {
      assert.equal(openApiDrift(errorAnswer(method, url, 404, 'ENDPOINT_NOT_FOUND')), undefined, `${method} ${url}`);
    }
  });

  test("the SDK's checked fetch keeps a drift for the app's harness to fail on", async () => {
    const server = http.createServer((_request, response) => {
      response.writeHead(418, { 'content-type': JSON_TYPE }).end('{"success":false}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const response = await checkedFetch(`${origin}/api/v1/dev/balance`);
      assert.equal(response.status, 418);
      assert.equal(await response.text(), '{"success":false}', 'the caller still reads the body');
      const drifts = takeDrifts(origin);
      assert.equal(drifts.length, 1);
      assert.match(drifts[0]!, /^GET \/api\/v1\/dev\/balance answered 418/);
      assert.deepEqual(takeDrifts(origin), [], 'taken once');
    } finally {
      server.close();
    }
  });
});
