import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, test } from 'vitest';
import type { FastifyPluginAsync } from 'fastify';
import { sql } from 'kysely';
import pino from 'pino';
import { buildApp, type App } from '../../src/app.js';
import { serializeLoggedError } from '../../src/http/error-handler.js';
import { developerModules } from '../../src/modules/index.js';
import { expectError, sendRequest, startTestApp, type TestApp } from '../support/harness.js';

const SECRET = 'whsec_do_not_log_0123456789';

/** A route whose statement fails with a secret among its parameters. */
const failingRoute: FastifyPluginAsync = async (app) => {
  const documented = { operationId: 'probeDbError', summary: 'A read whose statement fails' };
  app.get(
    '/probe/db-error',
    { config: { auth: 'publishable', scope: 'intents:read' }, schema: documented },
    async () => {
      await sql`INSERT INTO businesses (id, name) VALUES (${SECRET}, ${null})`.execute(app.services.db);
      return { success: true };
    },
  );
};

describe('database errors are logged without their parameters (issue 15 item 6)', () => {
  let t: TestApp;
  let logged: App;
  const lines: string[] = [];
  let baseUrl = '';
  beforeAll(async () => {
    t = await startTestApp();
    const stream = new Writable({
      write(chunk, _encoding, done) {
        lines.push(...String(chunk).split('\n').filter(Boolean));
        done();
      },
    });
    // A logger without the server's serializer: the error handler must be safe on its own.
    logged = await buildApp(t.runtime, {
      logger: pino({ level: 'info' }, stream),
      developerRoutes: [...developerModules, failingRoute],
    });
    await logged.listen({ port: 0, host: '127.0.0.1' });
    const address = logged.server.address();
    baseUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  });
  afterAll(async () => {
    await logged.close();
    await t.close();
  });

  test('a failed statement: 500 for the client; the log has the SQLSTATE and statement, not the values', async () => {
    const business = await t.createBusiness();
    const response = await sendRequest(baseUrl, 'GET', '/api/v1/dev/probe/db-error', {
      key: business.keys.publishableTest,
    });
    expectError(response, 500, 'INTERNAL_ERROR');
    const entry = lines.map((line) => JSON.parse(line)).find((e) => e.msg === 'unhandled error');
    assert.ok(entry, lines.join('\n'));
    assert.equal(entry.err.type, 'DatabaseError');
    assert.equal(entry.err.code, '23502', JSON.stringify(entry.err));
    assert.ok(!lines.join('\n').includes(SECRET), `a parameter leaked: ${lines.join('\n')}`);
    if (t.runtime.database.kind === 'pglite') assert.equal(entry.err.statement, 'INSERT businesses');
  });

  test('the serializer keeps SQLSTATE, statement and stack, drops message, detail, where and params', async () => {
    const error = await sql`SELECT ${SECRET}::int AS n`.execute(t.runtime.db).then(
      () => assert.fail('should fail'),
      (caught: unknown) => caught,
    );
    const text = JSON.stringify(serializeLoggedError(error));
    assert.ok(!text.includes(SECRET), text);
    assert.match(text, /"code":"22P02"/);
    const plain = serializeLoggedError(new Error('plain')) as { message: string };
    assert.equal(plain.message, 'plain', 'other errors keep their message');
  });
});
