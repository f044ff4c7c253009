import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, test } from 'vitest';
import pino from 'pino';
import { buildApp, type App } from '../../src/app.js';
import { developerModules } from '../../src/modules/index.js';
import { expectStatus, sendRequest, startTestApp, type TestApp } from '../support/harness.js';
import { probeRoutes } from '../support/probe-routes.js';

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
  // The same runtime, served by an app whose logger writes where the test can read it.
  logged = await buildApp(t.runtime, {
    logger: pino({ level: 'info' }, stream),
    developerRoutes: [...developerModules, probeRoutes],
  });
  await logged.listen({ port: 0, host: '127.0.0.1' });
  const address = logged.server.address();
  baseUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
});
afterAll(async () => {
  await logged.close();
  await t.close();
});

test('one JSON log line per request with request id, key id, status and duration, never the key', async () => {
  const business = await t.createBusiness();
  const key = business.keys.secretTest;
  const keyId = business.keyRecords.find((k) => k.key === key)!.id;
  const response = await sendRequest(baseUrl, 'GET', '/api/v1/dev/probe/read', {
    key,
    headers: { 'x-request-id': 'log-check-0001' },
  });
  expectStatus(response, 200);
  await sendRequest(baseUrl, 'GET', '/api/v1/dev/probe/read', { key: key.slice(0, -2) + 'zz' });
  const entries = lines
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((entry) => entry.msg === 'request');
  const entry = entries.find((e) => e.reqId === 'log-check-0001');
  assert.ok(entry, `no request line: ${lines.join('\n')}`);
  assert.equal(entry.keyId, keyId);
  assert.equal(entry.statusCode, 200);
  assert.equal(entry.method, 'GET');
  assert.equal(entry.route, '/api/v1/dev/probe/read');
  assert.equal(typeof entry.durationMs, 'number');
  assert.equal(entries.filter((e) => e.reqId === 'log-check-0001').length, 1, 'exactly one line per request');
  const refused = entries.find((e) => e.statusCode === 401);
  assert.ok(refused && refused.keyId === null);
  const all = lines.join('\n');
  assert.ok(!all.includes(key) && !all.includes(key.slice(8)), 'no key text in the logs');
});
