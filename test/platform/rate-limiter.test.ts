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
    // The hand-written limiter cleared every counter once it tracked 50,000 subjects.
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
      'counts under the keys the hand-written limiter used, kept 65 s',
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
  });
});
