import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { afterAll, describe, test } from 'vitest';
import { MemoryRateLimiter, RedisRateLimiter } from '../../src/http/rate-limit.js';
import { connectRedis } from '../../src/lib/redis.js';
import { manualClock } from '../support/clock.js';
import { testRedisUrl } from '../support/redis.js';

describe('the rate limiter on its own (issue 34, item 6)', () => {
  test('in memory, a subject keeps its count however many other subjects are counted', async () => {
    const clock = manualClock();
    const limiter = new MemoryRateLimiter(clock);
    for (let i = 0; i < 3; i++) await limiter.hit('kept', 5);
    // Past 50,000 subjects, a limiter that cleared every counter at once would forget this one.
    for (let i = 0; i < 50_010; i++) await limiter.hit(`other-${i}`, 5);
    assert.deepEqual(await limiter.hit('kept', 5), { allowed: true, limit: 5, remaining: 1, resetSeconds: 30 });
    assert.equal((await limiter.hit('kept', 5)).remaining, 0);
    assert.deepEqual(await limiter.hit('kept', 5), { allowed: false, limit: 5, remaining: 0, resetSeconds: 30 });
    // A new minute of the clock is a new window.
    clock.advance(45_000);
    assert.deepEqual(await limiter.hit('kept', 5), { allowed: true, limit: 5, remaining: 4, resetSeconds: 45 });
  });

  test('in memory, past its cap the counter hit least recently is dropped, and only that one', async () => {
    const clock = manualClock();
    const limiter = new MemoryRateLimiter(clock, 1000);
    for (let i = 0; i < 6; i++) await limiter.hit('abuser', 5);
    await limiter.hit('idle', 5);
    // 1,500 other subjects, more than the cap, while the limited subject keeps hitting.
    for (let i = 0; i < 1500; i++) {
      await limiter.hit(`other-${i}`, 5);
      if (i % 100 === 0) assert.equal((await limiter.hit('abuser', 5)).allowed, false, `after ${i} others`);
    }
    assert.equal((await limiter.hit('abuser', 5)).allowed, false, 'a subject that keeps hitting stays counted');
    assert.equal((await limiter.hit('other-1499', 5)).remaining, 3, 'a recent counter is kept');
    assert.equal((await limiter.hit('idle', 5)).remaining, 4, 'the least recently hit counter was dropped');
    assert.equal((await limiter.hit('other-0', 5)).remaining, 4, 'so was the oldest of the others');
  });

  test('one count per subject, whatever limit it is counted under', async () => {
    const limiter = new MemoryRateLimiter(manualClock());
    await limiter.hit('wallet', 20);
    assert.equal((await limiter.hit('wallet', 30)).remaining, 28);
  });

  describe('in Redis', async () => {
    const redisUrl = await testRedisUrl();
    const redis = redisUrl ? await connectRedis(redisUrl) : undefined;
    afterAll(() => redis?.disconnect());

    test.skipIf(!redis && 'no Redis reachable (set TEST_REDIS_URL)')(
      'counts under ratelimit:{subject}:{windowStart}, kept 65 s',
      async () => {
        const clock = manualClock();
        const limiter = new RedisRateLimiter(redis!, clock);
        const subject = `test-${randomUUID()}`;
        assert.equal((await limiter.hit(subject, 3)).remaining, 2);
        assert.equal((await limiter.hit(subject, 3)).remaining, 1);
        const windowStart = clock() - (clock() % 60_000);
        const key = `ratelimit:${subject}:${windowStart}`;
        assert.equal(await redis!.get(key), '2');
        const ttl = await redis!.pttl(key);
        assert.ok(ttl > 60_000 && ttl <= 65_000, `ttl ${ttl}`);
        await redis!.del(key);
      },
    );

    test.skipIf(!redis && 'no Redis reachable (set TEST_REDIS_URL)')(
      'a command Redis fails while connected is counted in memory and logged once; the next answer ends it',
      async () => {
        const clock = manualClock();
        const said: string[] = [];
        const log = {
          warn: (line: string) => said.push(`warn: ${line}`),
          info: (line: string) => said.push(`info: ${line}`),
        };
        const limiter = new RedisRateLimiter(redis!, clock, log);
        const broken = `test-${randomUUID()}`;
        const windowStart = clock() - (clock() % 60_000);
        // A value INCRBY cannot add to: Redis answers an error, the client stays ready.
        await redis!.set(`ratelimit:${broken}:${windowStart}`, 'not a number', 'PX', 65_000);
        assert.equal(redis!.status, 'ready');
        assert.equal((await limiter.hit(broken, 3)).remaining, 2);
        assert.equal((await limiter.hit(broken, 3)).remaining, 1);
        assert.equal(said.length, 1);
        assert.match(said[0]!, /^warn: Redis is unavailable/);
        const healthy = `test-${randomUUID()}`;
        assert.equal((await limiter.hit(healthy, 3)).remaining, 2);
        assert.equal(said.length, 2);
        assert.match(said[1]!, /^info: Redis answers again/);
        await redis!.del(`ratelimit:${broken}:${windowStart}`, `ratelimit:${healthy}:${windowStart}`);
      },
    );
  });
});
