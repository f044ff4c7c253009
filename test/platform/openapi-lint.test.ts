import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'vitest';
import { createConfig, lint } from '@redocly/openapi-core';
import { eventCatalog } from '../../src/modules/events/catalog.js';

interface Operation {
  operationId?: string;
  summary?: string;
  description?: string;
  tags?: string[];
  security?: unknown[];
  parameters?: { in: string; name: string; required?: boolean }[];
  responses: Record<string, { content?: Record<string, { schema?: unknown; examples?: Record<string, unknown> }> }>;
}
const document = JSON.parse(readFileSync('openapi.json', 'utf8')) as {
  paths: Record<string, Record<string, Operation>>;
  webhooks: Record<string, { post: { requestBody: { content: Record<string, { schema: unknown }> } } }>;
};
const operations = Object.entries(document.paths).flatMap(([path, item]) =>
  Object.entries(item).map(([method, operation]) => ({ method, path, operation })),
);

test('openapi.json passes the Redocly recommended rules with no error (the engine of `redocly lint`)', async () => {
  const problems = await lint({ ref: 'openapi.json', config: await createConfig({ extends: ['recommended'] }) });
  const errors = problems.filter((problem) => problem.severity === 'error');
  assert.deepEqual(
    errors.map((problem) => `${problem.ruleId} ${problem.location[0]?.pointer}: ${problem.message}`),
    [],
  );
});

test('every operation has a unique operationId, a summary, a description, a tag and its error answers', () => {
  assert.ok(operations.length >= 45);
  const ids = operations.map(({ operation }) => operation.operationId);
  assert.equal(new Set(ids).size, ids.length);
  for (const { method, path, operation } of operations) {
    const where = `${method.toUpperCase()} ${path}`;
    assert.match(operation.operationId ?? '', /^[a-z][A-Za-z]+$/, where);
    assert.ok(operation.summary && !operation.summary.startsWith(method.toUpperCase()), `${where}: a written summary`);
    assert.ok(operation.description, where);
    assert.ok(operation.tags?.length, where);
    const errors = Object.keys(operation.responses).filter((status) => Number(status) >= 400);
    // The storefront's customer API takes no key (security: []), so it has no 401.
    const keyless = Array.isArray(operation.security) && operation.security.length === 0;
    assert.ok((keyless || errors.includes('401')) && errors.includes('500'), `${where}: ${errors.join(',')}`);
    for (const status of errors) {
      const examples = operation.responses[status]!.content!['application/json']!.examples!;
      assert.ok(Object.keys(examples).length > 0, `${where} ${status}`);
    }
  }
});

test('writes document X-Idempotency-Key and their own codes; the scheme is bearer', () => {
  for (const { method, path, operation } of operations) {
    const header = operation.parameters?.find((parameter) => parameter.name === 'X-Idempotency-Key');
    const keyless = Array.isArray(operation.security) && operation.security.length === 0;
    if (method === 'get') assert.equal(header, undefined, path);
    else if (keyless) assert.notEqual(header?.required, true, `${method} ${path}: optional for customers`);
    else assert.equal(header?.required, true, `${method} ${path}`);
  }
  const cancel = document.paths['/api/v1/dev/intents/{referenceNumber}/cancel']!.post!;
  const codes = Object.values(cancel.responses).flatMap((response) =>
    Object.keys(response.content?.['application/json']?.examples ?? {}),
  );
  for (const code of [
    'INTENT_NOT_FOUND',
    'INTENT_CANCEL_INVALID_STATUS',
    'IDEMPOTENCY_KEY_REQUIRED',
    'SCOPE_REQUIRED',
  ]) {
    assert.ok(codes.includes(code), code);
  }
  const full = document as unknown as { components: { securitySchemes: Record<string, { scheme: string }> } };
  assert.equal(Object.values(full.components.securitySchemes)[0]!.scheme, 'bearer');
});

test('the webhooks section has a payload schema for every event of the catalogue', () => {
  for (const name of [...Object.keys(eventCatalog), 'ping']) {
    const schema = document.webhooks[name]?.post.requestBody.content['application/json']?.schema as
      { properties?: Record<string, unknown> } | undefined;
    assert.ok(schema?.properties?.sequence && schema.properties.data, name);
  }
});
