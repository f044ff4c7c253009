import assert from 'node:assert/strict';
import type { FastifyPluginAsync } from 'fastify';
import { buildApp, type App } from '../../src/app.js';
import { createRuntime, type Runtime } from '../../src/bootstrap.js';
import { loadConfig, type Config } from '../../src/config.js';
import type { LimiterLog } from '../../src/http/rate-limit.js';
import { developerModules } from '../../src/modules/index.js';
import type { IssuedKey } from '../../src/modules/businesses/keys.js';
import { createTestDatabase, type TestDatabase } from './database.js';
import { checkResponse, takeDrifts } from './openapi-check.js';
import { patience } from './patience.js';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';
/** log2 of scrypt's N for the dashboard passwords of test apps (production: 15). */
export const TEST_PASSWORD_COST = 10;

export interface TestResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  key?: string | undefined;
  body?: unknown;
  /** Sent as-is (no JSON encoding) when given. */
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
  /** `true` sends a fresh random key; a string sends that key. */
  idempotencyKey?: string | true;
}

export interface TestBusiness {
  id: string;
  shopId: string | null;
  keys: { secretTest: string; publishableTest: string; secretLive: string; publishableLive: string };
  keyRecords: IssuedKey[];
}

export interface TestApp {
  app: App;
  runtime: Runtime;
  testDatabase: TestDatabase;
  baseUrl: string;
  request<T = any>(method: string, path: string, options?: RequestOptions): Promise<TestResponse<T>>;
  admin<T = any>(method: string, path: string, body?: unknown): Promise<TestResponse<T>>;
  createBusiness(options?: { approveLive?: boolean; withShop?: boolean; name?: string }): Promise<TestBusiness>;
  close(): Promise<void>;
}

let idempotencyCounter = 0;

export async function sendRequest<T = any>(
  baseUrl: string,
  method: string,
  path: string,
  options: RequestOptions = {},
): Promise<TestResponse<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key !== undefined) headers.authorization = `Bearer ${options.key}`;
  if (options.idempotencyKey !== undefined) {
    headers['x-idempotency-key'] =
      options.idempotencyKey === true
        ? `idem-${process.pid}-${Date.now()}-${++idempotencyCounter}`
        : options.idempotencyKey;
  }
  let body: string | Buffer | undefined;
  if (options.rawBody !== undefined) body = options.rawBody;
  else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(`${baseUrl}${path}`, { method, headers, ...(body !== undefined ? { body } : {}) });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  const drift = checkResponse(baseUrl, {
    method,
    url: path,
    status: response.status,
    contentType: response.headers.get('content-type'),
    text,
  });
  if (drift) assert.fail(drift);
  return { status: response.status, headers: response.headers, body: parsed as T, text };
}

