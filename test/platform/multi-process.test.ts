import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { createTestDatabase, testDatabaseKind, type TestDatabase } from '../support/database.js';
import { ADMIN_TOKEN, expectError, expectStatus, sendRequest } from '../support/harness.js';
import { probeExecutions } from '../support/probe-routes.js';
import { manualClock } from '../support/clock.js';
import { testRedisUrl } from '../support/redis.js';
import { nodeEntry } from '../support/node-entry.js';

const redisUrl = await testRedisUrl();
const skip =
  testDatabaseKind !== 'postgres'
    ? 'needs PostgreSQL (TEST_DATABASE_URL): PGlite is one process per data directory'
    : !redisUrl
      ? 'needs Redis (TEST_REDIS_URL)'
      : false;

const clockStop = manualClock()();

async function startApiProcess(databaseUrl: string): Promise<{ child: ChildProcess; baseUrl: string }> {
  const child = spawn(process.execPath, nodeEntry('test/support/probe-server.ts'), {
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      REDIS_URL: redisUrl,
      ADMIN_TOKEN,
      LOG_LEVEL: 'silent',
      SEED_DEMO: 'false',
      RATE_LIMIT_TEST_PER_MINUTE: '40',
      // Both processes count in the same window, wherever the wall clock is in its minute.
      PROBE_CLOCK_MS: String(clockStop),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  child.stdout!.setEncoding('utf8');
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`API process did not start: ${output}`)), 120_000);
    child.stdout!.on('data', (chunk: string) => {
      output += chunk;
      const match = /listening (\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
    child.on('exit', (code) => reject(new Error(`API process exited with ${code}: ${output}`)));
  });
  return { child, baseUrl: `http://127.0.0.1:${port}` };
}

describe.skipIf(skip)('two API processes on one PostgreSQL and Redis', () => {
  let database: TestDatabase;
  let processes: { child: ChildProcess; baseUrl: string }[] = [];
  beforeAll(async () => {
    database = await createTestDatabase();
    processes = await Promise.all([startApiProcess(database.url!), startApiProcess(database.url!)]);
  });
  afterAll(async () => {
    for (const { child } of processes) {
      child.kill('SIGTERM');
      if (child.exitCode === null) await once(child, 'exit');
    }
    await database?.drop();
  });

  async function newBusiness() {
    const created = await sendRequest(processes[0]!.baseUrl, 'POST', '/api/v1/admin/businesses', {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      body: { name: 'Two processes' },
    });
    expectStatus(created, 201);
    return created.body.data.keys.find(
      (k: { kind: string; environment: string }) => k.kind === 'secret' && k.environment === 'test',
    ).key as string;
  }

  test('share one rate limit per key', async () => {
    const key = await newBusiness();
    for (let i = 0; i < 40; i++) {
      const response = await sendRequest(processes[i % 2]!.baseUrl, 'GET', '/api/v1/dev/probe/read', { key });
      expectStatus(response, 200);
    }
    for (const { baseUrl } of processes) {
      expectError(await sendRequest(baseUrl, 'GET', '/api/v1/dev/probe/read', { key }), 429, 'RATE_LIMITED');
    }
  });

  test('share one idempotency store: 20 simultaneous requests across both execute once', async () => {
    const key = await newBusiness();
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        sendRequest(processes[i % 2]!.baseUrl, 'POST', '/api/v1/dev/probe/counter', {
          key,
          idempotencyKey: 'cross-process',
          body: { name: 'cross-process', delayMs: 200 },
        }),
      ),
    );
    const originals = responses.filter((r) => r.status === 201 && r.headers.get('idempotent-replayed') === null);
    assert.equal(originals.length, 1, responses.map((r) => r.status).join(','));
    assert.ok(responses.every((r) => r.status === 201 || r.status === 409));
    assert.equal(await probeExecutions(database.database.db, 'cross-process'), 1);
  });
});
