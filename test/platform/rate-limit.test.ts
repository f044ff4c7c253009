import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { manualClock } from '../support/clock.js';
import {
  expectError,
  expectStatus,
  sharedDatabase,
  startTestApp,
  waitUntil,
  type TestApp,
} from '../support/harness.js';
import { probeRoutes } from '../support/probe-routes.js';
import { testRedisUrl } from '../support/redis.js';

const READ = '/api/v1/dev/probe/read';

// The limiters read this clock: a run of requests stays in one window until the test moves it.
const clock = manualClock();

async function exhaust(t: TestApp, key: string, limit: number) {
  for (let i = 0; i < limit; i++) {
    const response = await t.request('GET', READ, { key });
    expectStatus(response, 200);
    assert.equal(response.headers.get('x-ratelimit-limit'), String(limit));
    assert.equal(response.headers.get('x-ratelimit-remaining'), String(limit - i - 1));
    const reset = Number(response.headers.get('x-ratelimit-reset'));
    assert.ok(reset >= 1 && reset <= 60, `reset ${reset}`);
  }
  return t.request('GET', READ, { key });
}

function expectLimited(response: Awaited<ReturnType<TestApp['request']>>) {
  expectError(response, 429, 'RATE_LIMITED');
  const retryAfter = Number(response.headers.get('retry-after'));
  assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
  assert.equal(response.headers.get('x-ratelimit-remaining'), '0');
}

describe('rate limits in one process', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ routes: [probeRoutes], clock });
  });
  afterAll(() => t.close());

  test('a test key gets 100 requests a minute, then 429 RATE_LIMITED with Retry-After', async () => {
    const business = await t.createBusiness();
    expectLimited(await exhaust(t, business.keys.secretTest, 100));
    // Limits are per key: the business's other key is unaffected.
    expectStatus(await t.request('GET', READ, { key: business.keys.publishableTest }), 200);
    // The next minute is a new window.
    clock.advance(60_000);
    const next = await t.request('GET', READ, { key: business.keys.secretTest });
    expectStatus(next, 200);
    assert.equal(next.headers.get('x-ratelimit-remaining'), '99');
  });

  test('a live key gets 1000 a minute', async () => {
    const business = await t.createBusiness();
    const response = await t.request('GET', READ, { key: business.keys.secretLive });
    expectStatus(response, 200);
    assert.equal(response.headers.get('x-ratelimit-limit'), '1000');
    assert.equal(response.headers.get('x-ratelimit-remaining'), '999');
  });

  test('refused keys are not counted against anyone and get no rate-limit headers', async () => {
    const response = await t.request('GET', READ, { key: 'sk_test_' + 'B'.repeat(40) });
    expectError(response, 401, 'INVALID_API_KEY');
    assert.equal(response.headers.get('x-ratelimit-limit'), null);
  });
});

describe('rate limits shared through Redis', async () => {
  const redisUrl = await testRedisUrl();
  let first: TestApp;
  let second: TestApp;
  beforeAll(async () => {
    if (!redisUrl) return;
    first = await startTestApp({
      routes: [probeRoutes],
      config: { REDIS_URL: redisUrl, RATE_LIMIT_TEST_PER_MINUTE: '30' },
      clock,
    });
    // A second app with its own runtime (own Redis client, own caches) on the same database.
    second = await startTestApp({
      routes: [probeRoutes],
      config: { REDIS_URL: redisUrl, RATE_LIMIT_TEST_PER_MINUTE: '30' },
      clock,
      testDatabase: sharedDatabase(first.testDatabase),
    });
  });
  afterAll(async () => {
    await second?.close();
    await first?.close();
  });

  test.skipIf(!redisUrl && 'no Redis reachable (set TEST_REDIS_URL)')('two apps count one limit per key', async () => {
    const business = await first.createBusiness();
    for (let i = 0; i < 30; i++) {
      const app = i % 2 === 0 ? first : second;
      const response = await app.request('GET', READ, { key: business.keys.secretTest });
      expectStatus(response, 200);
      assert.equal(response.headers.get('x-ratelimit-remaining'), String(29 - i));
    }
    expectLimited(await first.request('GET', READ, { key: business.keys.secretTest }));
    expectLimited(await second.request('GET', READ, { key: business.keys.secretTest }));
  });

  test.skipIf(!redisUrl && 'no Redis reachable')(
    'a revocation on one app reaches the other at once through Redis',
    async () => {
      const business = await first.createBusiness();
      expectStatus(await second.request('GET', READ, { key: business.keys.publishableTest }), 200); // cached there
      const record = business.keyRecords.find((k) => k.kind === 'publishable' && k.environment === 'test')!;
      expectStatus(await first.admin('POST', `/keys/${record.id}/revoke`), 200);
      // The clock stands still, so the second app's cache entry cannot expire: only the message
      // through Redis can make it refuse the key.
      const refused = await waitUntil(async () => {
        const response = await second.request('GET', READ, { key: business.keys.publishableTest });
        return response.status === 200 ? undefined : response;
      }, 'the revocation to reach the second app');
      expectError(refused, 403, 'API_ACCESS_NOT_ACTIVE');
    },
  );
});
