import type { Kysely } from 'kysely';
import type { Config } from '../config.js';
import type { MediaStorage } from '../lib/media-storage.js';
import type { Database } from '../db/connect.js';
import type { DB, Environment, KeyKind } from '../db/schema.js';
import type { KeyCache } from '../modules/keys/key-cache.js';
import type { CacheInvalidationBus } from '../modules/keys/invalidation.js';
import type { Scope } from '../modules/keys/scopes.js';
import type { RateLimiter } from './rate-limit.js';

/** The business and environment a request acts for (from its API key or dashboard session). */
export interface Caller {
  businessId: string;
  environment: Environment;
}

/** A caller whose key's scopes decide what it may see or subscribe to (events, webhooks). */
export interface ScopedCaller extends Caller {
  scopes: readonly string[];
}

/** Who is calling, as established by the auth hook. */
export interface AuthContext {
  keyId: string;
  /** The key's visible hint (never its secret), for the audit log. */
  keyHint: string;
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
 * `admin`: the operator API, behind the admin token. `none`: no API key (health, docs, pages).
 */
export type RouteAuth = 'secret' | 'publishable' | 'admin' | 'none';

declare module 'fastify' {
  interface FastifyRequest {
    auth: AuthContext | undefined;
    /** The operator API's caller showed the admin token (set by the auth hook). */
    operator: boolean;
  }
  interface FastifyContextConfig {
    auth?: RouteAuth;
    scope?: Scope;
    sandboxOnly?: boolean;
  }
  interface FastifyInstance {
    services: AppServices;
  }
}

export function requireAuth(auth: AuthContext | undefined): AuthContext {
  if (!auth) throw new Error('route reached without authentication: check its config.auth');
  return auth;
}
