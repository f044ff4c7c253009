import type { FastifyReply } from 'fastify';
import type { Redis } from 'ioredis';
import { ApiError } from './errors.js';

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

/** Where the limiters say that they changed how they count (the server's logger). */
export interface LimiterLog {
  warn(message: string): void;
  info(message: string): void;
}

/**
 * The same windows counted in Redis, so every API process enforces one limit per key. While Redis
 * is away, each process counts on its own (a limit per process instead of one for all; a cache
 * outage must not take the payment API down with it) and says so once in the log; with Redis
 * back, counting goes back to Redis and that is logged once too. Commands are not queued while
 * disconnected (see connectRedis), so an outage costs no waiting.
 */
export class RedisRateLimiter implements RateLimiter {
  private readonly local: MemoryRateLimiter;
  private degraded = false;
  /** Hits are numbered as they are sent; an answer to one sent before the outage began proves nothing. */
  private sent = 0;
  private degradedAt = 0;

  constructor(
    private readonly redis: Redis,
    private readonly now: Clock = Date.now,
    private readonly log: LimiterLog = { warn: () => {}, info: () => {} },
  ) {
    this.local = new MemoryRateLimiter(now);
  }

  async hit(subject: string, limit: number): Promise<RateLimitDecision> {
    const now = this.now();
    const windowStart = now - (now % WINDOW_MS);
    const sequence = ++this.sent;
    if (this.redis.status === 'ready') {
      try {
        const count = Number(
          await this.redis.eval(INCREMENT_SCRIPT, 1, `ratelimit:${subject}:${windowStart}`, String(WINDOW_MS + 5000)),
        );
        // Only an answer to a hit sent after the outage began says Redis is back: one in flight
        // when it went away can still come in late.
        if (this.degraded && sequence > this.degradedAt) {
          this.degraded = false;
          this.log.info('Redis answers again: rate limits are shared by every API process again');
        }
        return decide(count, limit, windowStart, now);
      } catch {
        // Counted below, in this process.
      }
    }
    if (!this.degraded) {
      this.degraded = true;
      this.degradedAt = this.sent;
      this.log.warn('Redis is unavailable: rate limits are counted per API process until it is back');
    }
    return this.local.hit(subject, limit);
  }

  async close(): Promise<void> {}
}

/**
 * Counts one hit of a customer-side limit (the hosted pages and their JSON API have no key: they
 * are limited per address and per wallet) and says so in the X-RateLimit headers, whatever the
 * answer (a 404 or a wrong PIN included). With two limits on one request, the headers show the one
 * closer to its end. Over the limit: 429 RATE_LIMITED with Retry-After.
 */
export async function hitCustomerLimit(
  limiter: RateLimiter,
  reply: FastifyReply,
  key: string,
  perMinute: number,
): Promise<void> {
  const decision = await limiter.hit(key, perMinute);
  const shown = reply.getHeader('X-RateLimit-Remaining');
  if (shown === undefined || decision.remaining < Number(shown)) {
    reply.header('X-RateLimit-Limit', String(decision.limit));
    reply.header('X-RateLimit-Remaining', String(decision.remaining));
    reply.header('X-RateLimit-Reset', String(decision.resetSeconds));
  }
  if (!decision.allowed) {
    throw new ApiError('RATE_LIMITED', 'Too many attempts. Wait a moment and try again.', undefined, {
      'Retry-After': String(decision.resetSeconds),
    });
  }
}

/** A page's limit: false (and the Retry-After header set) when the page must say "too many attempts". */
export async function pageWithinLimit(reply: FastifyReply, hit: () => Promise<void>): Promise<boolean> {
  try {
    await hit();
    return true;
  } catch (error) {
    if (!(error instanceof ApiError) || error.code !== 'RATE_LIMITED') throw error;
    for (const [name, value] of Object.entries(error.headers ?? {})) reply.header(name, value);
    return false;
  }
}
