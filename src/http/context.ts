import type { Kysely } from 'kysely';
import type { Config } from '../config.js';
import type { Database } from '../db/connect.js';
import type { DB, Environment, KeyKind } from '../db/schema.js';
import type { KeyCache } from '../modules/keys/key-cache.js';
import type { CacheInvalidationBus } from '../modules/keys/invalidation.js';
import type { Scope } from '../modules/keys/scopes.js';
import type { IdempotencyClaim } from './idempotency.js';
import type { RateLimiter } from './rate-limit.js';

/** Who is calling, as established by the auth hook. */
export interface AuthContext {
  keyId: string;
  businessId: string;
  environment: Environment;
  kind: KeyKind;
  scopes: readonly string[];
  sandbox: boolean;
}

/** What the app needs from the process: built once by the server (or a test harness). */
export interface AppServices {
  config: Config;
  database: Database;
  db: Kysely<DB>;
  keyCache: KeyCache;
  rateLimiter: RateLimiter;
  invalidation: CacheInvalidationBus;
  /** Where the admin token came from, for the startup banner. */
  adminToken: string;
}

/**
 * `secret`: secret keys only. `publishable`: secret or publishable (read endpoints).
 * `none`: no API key (health, docs, hosted pages, admin has its own token).
 */
export type RouteAuth = 'secret' | 'publishable' | 'none';

declare module 'fastify' {
  interface FastifyRequest {
    auth: AuthContext | undefined;
    idempotency: IdempotencyClaim | undefined;
  }
  interface FastifyContextConfig {
    auth?: RouteAuth;
    scope?: Scope;
    sandboxOnly?: boolean;
    /** `manual`: the handler claims the key itself once it has read the body (file uploads). */
    idempotency?: 'auto' | 'manual';
  }
  interface FastifyInstance {
    services: AppServices;
  }
}

export function requireAuth(auth: AuthContext | undefined): AuthContext {
  if (!auth) throw new Error('route reached without authentication: check its config.auth');
  return auth;
}
