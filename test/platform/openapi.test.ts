import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, test } from 'vitest';
import { expectStatus, startTestApp, type TestApp } from '../support/harness.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

test('the committed openapi.json matches the document generated from the routes (run `npm run openapi`)', async () => {
  const served = await t.request('GET', '/api/v1/dev/openapi.json');
  expectStatus(served, 200);
  const committed = JSON.parse(readFileSync('openapi.json', 'utf8'));
  // Compared as text: a structural diff of two large documents is slow to print.
  const drifted = Object.keys(served.body.paths).filter(
    (route) => JSON.stringify(served.body.paths[route]) !== JSON.stringify(committed.paths?.[route]),
  );
  assert.deepEqual(drifted, [], 'paths differ from openapi.json: run `npm run openapi`');
  assert.ok(
    JSON.stringify(served.body) === JSON.stringify(committed),
    'openapi.json is out of date: run `npm run openapi`',
  );
});
