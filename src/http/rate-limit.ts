import type { FastifyReply } from 'fastify';
import type { Redis } from 'ioredis';
import {
  RateLimiterMemory,
  RateLimiterRedis,
  type RateLimiterAbstract,
  type RateLimiterRes,
} from 'rate-limiter-flexible';
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
}

/** Milliseconds since the epoch. Tests pass a clock they move, to cross a window without waiting. */
export type Clock = () => number;

/** Where the limiter says that it changed how it counts (the server's logger). */
export interface LimiterLog {
  warn(message: string): void;
  info(message: string): void;
}

const WINDOW_MS = 60_000;
/**
 * A counter outlives its window by a few seconds, so processes whose clocks differ a little still
 * share it; then its store drops it (a timer in memory, a TTL in Redis), one counter at a time.
 */
const KEPT_SECONDS = WINDOW_MS / 1000 + 5;
/** Counters are `ratelimit:{subject}:{windowStart}`: a fixed wall-clock minute per key. */
const KEY_PREFIX = 'ratelimit';

/**
 * The library counts and the limit is decided here: the limit depends on the subject (a key's
 * environment, the customer pages, the sign-in) while the library fixes one (`points`) per
 * limiter. One limiter per store gives a subject one counter whatever limit it is counted under,
 * as one Redis key does; with these points the library never refuses a hit itself.
 */
const COUNTER = { points: Number.MAX_SAFE_INTEGER, duration: KEPT_SECONDS, keyPrefix: KEY_PREFIX };

/**
 * Counts one hit in the fixed one-minute window of `now` (the documented contract, and what
 * X-RateLimit-Reset counts down). The window's start is part of the counter's key, so a new minute
 * is a new counter: the library's own window, which starts at a key's first hit, never decides.
 * `marker` is handed to whichever limiter counts the hit (see InsuranceCounter).
 */
async function hitWindow(
  counter: RateLimiterAbstract,
  subject: string,
  limit: number,
  now: number,
  marker: object = {},
): Promise<RateLimitDecision> {
  const windowStart = now - (now % WINDOW_MS);
  const { consumedPoints } = await counter.consume(`${subject}:${windowStart}`, 1, marker);
  return {
    allowed: consumedPoints <= limit,
    limit,
    remaining: Math.max(0, limit - consumedPoints),
    resetSeconds: Math.max(1, Math.ceil((windowStart + WINDOW_MS - now) / 1000)),
  };
}

/**
 * Counters kept in one process's memory at most: twice the 50,000 subjects at which the
 * hand-written limiter cleared them all, some 30 MB (a counter and its expiry timer each).
 */
export const MEMORY_COUNTERS_CAP = 100_000;

/**
 * The library's memory store, bounded: past `capacity` counters, the one hit least recently is
 * dropped (that subject alone starts counting again), never every counter at once. A subject
 * that keeps hitting stays counted, however many others come and go; counters the library
 * already dropped (65 s after their first hit) leave the order as they come to its front.
 */
class BoundedMemoryCounter extends RateLimiterMemory {
  /** Counter keys, least recently hit first, with when the library drops them. */
  private readonly recent = new Map<string, number>();

  constructor(private readonly capacity: number) {
    super(COUNTER);
  }

  override consume(key: string | number, points?: number, options: object = {}): Promise<RateLimiterRes> {
    const name = String(key);
    const realNow = Date.now();
    const dropsAt = this.recent.get(name) ?? realNow + KEPT_SECONDS * 1000;
    this.recent.delete(name);
    this.recent.set(name, dropsAt);
    for (const [oldest, oldestDropsAt] of this.recent) {
      const expired = oldestDropsAt <= realNow;
      if (!expired && this.recent.size <= this.capacity) break;
      this.recent.delete(oldest);
      if (!expired) void this.delete(oldest);
    }
    return super.consume(key, points, options);
  }
}

/** Counted in this process's memory: right for a single API process. */
export class MemoryRateLimiter implements RateLimiter {
  private readonly counter: BoundedMemoryCounter;

  constructor(
    private readonly now: Clock = Date.now,
    capacity = MEMORY_COUNTERS_CAP,
  ) {
    this.counter = new BoundedMemoryCounter(capacity);
  }

  hit(subject: string, limit: number): Promise<RateLimitDecision> {
    return hitWindow(this.counter, subject, limit, this.now());
  }
}

/**
 * The memory limiter RateLimiterRedis turns to when Redis fails a hit. The library hands it the
 * hit's own options object, which it notes: that is how a hit learns who counted it.
 */
class InsuranceCounter extends BoundedMemoryCounter {
  constructor(private readonly countedHere: WeakSet<object>) {
    super(MEMORY_COUNTERS_CAP);
  }

  override consume(key: string | number, points?: number, options: object = {}): Promise<RateLimiterRes> {
    this.countedHere.add(options);
    return super.consume(key, points, options);
  }
}

/**
 * The same windows counted in Redis, so every API process enforces one limit per key. While Redis
 * is away, each process counts on its own in the insurance limiter (a limit per process instead
 * of one for all; a cache outage must not take the payment API down with it) and says so once in
 * the log; with Redis back, counting goes back to Redis and that is logged once too. A hit is not
 * sent while the client is not ready, and commands are not queued while disconnected (see
 * connectRedis), so an outage costs no waiting.
 */
export class RedisRateLimiter implements RateLimiter {
  private readonly countedHere = new WeakSet<object>();
  private readonly counter: RateLimiterRedis;
  private degraded = false;
  /** Hits are numbered as they are sent; an answer to one sent before the outage began proves nothing. */
  private sent = 0;
  private degradedAt = 0;

  constructor(
    redis: Redis,
    private readonly now: Clock = Date.now,
    private readonly log: LimiterLog = { warn: () => {}, info: () => {} },
  ) {
    this.counter = new RateLimiterRedis({
      ...COUNTER,
      storeClient: redis,
      rejectIfRedisNotReady: true,
      insuranceLimiter: new InsuranceCounter(this.countedHere),
    });
  }

  async hit(subject: string, limit: number): Promise<RateLimitDecision> {
    const sequence = ++this.sent;
    const marker = {};
    const decision = await hitWindow(this.counter, subject, limit, this.now(), marker);
    if (this.countedHere.has(marker)) {
      if (!this.degraded) {
        this.degraded = true;
        this.degradedAt = this.sent;
        this.log.warn('Redis is unavailable: rate limits are counted per API process until it is back');
      }
    } else if (this.degraded && sequence > this.degradedAt) {
      // Only an answer from Redis to a hit sent after the outage began says Redis is back: one in
      // flight when it went away can still come in late.
      this.degraded = false;
      this.log.info('Redis answers again: rate limits are shared by every API process again');
    }
    return decision;
  }
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
