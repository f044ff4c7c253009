import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { allScopes } from '../../src/modules/keys/scopes.js';
import { startTestApp, type TestApp, type TestBusiness, type TestResponse } from '../support/harness.js';

interface Operation {
  parameters?: { in: string; name: string; schema?: { pattern?: string } }[];
  requestBody?: { required?: boolean; content: Record<string, { schema?: unknown }> };
}
const document = JSON.parse(readFileSync('openapi.json', 'utf8')) as {
  paths: Record<string, Record<string, Operation>>;
};
const withJsonBodies = Object.entries(document.paths).flatMap(([path, item]) =>
  Object.entries(item)
    .filter(([, operation]) => operation.requestBody?.content['application/json'])
    .map(([method, operation]) => ({ method: method.toUpperCase(), path, operation })),
);

/** A path parameter's value that passes its schema and names nothing: the answer is about the body or a 404. */
function sampleParameter(pattern: string | undefined): string {
  if (pattern?.startsWith('^PO-')) return 'PO-0000000000000000';
  if (pattern?.startsWith('^txn_')) return 'txn_0';
  if (pattern?.startsWith('^pob_')) return 'pob_0';
  if (pattern?.startsWith('^SL-')) return 'SL-0000000000000000';
  return 'unknown1';
}

function concrete(path: string, operation: Operation, productId: string): string {
  // A product's body is checked after the product is found (one of quantity and delta).
  if (path.startsWith('/api/v1/dev/store/products/{id}')) return path.replace('{id}', productId);
  return path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const parameter = operation.parameters?.find((p) => p.in === 'path' && p.name === name);
    return sampleParameter(parameter?.schema?.pattern);
  });
}

/** Whether an answer refuses the request for its body (missing, not JSON, of another type). */
function refusedForBody(response: TestResponse): boolean {
  if (response.status === 415) return true;
  if (response.status !== 400) return false;
  const code = response.body?.error?.code as string;
  if (code === 'INVALID_JSON') return true;
  const details = (response.body?.error?.details ?? []) as { field: string }[];
  return (
    code === 'VALIDATION_ERROR' &&
    (details.some((detail) => detail.field.startsWith('body')) || /body/.test(response.body.error.message))
  );
}

/**
 * decisions.md: an action without a body may be sent with none, and openapi.json marks such
 * request bodies optional. Each operation is sent with neither body nor Content-Type: the ones the
 * document marks optional must not be refused for it, the others must.
 */
describe('request bodies in openapi.json', () => {
  let t: TestApp;
  let business: TestBusiness;
  let productId: string;
  /** A key of every scope: `api_keys:write` is in no default (issue 53). */
  let everyScope: string;
  beforeAll(async () => {
    t = await startTestApp();
    business = await t.createBusiness();
    const key = await t.admin('POST', '/keys', {
      businessId: business.id,
      kind: 'secret',
      environment: 'test',
      scopes: [...allScopes],
    });
    everyScope = key.body.data.key;
    const product = await t.request('POST', '/api/v1/dev/store/products', {
      key: business.keys.secretTest,
      idempotencyKey: true,
      body: { name: 'Bodies', price: 100, quantity: 5 },
    });
    productId = product.body.data.id;
  });
  afterAll(() => t.close());

  test('the bodiless actions mark their body optional', () => {
    const optional = withJsonBodies
      .filter(({ operation }) => operation.requestBody?.required === false)
      .map(({ method, path }) => `${method} ${path.replace('/api/v1/dev', '')}`);
    for (const action of [
      'POST /intents/{referenceNumber}/cancel',
      'POST /intents/{referenceNumber}/refund',
      'POST /intents/{referenceNumber}/simulate',
      'POST /intents/{referenceNumber}/simulate-expiry',
      'POST /webhooks/endpoints/{id}/rotate-secret',
      'POST /webhooks/endpoints/{id}/test',
      'POST /webhooks/events/{id}/retry',
      'POST /store/orders/{referenceNumber}/accept',
      'POST /store/orders/{referenceNumber}/ready',
      'POST /store/orders/{referenceNumber}/pickup',
      'POST /store/orders/{referenceNumber}/deliver',
      'POST /store/orders/{referenceNumber}/refund',
      'POST /store/orders/{referenceNumber}/modification/accept',
      'POST /store/orders/{referenceNumber}/modification/decline',
      'POST /payouts/{referenceNumber}/cancel',
      'POST /storefront/orders/{orderRef}/cancel',
      'POST /storefront/orders/{orderRef}/modification/decline',
    ]) {
      assert.ok(optional.includes(action), `${action} marks its body optional`);
    }
  });

  test('sent without a body, an operation is refused for it exactly when the document requires one', async () => {
    assert.ok(withJsonBodies.length >= 30);
    for (const { method, path, operation } of withJsonBodies) {
      const response = await t.request(method, concrete(path, operation, productId), {
        key: everyScope,
        idempotencyKey: true,
      });
      const where = `${method} ${path}: ${response.status} ${response.text.slice(0, 300)}`;
      assert.ok(response.status < 500, where);
      assert.equal(refusedForBody(response), operation.requestBody?.required !== false, where);
    }
  });

  test('the products import documents its CSV body and its multipart form', () => {
    const body = document.paths['/api/v1/dev/store/products/import']!.post!.requestBody!;
    assert.equal(body.required, true);
    assert.deepEqual(Object.keys(body.content).sort(), ['multipart/form-data', 'text/csv']);
    assert.deepEqual(body.content['text/csv']!.schema, {
      type: 'string',
      description: 'a CSV file in the export format, as the whole body',
    });
  });
});
