import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { Commerce } from '@commerce-developer-api/sdk';
import { eventNames } from '../support/read-api.js';
import { createProduct } from '../products/support.js';
import { startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { checkedFetch } from '../support/openapi-check.js';

const API_BASE = '/api/v1/dev';
const document = JSON.parse(readFileSync('openapi.json', 'utf8')) as {
  paths: Record<string, Record<string, { operationId: string; summary: string; deprecated?: boolean }>>;
};

/**
 * Every operation of the Developer API in the document, as `METHOD /path` with its matcher; an
 * alias of another operation (`GET /webhooks`, summary "... (alias)") and a deprecated path
 * (`POST /payouts/batch`) are served by their successor's method.
 */
const operations = Object.entries(document.paths)
  .filter(([path]) => path.startsWith(`${API_BASE}/`))
  .flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([, operation]) => !operation.summary.endsWith('(alias)') && operation.deprecated !== true)
      .map(([method, operation]) => ({
        name: `${method.toUpperCase()} ${path}`,
        operationId: operation.operationId,
        method: method.toUpperCase(),
        matcher: new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`),
        /** A template's literal segments: `/payouts/batches/{id}` beats `/payouts/{referenceNumber}`. */
        literals: path.split('/').filter((segment) => segment && !segment.startsWith('{')).length,
      })),
  );

/** The operation a request of the SDK reached: the matching template with the most literal segments. */
function operationOf(method: string, pathname: string): string | undefined {
  return operations
    .filter((operation) => operation.method === method && operation.matcher.test(pathname))
    .sort((a, b) => b.literals - a.literals)[0]?.name;
}

/** The SDK's resources and their methods, found by walking the client (nested ones included). */
function resourceMethods(root: object): { name: string; call: (...args: unknown[]) => unknown }[] {
  const found: { name: string; call: (...args: unknown[]) => unknown }[] = [];
  const walk = (value: object, name: string) => {
    for (const [key, child] of Object.entries(value)) {
      if (key === 'http' || key === 'webhooks' || child === null || typeof child !== 'object') continue;
      let prototype = Object.getPrototypeOf(child) as object | null;
      while (prototype && prototype !== Object.prototype) {
        for (const method of Object.getOwnPropertyNames(prototype)) {
          const fn = (child as Record<string, unknown>)[method];
          if (method !== 'constructor' && typeof fn === 'function') {
            found.push({ name: `${name}${key}.${method}`, call: (...args) => fn.apply(child, args) });
          }
        }
        prototype = Object.getPrototypeOf(prototype) as object | null;
      }
      walk(child, `${name}${key}.`);
    }
  };
  walk(root, '');
  return found;
}

describe('the SDK covers the Developer API', () => {
  test('every operation of openapi.json under /api/v1/dev has an SDK method', async () => {
    const reached = new Set<string>();
    const recordingFetch: typeof fetch = async (input, init) => {
      const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
      const operation = operationOf(init?.method ?? 'GET', url.pathname);
      if (operation) reached.add(operation);
      const page = { items: [], page: 1, limit: 20, total: 0, hasMore: false };
      return new Response(JSON.stringify({ success: true, data: page }), {
        status: 200,
        headers: { 'content-type': 'application/json' },
      });
    };
    const client = new Commerce('sk_test_0123456789abcdefghijklmnopqrstuv', {
      baseUrl: 'http://sdk.invalid',
      fetch: recordingFetch,
      maxRetries: 0,
    });
    const methods = resourceMethods(client);
    assert.ok(methods.length >= 50, `${methods.length} methods found`);
    // Placeholder arguments: an id, a body (or a file, for uploads), a file name.
    const argumentSets: unknown[][] = [
      ['x1', { from: '2026-01-01', to: '2026-01-31', format: 'csv' }],
      ['x1', new Blob(['a,b\n'], { type: 'text/csv' }), 'file.csv'],
    ];
    for (const method of methods) {
      for (const args of argumentSets) {
        try {
          await method.call(...args);
        } catch {
          // A placeholder the method cannot take: the other set serves it.
        }
      }
    }
    const missing = operations.filter((operation) => !reached.has(operation.name));
    assert.deepEqual(
      missing.map((operation) => `${operation.name} (${operation.operationId})`),
      [],
      'operations without an SDK method',
    );
  });
});

describe('orders.declineModification', () => {
  let t: TestApp;
  let business: TestBusiness;
  let commerce: Commerce;
  beforeAll(async () => {
    t = await startTestApp();
    business = await t.createBusiness();
    commerce = new Commerce(business.keys.secretTest, { baseUrl: t.baseUrl, fetch: checkedFetch });
  });
  afterAll(() => t.close());

  test('the customer declines the proposal: the order stays as it was, order.modification_declined sent', async () => {
    const product = await createProduct(t, business.keys.secretTest, {
      name: 'Declined tea',
      price: 1000,
      status: 'ACTIVE',
      quantity: 10,
    });
    const order = await commerce.orders.simulate({
      items: [{ productId: product.id, quantity: 1 }],
      customerName: 'Aicha',
    });
    const proposed = await commerce.orders.proposeModification(order.referenceNumber, {
      items: [{ productId: product.id, quantity: 3 }],
    });
    assert.ok(proposed.proposedModification);
    const declined = await commerce.orders.declineModification(order.referenceNumber);
    assert.equal(declined.proposedModification, null);
    assert.equal(declined.status, 'NEW');
    assert.equal(declined.totalAmount, order.totalAmount);
    assert.deepEqual(
      declined.items.map((item) => item.quantity),
      [1],
    );
    assert.ok(
      (await eventNames(t, business.keys.secretTest, order.referenceNumber)).includes('order.modification_declined'),
    );
  });
});