export async function startTestApp(
  options: {
    config?: Record<string, string>;
    /** Settings that do not come from the environment (see Config). */
    configOverrides?: Partial<Config>;
    routes?: FastifyPluginAsync[];
    testDatabase?: TestDatabase;
    /** The clock of the key cache and the rate limits (see test/support/clock.ts). */
    clock?: () => number;
    /** Hears what the runtime logs (the rate limiter's switches to and from per-process counting). */
    log?: LimiterLog;
  } = {},
): Promise<TestApp> {
  const loaded = loadConfig({ LOG_LEVEL: 'silent', SEED_DEMO: 'false', ...options.config });
  const config: Config = {
    ...loaded,
    // A password hash at the production cost takes ~120 ms of CPU, and dashboard tests sign in
    // often; test/dashboard/auth.test.ts checks the production cost itself.
    dashboard: { ...loaded.dashboard, passwordCost: TEST_PASSWORD_COST },
    ...options.configOverrides,
  };
  const testDatabase = options.testDatabase ?? (await createTestDatabase());
  const runtime = await createRuntime(config, {
    database: testDatabase.database,
    adminToken: ADMIN_TOKEN,
    ...(options.clock ? { now: options.clock } : {}),
    ...(options.log ? { log: options.log } : {}),
  });
  const app = await buildApp(runtime, { developerRoutes: [...developerModules, ...(options.routes ?? [])] });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  assert(address && typeof address === 'object');
  const baseUrl = `http://127.0.0.1:${address.port}`;

  const request = <T = any>(method: string, path: string, requestOptions?: RequestOptions) =>
    sendRequest<T>(baseUrl, method, path, requestOptions);

  const admin = <T = any>(method: string, path: string, body?: unknown) =>
    sendRequest<T>(baseUrl, method, `/api/v1/admin${path}`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      ...(body !== undefined ? { body } : {}),
    });

  return {
    app,
    runtime,
    testDatabase,
    baseUrl,
    request,
    admin,
    async createBusiness(businessOptions = {}) {
      const response = await admin('POST', '/businesses', {
        name: businessOptions.name ?? 'Test business',
        approveLive: businessOptions.approveLive ?? true,
        withShop: businessOptions.withShop ?? true,
        // Asked for: an unapproved business's live keys provoke LIVE_ACCESS_NOT_APPROVED.
        liveKeys: true,
      });
      expectStatus(response, 201);
      const keys: IssuedKey[] = response.body.data.keys;
      const find = (kind: string, environment: string) => {
        const key = keys.find((k) => k.kind === kind && k.environment === environment);
        assert(key, `no ${kind} ${environment} key`);
        return key.key;
      };
      return {
        id: response.body.data.business.id,
        shopId: response.body.data.shop?.id ?? null,
        keys: {
          secretTest: find('secret', 'test'),
          publishableTest: find('publishable', 'test'),
          secretLive: find('secret', 'live'),
          publishableLive: find('publishable', 'live'),
        },
        keyRecords: keys,
      };
    },
    async close() {
      // A request the server answered before reading its whole body (a refused upload) keeps its
      // connection busy until the keep-alive timeout (72 s): close every connection now.
      const closing = app.close();
      app.server.closeAllConnections();
      await closing;
      await runtime.close();
      await testDatabase.drop();
      // A drift that a test caught and dropped (a rejected promise it did not await, an SDK call
      // that turned it into an error) still fails the file.
      const drifts = takeDrifts(baseUrl);
      assert.deepEqual(drifts, [], `responses that do not match openapi.json:\n${drifts.join('\n')}`);
    },
  };
}

/** Asserts the status and prints the whole response when it is not the expected one. */
export function expectStatus(response: TestResponse, status: number): void {
  assert.equal(
    response.status,
    status,
    `expected HTTP ${status}, got ${response.status}: ${response.text.slice(0, 2000)}`,
  );
}

/** Asserts an error response: status, code and the full envelope shape. */
export function expectError(response: TestResponse, status: number, code: string): void {
  expectStatus(response, status);
  const body = response.body;
  assert.equal(body?.success, false, `not an error envelope: ${response.text}`);
  assert.equal(body.error.code, code, `expected ${code}: ${response.text}`);
  assert.equal(body.error.statusCode, status, response.text);
  assert.equal(typeof body.error.message, 'string');
  assert.ok(body.error.message.length > 0);
  assert.equal(body.error.requestId, response.headers.get('x-request-id'), 'requestId matches X-Request-Id');
  const allowed = new Set(['code', 'message', 'statusCode', 'requestId', 'details']);
  for (const field of Object.keys(body.error)) assert.ok(allowed.has(field), `unexpected error field ${field}`);
  assert.deepEqual(Object.keys(body).sort(), ['error', 'success']);
  assert.ok(!/\bat .+:\d+:\d+/.test(response.text), `stack trace leaked: ${response.text}`);
}

/**
 * The database of `t` for another app in the same test file: a config variant costs an app, not a
 * new database (give it its own business). Closing the variant leaves the database open.
 */
export function sharedDatabase(testDatabase: TestDatabase): TestDatabase {
  const { database, url } = testDatabase;
  return { database: { ...database, close: async () => {} }, url, drop: async () => {} };
}

/**
 * Polls `check` until it returns a value other than undefined/false, and returns that value.
 * Tests wait for a state this way, never for a fixed time.
 */
export async function waitUntil<T>(
  check: () => Promise<T | undefined | false> | T | undefined | false,
  what: string,
  timeoutMs = 20_000,
): Promise<T> {
  const limitMs = patience(timeoutMs);
  const deadline = Date.now() + limitMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) assert.fail(`timed out after ${limitMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
