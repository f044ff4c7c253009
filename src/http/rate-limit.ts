import type { Redis } from 'ioredis';

export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the current window ends and the count starts again. */
  resetSeconds: number;
}

export interface RateLimiter {
  hit(subject: string, limitPerMinute: number): Promise<RateLimitDecision>;
  close(): Promise<void>;
}

const WINDOW_MS = 60_000;

function decide(count: number, limit: number, windowStart: number, now: number): RateLimitDecision {
  return {
    allowed: count <= limit,
    limit,
    remaining: Math.max(0, limit - count),
    resetSeconds: Math.max(1, Math.ceil((windowStart + WINDOW_MS - now) / 1000)),
  };
}

/** Milliseconds since the epoch. Tests pass a clock they move, to cross a window without waiting. */
export type Clock = () => number;

/** Fixed one-minute windows counted in this process: right for a single API process. */
export class MemoryRateLimiter implements RateLimiter {
  private readonly counts = new Map<string, { windowStart: number; count: number }>();

  constructor(private readonly now: Clock = Date.now) {}

  async hit(subject: string, limit: number): Promise<RateLimitDecision> {
    const now = this.now();
    const windowStart = now - (now % WINDOW_MS);
    let entry = this.counts.get(subject);
    if (!entry || entry.windowStart !== windowStart) {
      if (this.counts.size > 50_000) this.counts.clear();
      entry = { windowStart, count: 0 };
      this.counts.set(subject, entry);
    }
    entry.count += 1;
    return decide(entry.count, limit, windowStart, now);
  }

  async close(): Promise<void> {}
}

const INCREMENT_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return count`;

/**
 * The same windows counted in Redis, so every API process enforces one limit per key. If Redis
 * does not answer, the request is let through (and logged by the caller): a cache outage must
 * not take the payment API down with it.
 */
export class RedisRateLimiter implements RateLimiter {
  constructor(
    private readonly redis: Redis,
    private readonly now: Clock = Date.now,
  ) {}

  async hit(subject: string, limit: number): Promise<RateLimitDecision> {
    const now = this.now();
    const windowStart = now - (now % WINDOW_MS);
    const count = Number(
      await this.redis.eval(INCREMENT_SCRIPT, 1, `ratelimit:${subject}:${windowStart}`, String(WINDOW_MS + 5000)),
    );
    return decide(count, limit, windowStart, now);
  }

  async close(): Promise<void> {}
}
