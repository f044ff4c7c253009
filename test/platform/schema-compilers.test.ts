/**
 * Request checks and response serializers compile on each route's first request (a restart does
 * not pay for all of them). So that a schema that will not compile cannot wait for its first
 * request in production, the whole app is built here with every schema compiled at once.
 */
import assert from 'node:assert/strict';
import type { FastifyPluginAsync } from 'fastify';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { buildApp } from '../../src/app.js';
import { createRuntime, type Runtime } from '../../src/bootstrap.js';
import { loadConfig } from '../../src/config.js';
import { developerModules } from '../../src/modules/index.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { ADMIN_TOKEN } from '../support/harness.js';

/** A route whose response schema points at a schema that does not exist. */
const brokenSerializer: FastifyPluginAsync = async (app) => {
  app.get(
    '/probe/broken',
    {
      schema: {
        operationId: 'probeBroken',
        summary: 'A read whose answer cannot be serialized',
        response: { 200: { type: 'object', properties: { a: { $ref: 'nowhere#' } } } },
      },
    },
    async () => ({ a: 1 }),
  );
};

describe('schema compilation', () => {
  let testDatabase: TestDatabase;
  let runtime: Runtime;
  beforeAll(async () => {
    testDatabase = await createTestDatabase();
    runtime = await createRuntime(loadConfig({ LOG_LEVEL: 'silent', SEED_DEMO: 'false' }), {
      database: testDatabase.database,
      adminToken: ADMIN_TOKEN,
    });
  });
  afterAll(async () => {
    await runtime.close();
    await testDatabase.drop();
  });

  test("every route's request and response schemas compile", async () => {
    const app = await buildApp(runtime, { developerRoutes: developerModules, compileSchemasAtStart: true });
    await app.ready();
    assert.ok(app.printRoutes().length > 0);
    await app.close();
  });

  test('a schema that will not compile fails the build of the app when compiled at once, and not before its route is asked otherwise', async () => {
    await assert.rejects(async () => {
      const app = await buildApp(runtime, { developerRoutes: [brokenSerializer], compileSchemasAtStart: true });
      await app.ready();
    }, /nowhere/);
    const app = await buildApp(runtime, { developerRoutes: [brokenSerializer] });
    await app.ready();
    const health = await app.inject({ method: 'GET', url: '/health' });
    assert.equal(health.statusCode, 200);
    await app.close();
  });
});
