import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, test } from 'vitest';
import { expectStatus, startTestApp, type TestApp } from '../support/harness.js';

/**
 * Issue 49 moved every operation's docs from one table in http/ onto its route. This test holds
 * the document the routes build to the one the table built: for every operation, its operationId,
 * summary and description word for word, and its parameters, request body and responses (each
 * answer's error codes listed, the rest as a digest of its JSON with keys sorted, so an order of
 * keys is not a difference; openapi.test.ts holds the file byte for byte).
 *
 * An intended change of the docs rewrites the baseline: `OPENAPI_BASELINE=write npx vitest run
 * test/platform/openapi-equivalence.test.ts`, and the diff of openapi-baseline.json shows it.
 */

const BASELINE = new URL('./openapi-baseline.json', import.meta.url);

type Json = Record<string, unknown>;

interface OperationFacts {
  operationId: unknown;
  summary: unknown;
  description: unknown;
  parameters: string;
  requestBody: string;
  /** By status: the error codes it names (none for a success) and a digest of the whole answer. */
  responses: Record<string, { codes: string[]; digest: string }>;
}

function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, sortedKeys((value as Json)[key])]),
  );
}

const digest = (value: unknown): string =>
  value === undefined
    ? 'none'
    : createHash('sha256')
        .update(JSON.stringify(sortedKeys(value)))
        .digest('hex')
        .slice(0, 16);

function codesOf(response: Json): string[] {
  const match = /^Error\. Codes: (.*)\.$/.exec(String(response.description ?? ''));
  return match ? match[1]!.split(', ') : [];
}

function operationsOf(document: { paths: Record<string, Record<string, Json>> }): Record<string, OperationFacts> {
  const found: Record<string, OperationFacts> = {};
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      const responses = (operation.responses ?? {}) as Record<string, Json>;
      found[`${method.toUpperCase()} ${path}`] = {
        operationId: operation.operationId,
        summary: operation.summary,
        description: operation.description,
        parameters: digest(operation.parameters),
        requestBody: digest(operation.requestBody),
        responses: Object.fromEntries(
          Object.entries(responses).map(([status, response]) => [
            status,
            { codes: codesOf(response), digest: digest(response) },
          ]),
        ),
      };
    }
  }
  return found;
}

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

test('every operation the routes document is the one the baseline holds, field by field', async () => {
  const served = await t.request('GET', '/api/v1/dev/openapi.json');
  expectStatus(served, 200);
  const built = operationsOf(served.body);
  if (process.env.OPENAPI_BASELINE === 'write') {
    writeFileSync(BASELINE, `${JSON.stringify(built, null, 2)}\n`);
  }
  const baseline = JSON.parse(readFileSync(BASELINE, 'utf8')) as Record<string, OperationFacts>;
  assert.deepEqual(Object.keys(built).sort(), Object.keys(baseline).sort(), 'the same operations');
  for (const [name, facts] of Object.entries(baseline)) {
    assert.deepEqual(built[name], facts, `${name} differs from the baseline`);
  }
});
