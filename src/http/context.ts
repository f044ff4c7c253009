import type { Kysely } from 'kysely';
import type { Config } from '../config.js';
import type { MediaStorage } from '../lib/media-storage.js';
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
  /** Uploaded files (product images). */
  media: MediaStorage;
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
    /** An `inline` route's key is not claimed yet: an error answer claims it before it is stored. */
    idempotencyPending: boolean;
  }
  interface FastifyContextConfig {
    auth?: RouteAuth;
    scope?: Scope;
    sandboxOnly?: boolean;
    /**
     * `auto`: the key is claimed before the handler runs. `manual`: the handler claims it once it
     * has read the body (file uploads). `inline`: the handler's single write statement claims it
     * (one round trip and one commit for the whole write); an error answer claims it first.
     */
    idempotency?: 'auto' | 'manual' | 'inline';
  }
  interface FastifyInstance {
    services: AppServices;
  }
}

export function requireAuth(auth: AuthContext | undefined): AuthContext {
  if (!auth) throw new Error('route reached without authentication: check its config.auth');
  return auth;
}
