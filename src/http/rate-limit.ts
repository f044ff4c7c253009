import type { FastifyReply } from 'fastify';
import type { Redis } from 'ioredis';
import { RateLimiterCompatibleAbstract, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
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
 * share it; then its store drops it (a TTL in Redis, on its next look in memory).
 */
const KEPT_SECONDS = WINDOW_MS / 1000 + 5;
/** Counters are `ratelimit:{subject}:{windowStart}`: a fixed wall-clock minute per key (decision 074). */
const KEY_PREFIX = 'ratelimit';

/** A library limiter of `points` hits per counter: one is made per limit in use, and kept. */
type LimiterOfLimit<L> = (points: number) => L;

function cachedByLimit<L>(make: LimiterOfLimit<L>): LimiterOfLimit<L> {
  const limiters = new Map<number, L>();
  return (points) => {
    let limiter = limiters.get(points);
    if (!limiter) {
      limiter = make(points);
      limiters.set(points, limiter);
    }
    return limiter;
  };
}

/**
 * Counts one hit of `subject` in the fixed one-minute window of `now` (the documented contract,
 * and what X-RateLimit-Reset counts down), with the limiter whose points are the limit: it
 * resolves while the subject is within it and rejects with the same RateLimiterRes past it.
 * Every limiter of a store counts in the same counters, so a subject has one count whatever limit
 * it is counted under.
 */
async function hitWindow(
  limiter: RateLimiterCompatibleAbstract | RateLimiterRedis,
  subject: string,
  limit: number,
  now: number,
): Promise<RateLimitDecision> {
  const windowStart = now - (now % WINDOW_MS);
  let allowed = true;
  let counted: RateLimiterRes;
  try {
    counted = await limiter.consume(`${subject}:${windowStart}`);
  } catch (refusal) {
    if (!(refusal instanceof RateLimiterRes)) throw refusal;
    allowed = false;
    counted = refusal;
  }
  return {
    allowed,
    limit,
    remaining: counted.remainingPoints,
    resetSeconds: Math.max(1, Math.ceil((windowStart + WINDOW_MS - now) / 1000)),
  };
}

/**
 * Counters kept in one process's memory at most: some 30 MB at worst (a key of about 100 bytes
 * and its counter), far more subjects than one process sees in a minute outside a flood.
 */
export const MEMORY_COUNTERS_CAP = 100_000;

/**
 * One process's counters, bounded: past `capacity`, the counter hit least recently is dropped
 * (that subject alone starts counting again), never every counter at once. A subject that keeps
 * hitting stays counted however many others come and go. The library's own memory store keeps
 * every key until its duration ends, so a flood of new subjects (addresses) grows it without
 * bound for 65 s; and it is one store per limiter, where a subject must have one count.
 */
class BoundedCounters {
  /** Least recently hit first (a Map keeps insertion order; a hit re-inserts its counter). */
  private readonly counters = new Map<string, { hits: number; dropsAt: number }>();

  constructor(
    private readonly capacity: number,
    private readonly now: Clock,
  ) {}

  add(key: string, hits: number): RateLimiterRes & { hits: number } {
    const now = this.now();
    const kept = this.counters.get(key);
    this.counters.delete(key);
    const counter = kept && kept.dropsAt > now ? kept : { hits: 0, dropsAt: now + KEPT_SECONDS * 1000 };
    counter.hits += hits;
    this.counters.set(key, counter);
    for (const [oldest, { dropsAt }] of this.counters) {
      if (dropsAt > now && this.counters.size <= this.capacity) break;
      this.counters.delete(oldest);
    }
    return Object.assign(new RateLimiterRes(0, counter.dropsAt - now, counter.hits, counter.hits === hits), {
      hits: counter.hits,
    });
  }
}

/**
 * A limiter of the library's family over BoundedCounters, so the Redis limiter takes it as its
 * insurance. Only `consume` is used here (by us and by RateLimiterRedis on a failed hit); the
 * abstract class answers every other operation with an error.
 */
class BoundedMemoryLimiter extends RateLimiterCompatibleAbstract {
  override readonly keyPrefix = KEY_PREFIX;
  override blockDuration = 0;
  override execEvenly = false;

  constructor(
    private readonly counters: BoundedCounters,
    private readonly points: number,
    private readonly onCount: () => void = () => {},
  ) {
    super();
  }

  override consume(key: string | number, pointsToConsume = 1): Promise<RateLimiterRes> {
    this.onCount();
    const counted = this.counters.add(`${this.keyPrefix}:${key}`, pointsToConsume);
    const res = new RateLimiterRes(
      Math.max(this.points - counted.hits, 0),
      counted.msBeforeNext,
      counted.consumedPoints,
      counted.isFirstInDuration,
    );
    return counted.hits > this.points ? Promise.reject(res) : Promise.resolve(res);
  }
}

function memoryLimiters(now: Clock, capacity: number, onCount?: () => void): LimiterOfLimit<BoundedMemoryLimiter> {
  const counters = new BoundedCounters(capacity, now);
  return cachedByLimit((points) => new BoundedMemoryLimiter(counters, points, onCount));
}

/** Counted in this process's memory: right for a single API process. */
export class MemoryRateLimiter implements RateLimiter {
  private readonly limiterOf: LimiterOfLimit<BoundedMemoryLimiter>;

  constructor(
    private readonly now: Clock = Date.now,
    capacity = MEMORY_COUNTERS_CAP,
  ) {
    this.limiterOf = memoryLimiters(now, capacity);
  }

  hit(subject: string, limit: number): Promise<RateLimitDecision> {
    return hitWindow(this.limiterOf(limit), subject, limit, this.now());
  }
}

/**
 * The same windows counted in Redis, so every API process enforces one limit per key. While Redis
 * is away, each process counts on its own in the library's insurance limiter (a limit per process
 * instead of one for all; a cache outage must not take the payment API down with it) and says so
 * once in the log; with Redis back, counting goes back to Redis and that is logged once too. A hit
 * is not sent while the client is not ready (`rejectIfRedisNotReady`) and commands are not queued
 * while disconnected (see connectRedis), so an outage costs no waiting.
 */
export class RedisRateLimiter implements RateLimiter {
  private readonly limiterOf: LimiterOfLimit<RateLimiterRedis>;
  private degraded = false;
  /** Hits the insurance limiter has counted: Redis refused, timed out or was not ready for them. */
  private countedInMemory = 0;

  constructor(
    private readonly redis: Redis,
    private readonly now: Clock = Date.now,
    private readonly log: LimiterLog = { warn: () => {}, info: () => {} },
  ) {
    const insuranceOf = memoryLimiters(now, MEMORY_COUNTERS_CAP, () => this.countedInMemory++);
    this.limiterOf = cachedByLimit(
      (points) =>
        new RateLimiterRedis({
          storeClient: redis,
          points,
          duration: KEPT_SECONDS,
          keyPrefix: KEY_PREFIX,
          rejectIfRedisNotReady: true,
          insuranceLimiter: insuranceOf(points),
        }),
    );
  }

  async hit(subject: string, limit: number): Promise<RateLimitDecision> {
    const before = this.countedInMemory;
    const decision = await hitWindow(this.limiterOf(limit), subject, limit, this.now());
    this.noteWhereCounted(this.countedInMemory > before);
    return decision;
  }

  /**
   * Whatever made Redis fail a hit (down, not ready, hung past the command timeout, an error
   * while connected), the insurance limiter counted it: that is the outage, logged once; the
   * first hit Redis answers after it ends the outage. Hits run concurrently, so a hit is taken as
   * answered by Redis only if no hit was counted in memory while it ran.
   */
  private noteWhereCounted(inMemory: boolean): void {
    if (inMemory && !this.degraded) {
      this.degraded = true;
      this.log.warn('Redis is unavailable: rate limits are counted per API process until it is back');
    } else if (!inMemory && this.degraded) {
      this.degraded = false;
      this.log.info('Redis answers again: rate limits are shared by every API process again');
    }
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
