import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { Redis } from 'ioredis';
import { manualClock } from '../support/clock.js';
import {
  expectError,
  expectStatus,
  sharedDatabase,
  startTestApp,
  waitUntil,
  type TestApp,
  type TestBusiness,
} from '../support/harness.js';
import { probeRoutes } from '../support/probe-routes.js';

const READ = '/api/v1/dev/probe/read';
const LIMIT = 30;
const redisServer = ['/usr/bin/redis-server', '/usr/local/bin/redis-server'].find(existsSync);

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function answersPing(url: string): Promise<boolean> {
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => {});
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

/** What one app's runtime logged, by level. */
function recorder() {
  const lines: { level: 'warn' | 'info'; message: string }[] = [];
  return {
    lines,
    log: {
      warn: (message: string) => lines.push({ level: 'warn', message }),
      info: (message: string) => lines.push({ level: 'info', message }),
    },
    count: (pattern: RegExp) => lines.filter((line) => pattern.test(line.message)).length,
  };
}

describe.skipIf(!redisServer && 'no redis-server')(
  'a Redis of its own stopped and restarted under load (issue 15, faults)',
  () => {
    // The limiters and key caches read this clock: cache entries never expire by themselves here,
    // so only a message through Redis (or a reconnection) can make an app forget a revoked key.
    const clock = manualClock();
    let dir: string;
    let url: string;
    let port: number;
    let redis: ChildProcess | undefined;
    let first: TestApp;
    let second: TestApp;
    const firstLog = recorder();
    const secondLog = recorder();

    async function startRedis() {
      redis = spawn(
        redisServer!,
        ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
        { stdio: 'ignore' },
      );
      await waitUntil(() => answersPing(url), 'our redis-server to answer PING', 20_000);
    }
    async function stopRedis() {
      const child = redis!;
      redis = undefined;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    }

    beforeAll(async () => {
      dir = mkdtempSync(path.join(os.tmpdir(), 'devapi-redis-'));
      port = await freePort();
      url = `redis://127.0.0.1:${port}`;
      await startRedis();
      const config = {
        REDIS_URL: url,
        RATE_LIMIT_TEST_PER_MINUTE: String(LIMIT),
        RATE_LIMIT_LIVE_PER_MINUTE: '1000000',
      };
      first = await startTestApp({ routes: [probeRoutes], config, clock, log: firstLog.log });
      second = await startTestApp({
        routes: [probeRoutes],
        config,
        clock,
        log: secondLog.log,
        testDatabase: sharedDatabase(first.testDatabase),
      });
    });
    afterAll(async () => {
      await second?.close();
      await first?.close();
      if (redis) await stopRedis();
      rmSync(dir, { recursive: true, force: true });
    });

    /** `count` requests alternating between the apps; the remaining counts they were told. */
    async function alternate(key: string, count: number): Promise<number[]> {
      const remaining: number[] = [];
      for (let i = 0; i < count; i++) {
        const response = await (i % 2 === 0 ? first : second).request('GET', READ, { key });
        expectStatus(response, 200);
        remaining.push(Number(response.headers.get('x-ratelimit-remaining')));
      }
      return remaining;
    }

    const publishableTest = (business: TestBusiness) =>
      business.keyRecords.find((k) => k.kind === 'publishable' && k.environment === 'test')!;

    test('the API keeps serving with per-process limits, logs it once, and shares limits and revocations again after', async () => {
      const business = await first.createBusiness();
      const shared = await first.createBusiness();
      // Redis up: one count for both apps.
      assert.deepEqual(await alternate(shared.keys.secretTest, 4), [29, 28, 27, 26]);

      // Load on both apps through the outage (live keys, whose limit is out of reach).
      const statuses = new Map<number, number>();
      let running = true;
      const lane = async (app: TestApp) => {
        while (running) {
          const response = await app.request('GET', READ, { key: business.keys.secretLive });
          statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
          // Pacing the load, not waiting for a state.
          await new Promise((resolve) => setTimeout(resolve, 2));
        }
      };
      const lanes = [lane(first), lane(second), lane(first), lane(second)];
      const answered = () => [...statuses.values()].reduce((sum, n) => sum + n, 0);
      await waitUntil(() => answered() >= 40, 'load before the outage');

      await stopRedis();
      const atStop = answered();
      await waitUntil(() => answered() >= atStop + 200, 'two hundred answers while Redis is down', 60_000);

      // Each process now counts on its own: a fresh test key gets LIMIT on each app.
      const perProcess = await first.createBusiness();
      for (const app of [first, second]) {
        for (let i = 0; i < LIMIT; i++) {
          const response = await app.request('GET', READ, { key: perProcess.keys.secretTest });
          expectStatus(response, 200);
          assert.equal(response.headers.get('x-ratelimit-remaining'), String(LIMIT - i - 1));
        }
        expectError(await app.request('GET', READ, { key: perProcess.keys.secretTest }), 429, 'RATE_LIMITED');
      }
      // Said once per process, not once per request.
      for (const log of [firstLog, secondLog]) {
        assert.equal(
          log.count(/Redis is unavailable: rate limits are counted per API process/),
          1,
          JSON.stringify(log.lines),
        );
        assert.equal(log.lines.filter((line) => line.level === 'warn').length, 1, JSON.stringify(log.lines));
      }

      // A revocation while Redis is down reaches the other app only when Redis is back (the clock
      // stands still, so its cache entry cannot expire).
      expectStatus(await second.request('GET', READ, { key: business.keys.publishableTest }), 200);
      expectStatus(await first.admin('POST', `/keys/${publishableTest(business).id}/revoke`), 200);
      expectStatus(await second.request('GET', READ, { key: business.keys.publishableTest }), 200);

      await startRedis();
      const refused = await waitUntil(
        async () => {
          const response = await second.request('GET', READ, { key: business.keys.publishableTest });
          // 200, or 429 once these polls used up the key's limit (the clock stands still): either
          // way the second app still takes the key for active; a revoked key is refused before
          // any limit is counted.
          return response.status === 200 || response.status === 429 ? undefined : response;
        },
        'the revocation missed during the outage to reach the second app once Redis is back',
        60_000,
      );
      expectError(refused, 403, 'API_ACCESS_NOT_ACTIVE');

      // Shared limits again: a fresh key counts once across both apps.
      await waitUntil(
        () => first.runtime.redis?.status === 'ready' && second.runtime.redis?.status === 'ready',
        'both apps to reconnect to Redis',
        60_000,
      );
      const again = await first.createBusiness();
      assert.deepEqual(
        await alternate(again.keys.secretTest, LIMIT),
        Array.from({ length: LIMIT }, (_, i) => LIMIT - i - 1),
      );
      expectError(await first.request('GET', READ, { key: again.keys.secretTest }), 429, 'RATE_LIMITED');
      expectError(await second.request('GET', READ, { key: again.keys.secretTest }), 429, 'RATE_LIMITED');

      // And a revocation now reaches the other app at once through Redis.
      const fresh = await first.createBusiness();
      expectStatus(await second.request('GET', READ, { key: fresh.keys.publishableTest }), 200);
      expectStatus(await first.admin('POST', `/keys/${publishableTest(fresh).id}/revoke`), 200);
      const refusedAgain = await waitUntil(async () => {
        const response = await second.request('GET', READ, { key: fresh.keys.publishableTest });
        return response.status === 200 ? undefined : response;
      }, 'the revocation to reach the second app through Redis');
      expectError(refusedAgain, 403, 'API_ACCESS_NOT_ACTIVE');

      running = false;
      await Promise.all(lanes);
      // Through it all the load was served: only 200s, never a 5xx or a hang.
      assert.deepEqual([...statuses.keys()], [200], JSON.stringify([...statuses]));
      for (const log of [firstLog, secondLog]) {
        assert.equal(log.count(/Redis answers again: rate limits are shared/), 1, JSON.stringify(log.lines));
        assert.equal(log.count(/Redis is unavailable/), 1, JSON.stringify(log.lines));
      }
    });
  },
);
