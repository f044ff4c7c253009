import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { FastifyPluginAsync } from 'fastify';
import { afterAll, beforeAll, test } from 'vitest';
import { buildApp } from '../../src/app.js';
import { developerModules } from '../../src/modules/index.js';
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

test('a route of the API without an operationId and a summary keeps the app from starting', async () => {
  const undocumented: FastifyPluginAsync = async (app) => {
    app.get('/probe/undocumented', { config: { auth: 'publishable', scope: 'intents:read' } }, async () => ({}));
  };
  await assert.rejects(async () => {
    const app = await buildApp(t.runtime, { developerRoutes: [...developerModules, undocumented] });
    await app.ready();
  }, /GET \/api\/v1\/dev\/probe\/undocumented is in the API document: its schema needs an operationId and a summary/);
  const summaryOnly: FastifyPluginAsync = async (app) => {
    app.get('/probe/unnamed', { schema: { summary: 'A read with no name' } }, async () => ({}));
  };
  await assert.rejects(async () => {
    const app = await buildApp(t.runtime, { developerRoutes: [summaryOnly] });
    await app.ready();
  }, /\/probe\/unnamed is in the API document/);
  // A hidden route, or one outside the API, needs no name.
  const hidden: FastifyPluginAsync = async (app) => {
    app.get('/probe/hidden', { schema: { hide: true } }, async () => ({}));
  };
  const app = await buildApp(t.runtime, { developerRoutes: [hidden] });
  await app.ready();
  await app.close();
});
