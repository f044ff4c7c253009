import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { hashKey } from '../../src/modules/keys/key-text.js';
import { manualClock } from '../support/clock.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import {
  expectError,
  expectStatus,
  sharedDatabase,
  startTestApp,
  type TestApp,
  type TestBusiness,
} from '../support/harness.js';
import { probeRoutes } from '../support/probe-routes.js';

const READ = '/api/v1/dev/probe/read';
const WRITE = '/api/v1/dev/probe/counter';
const SANDBOX_ONLY = '/api/v1/dev/probe/sandbox-only';

// One database for the file; each describe's app has its own businesses in it.
let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.drop());

const KEY_CACHE_TTL_MS = 3000;

describe('authentication (api.md 5)', () => {
  let t: TestApp;
  // The key cache reads this clock: entries expire when the test moves it, never on their own.
  const clock = manualClock();
  beforeAll(async () => {
    t = await startTestApp({
      routes: [probeRoutes],
      config: { KEY_CACHE_TTL_MS: String(KEY_CACHE_TTL_MS) },
      clock,
      testDatabase: sharedDatabase(database),
    });
  });
  afterAll(() => t.close());

  const read = (key: string | undefined, headers?: Record<string, string>) =>
    t.request('GET', READ, { key, ...(headers ? { headers } : {}) });
  const write = (key: string, body: unknown = { name: 'auth' }) =>
    t.request('POST', WRITE, { key, body, idempotencyKey: true });

  test('MISSING_CREDENTIALS without an Authorization header', async () => {
    expectError(await read(undefined), 401, 'MISSING_CREDENTIALS');
    expectError(await t.request('POST', WRITE, { body: { name: 'x' } }), 401, 'MISSING_CREDENTIALS');
  });

  test('INVALID_AUTH_HEADER for a malformed header', async () => {
    const business = await t.createBusiness();
    const key = business.keys.secretTest;
    for (const header of [`Basic ${key}`, `Bearer  ${key}`, `Bearer`, `Bearer ${key} extra`, key, `Token ${key}`]) {
      expectError(await read(undefined, { authorization: header }), 401, 'INVALID_AUTH_HEADER');
    }
  });

  test('INVALID_API_KEY for unknown keys, wrong formats and rotated keys', async () => {
    const business = await t.createBusiness();
    for (const key of [
      'sk_test_' + 'A'.repeat(40),
      'sk_prod_' + 'A'.repeat(40),
      'xx_test_abc',
      business.keys.secretTest.slice(0, -1),
      business.keys.secretTest + '!',
    ]) {
      expectError(await read(key), 401, 'INVALID_API_KEY');
    }
    const record = business.keyRecords.find((k) => k.kind === 'secret' && k.environment === 'test')!;
    const rotated = await t.admin('POST', `/keys/${record.id}/rotate`);
    expectStatus(rotated, 201);
    expectError(await read(business.keys.secretTest), 401, 'INVALID_API_KEY');
    expectStatus(await read(rotated.body.data.key), 200);
    assert.deepEqual(rotated.body.data.scopes, record.scopes);
  });

  test('only a hash of each key is stored', async () => {
    const business = await t.createBusiness();
    const rows = await t.runtime.db.selectFrom('api_keys').selectAll().where('business_id', '=', business.id).execute();
    assert.equal(rows.length, 4);
    for (const issued of business.keyRecords) {
      const row = rows.find((r) => r.id === issued.id)!;
      assert.equal(row.key_hash, hashKey(issued.key));
      assert.ok(!JSON.stringify(row).includes(issued.key), 'the key text is nowhere in its row');
      assert.match(row.key_hint, /^(sk|pk)_(test|live)_\.\.\..{4}$/);
    }
  });

  test('API_ACCESS_NOT_ACTIVE for suspended and revoked keys, effective at once on this process', async () => {
    const business = await t.createBusiness();
    const [secretTest, publishableTest] = ['secret', 'publishable'].map((kind) =>
      business.keyRecords.find((k) => k.kind === kind && k.environment === 'test')!,
    );
    expectStatus(await read(business.keys.secretTest), 200); // now cached
    expectStatus(await t.admin('POST', `/keys/${secretTest!.id}/suspend`), 200);
    expectError(await read(business.keys.secretTest), 403, 'API_ACCESS_NOT_ACTIVE');
    expectStatus(await t.admin('POST', `/keys/${publishableTest!.id}/revoke`), 200);
    expectError(await read(business.keys.publishableTest), 403, 'API_ACCESS_NOT_ACTIVE');
    const listed = await t.admin('GET', `/keys?businessId=${business.id}`);
    const statuses = Object.fromEntries(
      listed.body.data.items.map((k: { id: string; status: string }) => [k.id, k.status]),
    );
    assert.equal(statuses[secretTest!.id], 'suspended');
    assert.equal(statuses[publishableTest!.id], 'revoked');
  });

  test('a key revoked behind the cache (another process) stops working within the cache TTL', async () => {
    const business = await t.createBusiness();
    expectStatus(await read(business.keys.secretTest), 200);
    // Revoke straight in the database, as another API process would: no local invalidation.
    await t.runtime.db
      .updateTable('api_keys')
      .set({ status: 'revoked' })
      .where('key_hash', '=', hashKey(business.keys.secretTest))
      .execute();
    clock.advance(KEY_CACHE_TTL_MS);
    expectError(await read(business.keys.secretTest), 403, 'API_ACCESS_NOT_ACTIVE');
  });

  test('LIVE_ACCESS_NOT_APPROVED for live keys until the business is approved', async () => {
    const business = await t.createBusiness({ approveLive: false });
    expectError(await read(business.keys.secretLive), 403, 'LIVE_ACCESS_NOT_APPROVED');
    expectError(await read(business.keys.publishableLive), 403, 'LIVE_ACCESS_NOT_APPROVED');
    expectStatus(await read(business.keys.secretTest), 200);
    expectStatus(await t.admin('POST', `/businesses/${business.id}/approve-live`), 200);
    const live = await read(business.keys.secretLive);
    expectStatus(live, 200);
    assert.equal(live.body.data.sandbox, false);
  });

  test('SECRET_KEY_REQUIRED for a publishable key on a write; reads accept both', async () => {
    const business = await t.createBusiness();
    expectError(await write(business.keys.publishableTest), 403, 'SECRET_KEY_REQUIRED');
    expectStatus(await read(business.keys.publishableTest), 200);
    expectStatus(await read(business.keys.secretTest), 200);
  });

  test('SANDBOX_ONLY for a live key on a sandbox-only endpoint', async () => {
    const business = await t.createBusiness();
    const live = await t.request('POST', SANDBOX_ONLY, { key: business.keys.secretLive, idempotencyKey: true });
    expectError(live, 403, 'SANDBOX_ONLY');
    const test = await t.request('POST', SANDBOX_ONLY, { key: business.keys.secretTest, idempotencyKey: true });
    expectStatus(test, 200);
  });

  test('SCOPE_REQUIRED when the key lacks the route scope', async () => {
    const business = await t.createBusiness();
    const created = await t.admin('POST', '/keys', {
      businessId: business.id,
      kind: 'secret',
      environment: 'test',
      scopes: ['store.products:read'],
    });
    expectStatus(created, 201);
    const response = await read(created.body.data.key);
    expectError(response, 403, 'SCOPE_REQUIRED');
    assert.match(response.body.error.message, /intents:read/);
    expectError(await write(created.body.data.key), 403, 'SCOPE_REQUIRED');
  });

  test('IP_NOT_ALLOWED outside the allowlist; single addresses and CIDR ranges both work', async () => {
    const business = await t.createBusiness();
    const make = async (ipAllowlist: string[]) => {
      const created = await t.admin('POST', '/keys', {
        businessId: business.id,
        kind: 'secret',
        environment: 'test',
        ipAllowlist,
      });
      expectStatus(created, 201);
      return created.body.data.key as string;
    };
    expectError(await read(await make(['10.0.0.0/8', '192.0.2.7'])), 403, 'IP_NOT_ALLOWED');
    expectStatus(await read(await make(['127.0.0.1'])), 200);
    expectStatus(await read(await make(['127.0.0.0/8'])), 200);
    // X-Forwarded-For is ignored unless TRUST_PROXY is set.
    expectStatus(await read(await make(['127.0.0.1']), { 'x-forwarded-for': '203.0.113.9' }), 200);
    const bad = await t.admin('POST', '/keys', {
      businessId: business.id,
      kind: 'secret',
      environment: 'test',
      ipAllowlist: ['not-an-ip'],
    });
    expectError(bad, 400, 'VALIDATION_ERROR');
  });

  test('FEATURE_DISABLED per business and globally, and enabled again', async () => {
    const business = await t.createBusiness();
    const other = await t.createBusiness();
    expectStatus(await t.admin('POST', '/api/disable', { businessId: business.id }), 200);
    expectError(await read(business.keys.secretTest), 503, 'FEATURE_DISABLED');
    expectStatus(await read(other.keys.secretTest), 200);
    expectStatus(await t.admin('POST', '/api/enable', { businessId: business.id }), 200);
    expectStatus(await read(business.keys.secretTest), 200);

    expectStatus(await t.admin('POST', '/api/disable'), 200);
    try {
      expectError(await read(other.keys.secretTest), 503, 'FEATURE_DISABLED');
      expectError(await read(business.keys.publishableLive), 503, 'FEATURE_DISABLED');
    } finally {
      expectStatus(await t.admin('POST', '/api/enable'), 200);
    }
    expectStatus(await read(other.keys.secretTest), 200);
  });

  test('checks run in the decided order', async () => {
    // FEATURE_DISABLED before key status; key status before live approval; live approval
    // before IP; IP before secret/publishable; secret/publishable before sandbox-only and scope.
    const business = await t.createBusiness({ approveLive: false });
    const live = business.keyRecords.find((k) => k.kind === 'secret' && k.environment === 'live')!;
    expectStatus(await t.admin('POST', `/keys/${live.id}/suspend`), 200);
    expectStatus(await t.admin('POST', '/api/disable', { businessId: business.id }), 200);
    expectError(await read(business.keys.secretLive), 503, 'FEATURE_DISABLED');
    expectStatus(await t.admin('POST', '/api/enable', { businessId: business.id }), 200);
    expectError(await read(business.keys.secretLive), 403, 'API_ACCESS_NOT_ACTIVE');
    const restricted = await t.admin('POST', '/keys', {
      businessId: business.id,
      kind: 'publishable',
      environment: 'live',
      scopes: [],
      ipAllowlist: ['10.1.1.1'],
    });
    expectError(await write(restricted.body.data.key), 403, 'LIVE_ACCESS_NOT_APPROVED');
    expectStatus(await t.admin('POST', `/businesses/${business.id}/approve-live`), 200);
    expectError(await write(restricted.body.data.key), 403, 'IP_NOT_ALLOWED');
    const noScopes = await t.admin('POST', '/keys', {
      businessId: business.id,
      kind: 'publishable',
      environment: 'live',
      scopes: [],
    });
    expectError(
      await t.request('POST', SANDBOX_ONLY, { key: noScopes.body.data.key, idempotencyKey: true }),
      403,
      'SECRET_KEY_REQUIRED',
    );
    const liveNoScope = await t.admin('POST', '/keys', {
      businessId: business.id,
      kind: 'secret',
      environment: 'live',
      scopes: [],
    });
    expectError(
      await t.request('POST', SANDBOX_ONLY, { key: liveNoScope.body.data.key, idempotencyKey: true }),
      403,
      'SANDBOX_ONLY',
    );
  });

  test('auth comes before body validation and before the idempotency header check', async () => {
    const invalidJson = await t.request('POST', WRITE, {
      rawBody: '{oops',
      headers: { 'content-type': 'application/json' },
    });
    expectError(invalidJson, 401, 'MISSING_CREDENTIALS');
    const business = await t.createBusiness();
    const noIdempotency = await t.request('POST', WRITE, { key: business.keys.publishableTest, body: { bad: true } });
    expectError(noIdempotency, 403, 'SECRET_KEY_REQUIRED');
  });

  test('the admin API refuses a missing or wrong token', async () => {
    const missing = await t.request('GET', '/api/v1/admin/keys?businessId=x');
    expectError(missing, 401, 'ADMIN_UNAUTHORIZED');
    const wrong = await t.request('GET', '/api/v1/admin/keys?businessId=x', {
      headers: { authorization: 'Bearer nope-nope-nope-nope' },
    });
    expectError(wrong, 401, 'ADMIN_UNAUTHORIZED');
  });
});

describe('authentication behind a trusted proxy', () => {
  let t: TestApp;
  let business: TestBusiness;
  beforeAll(async () => {
    t = await startTestApp({
      routes: [probeRoutes],
      config: { TRUST_PROXY: 'true' },
      testDatabase: sharedDatabase(database),
    });
    business = await t.createBusiness();
  });
  afterAll(() => t.close());

  test('with TRUST_PROXY the allowlist applies to the X-Forwarded-For client address', async () => {
    const created = await t.admin('POST', '/keys', {
      businessId: business.id,
      kind: 'secret',
      environment: 'test',
      ipAllowlist: ['203.0.113.0/24'],
    });
    const key = created.body.data.key;
    expectStatus(await t.request('GET', READ, { key, headers: { 'x-forwarded-for': '203.0.113.9' } }), 200);
    expectError(
      await t.request('GET', READ, { key, headers: { 'x-forwarded-for': '198.51.100.1' } }),
      403,
      'IP_NOT_ALLOWED',
    );
    expectError(await t.request('GET', READ, { key }), 403, 'IP_NOT_ALLOWED');
  });
});
