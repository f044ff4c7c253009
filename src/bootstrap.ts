import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { adminTokenFile } from './lib/admin-token-file.js';
import { LocalDiskStorage } from './lib/media-storage.js';
import { ensureSandboxWallets } from './modules/sandbox/sandbox.js';
import type { Redis } from 'ioredis';
import { sql } from 'kysely';
import type { Config } from './config.js';
import type { Database } from './db/connect.js';
import { openConfiguredDatabase } from './db/configured.js';
import { migrate } from './db/migrate.js';
import type { AppServices } from './http/context.js';
import { MemoryRateLimiter, RedisRateLimiter, type LimiterLog } from './http/rate-limit.js';
import { connectRedis } from './lib/redis.js';
import {
  createBusiness,
  DEMO_BUSINESS_ID,
  DEMO_BUSINESS_NAME,
  type CreatedBusiness,
} from './modules/businesses/service.js';
import { CacheInvalidationBus } from './modules/keys/invalidation.js';
import { KeyCache } from './modules/keys/key-cache.js';

export interface Runtime extends AppServices {
  redis: Redis | undefined;
  close(): Promise<void>;
}

/** The admin token: from ADMIN_TOKEN, else the one saved in the data directory, else a new one. */
export function resolveAdminToken(config: Config): { token: string; generated: boolean } {
  if (config.adminToken) return { token: config.adminToken, generated: false };
  const file = adminTokenFile(config.dataDir);
  if (existsSync(file)) return { token: readFileSync(file, 'utf8').trim(), generated: false };
  mkdirSync(config.dataDir, { recursive: true });
  const token = `adm_${randomBytes(24).toString('hex')}`;
  writeFileSync(file, `${token}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  return { token, generated: true };
}

/**
 * Opens everything the API and worker share; migrations are applied before anything is served.
 * `progress` hears one line per step (the server prints them for whoever watches it start).
 */
export async function createRuntime(
  config: Config,
  /** `now`: the clock of the key cache and the rate limits (tests move it instead of waiting). */
  options: {
    database?: Database;
    adminToken?: string;
    progress?: (step: string) => void;
    now?: () => number;
    /** Where the rate limiter says it counts per process (Redis away) and shared again. */
    log?: LimiterLog;
  } = {},
): Promise<Runtime> {
  const progress = options.progress ?? (() => {});
  const database = options.database ?? (await openConfiguredDatabase(config, { progress, log: options.log }));
  progress('applying migrations');
  const applied = await migrate(database);
  progress(applied.length > 0 ? `  applied ${applied.join(', ')}` : '  the schema is up to date');
  const redis = config.redisUrl ? await connectRedis(config.redisUrl) : undefined;
  const keyCache = new KeyCache(database.db, config.keyCacheTtlMs, options.now);
  const invalidation = new CacheInvalidationBus(redis, () => keyCache.clear());
  await invalidation.start();
  const rateLimiter = redis
    ? new RedisRateLimiter(redis, options.now, options.log)
    : new MemoryRateLimiter(options.now);
  await ensureSandboxWallets(database.db);
  return {
    config,
    database,
    db: database.db,
    keyCache,
    rateLimiter,
    invalidation,
    media: new LocalDiskStorage(path.join(config.dataDir, 'media')),
    redis,
    adminToken: options.adminToken ?? resolveAdminToken(config).token,
    async close() {
      await invalidation.close();
      redis?.disconnect();
      await database.close();
    },
  };
}

/**
 * On an empty database, creates a demo business so a fresh install can be tried at once. The
 * advisory lock makes processes starting together seed it once. Returns it only when created.
 */
export async function seedDemoBusiness(runtime: Runtime): Promise<CreatedBusiness | null> {
  const { db } = runtime;
  const hasBusiness = await db.selectFrom('businesses').select('id').limit(1).executeTakeFirst();
  if (hasBusiness) return null;
  return db.transaction().execute(async (trx) => {
    await sql`SELECT pg_advisory_xact_lock(7243002)`.execute(trx);
    const again = await trx.selectFrom('businesses').select('id').limit(1).executeTakeFirst();
    if (again) return null;
    // Sandbox keys only, like any business not approved for live (approve-live issues the rest).
    return createBusiness(trx, { id: DEMO_BUSINESS_ID, name: DEMO_BUSINESS_NAME, liveKeys: false });
  });
}
