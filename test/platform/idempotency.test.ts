import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { sql } from 'kysely';
import pg from 'pg';
import Fastify from 'fastify';
import { registerWritePath } from '../../src/http/idempotency/plugin.js';
import { RETENTION_BATCHES } from '../../src/config.js';
import { deleteExpiredIdempotencyKeys } from '../../src/http/idempotency/store.js';
import { testDatabaseKind } from '../support/database.js';
import { expectError, expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { probeExecutions, probeRoutes } from '../support/probe-routes.js';

const COUNTER = '/api/v1/dev/probe/counter';

describe('idempotency (api.md 4, decisions "Idempotency")', () => {
  let t: TestApp;
  let business: TestBusiness;
  beforeAll(async () => {
    t = await startTestApp({ routes: [probeRoutes] });
    business = await t.createBusiness();
  });
  afterAll(() => t.close());

  const post = (
    idempotencyKey: string | undefined,
    body: unknown,
    key = business.keys.secretTest,
    headers?: Record<string, string>,
  ) =>
    t.request('POST', COUNTER, {
      key,
      body,
      ...(idempotencyKey !== undefined ? { idempotencyKey } : {}),
      ...(headers ? { headers } : {}),
    });

  test.skipIf(testDatabaseKind === 'postgres' ? false : 'PostgreSQL only: PGlite runs one transaction at a time')(
    'a key another request commits while this one runs: this one rolls back and replays that answer',
    async () => {
      // The key is stored at the end of the write's transaction: the insert then finds it taken.
      const response = await post('taken-meanwhile', { name: 'taken' }, undefined, { 'x-probe-key-taken': '1' });
      expectStatus(response, 201);
      assert.equal(response.headers.get('idempotent-replayed'), 'true');
      assert.deepEqual(response.body, { success: true, data: { name: 'taken', executions: 0 } });
      assert.equal(await probeExecutions(t.runtime.db, 'taken'), 0, 'the work of the losing attempt rolled back');
    },
  );

  test.skipIf(testDatabaseKind === 'postgres' ? false : 'PostgreSQL only: it takes three sessions')(
    "the claim reads the key after taking its lock: a commit between the claim's start and its lock is seen",
    async () => {
      const url = t.testDatabase.url!;
      const [gate, claimer, other] = [new pg.Client(url), new pg.Client(url), new pg.Client(url)];
      await Promise.all([gate.connect(), claimer.connect(), other.connect()]);
      try {
        const scope = { business: business.id, environment: 'test', key: 'committed-in-the-window' };
        const lockName = `${scope.business}:${scope.environment}:${scope.key}`;
        // The claim statement starts (its snapshot is taken), then waits on a lock the gate holds
        // before it reaches the key's lock: the other request commits the key meanwhile.
        await gate.query('BEGIN');
        await gate.query('SELECT pg_advisory_xact_lock(4242)');
        const claimPid = (await claimer.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
        const claim = claimer.query<{ held: boolean; existing_id: number | null; response_body: string | null }>(
          `SELECT c.held, c.existing_id, c.response_body
           FROM (SELECT pg_advisory_xact_lock(4242)::text AS pad) AS waited,
           LATERAL idempotency_claim($1 || waited.pad, $2, $3, $4, 24) AS c`,
          [lockName, scope.business, scope.environment, scope.key],
        );
        for (;;) {
          const waiting = await other.query(
            `SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND wait_event_type = 'Lock'`,
            [claimPid],
          );
          if (waiting.rows.length > 0) break;
          await new Promise((resolve) => setImmediate(resolve));
        }
        await other.query(
          `INSERT INTO idempotency_keys (business_id, environment, idempotency_key, fingerprint, state,
             response_status, response_body) VALUES ($1, $2, $3, 'f', 'done', 201, '{"first":true}')`,
          [scope.business, scope.environment, scope.key],
        );
        await gate.query('COMMIT');
        const row = (await claim).rows[0]!;
        assert.equal(row.held, true);
        assert.notEqual(row.existing_id, null, 'the key committed after the statement began is found');
        assert.equal(row.response_body, '{"first":true}');
      } finally {
        await Promise.all([gate.end(), claimer.end(), other.end()]);
      }
    },
  );

  test('a write without X-Idempotency-Key answers IDEMPOTENCY_KEY_REQUIRED and does nothing', async () => {
    expectError(await post(undefined, { name: 'no-key' }), 400, 'IDEMPOTENCY_KEY_REQUIRED');
    expectError(await post('', { name: 'no-key' }), 400, 'IDEMPOTENCY_KEY_REQUIRED');
    assert.equal(await probeExecutions(t.runtime.db, 'no-key'), 0);
  });

  test('a key longer than 255 characters or with control characters is a VALIDATION_ERROR', async () => {
    expectError(await post('k'.repeat(256), { name: 'long-key' }), 400, 'VALIDATION_ERROR');
    expectError(await post('tab\there', { name: 'long-key' }), 400, 'VALIDATION_ERROR');
    expectStatus(await post('k'.repeat(255), { name: 'long-key' }), 201);
  });

  test('the same key twice returns the original response and executes once', async () => {
    const first = await post('replay-1', { name: 'replay' });
    expectStatus(first, 201);
    assert.equal(first.headers.get('idempotent-replayed'), null);
    const second = await post('replay-1', { name: 'replay' });
    expectStatus(second, 201);
    assert.equal(second.text, first.text);
    assert.equal(second.headers.get('idempotent-replayed'), 'true');
    assert.equal(await probeExecutions(t.runtime.db, 'replay'), 1);
    // Key order does not matter: the body is compared as canonical JSON.
    const reordered = await t.request('POST', COUNTER, {
      key: business.keys.secretTest,
      idempotencyKey: 'replay-order',
      rawBody: '{"delayMs":0,"name":"order"}',
      headers: { 'content-type': 'application/json' },
    });
    expectStatus(reordered, 201);
    const again = await t.request('POST', COUNTER, {
      key: business.keys.secretTest,
      idempotencyKey: 'replay-order',
      rawBody: '{ "name": "order", "delayMs": 0 }',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
  });

  test('the same key with another body or path answers IDEMPOTENCY_KEY_REUSED (422)', async () => {
    expectStatus(await post('reuse-1', { name: 'reuse' }), 201);
    expectError(await post('reuse-1', { name: 'reuse-other' }), 422, 'IDEMPOTENCY_KEY_REUSED');
    const otherPath = await t.request('POST', '/api/v1/dev/probe/sandbox-only', {
      key: business.keys.secretTest,
      idempotencyKey: 'reuse-1',
    });
    expectError(otherPath, 422, 'IDEMPOTENCY_KEY_REUSED');
    assert.equal(await probeExecutions(t.runtime.db, 'reuse'), 1);
    assert.equal(await probeExecutions(t.runtime.db, 'reuse-other'), 0);
  });

  test('20 simultaneous requests with one key execute once; the rest replay or get 409', async () => {
    const responses = await Promise.all(
      Array.from({ length: 20 }, () => post('race-20', { name: 'race', delayMs: 150 })),
    );
    const statuses = responses.map((r) => r.status);
    assert.ok(
      statuses.every((s) => s === 201 || s === 409),
      `statuses: ${statuses.join(',')}`,
    );
    const executed = responses.filter((r) => r.status === 201 && r.headers.get('idempotent-replayed') === null);
    assert.equal(executed.length, 1, `one original response, got ${executed.length}`);
    for (const response of responses) {
      if (response.status === 409) expectError(response, 409, 'IDEMPOTENCY_KEY_IN_PROGRESS');
      else assert.equal(response.text, executed[0]!.text);
    }
    assert.equal(await probeExecutions(t.runtime.db, 'race'), 1);
    const later = await post('race-20', { name: 'race', delayMs: 150 });
    assert.equal(later.headers.get('idempotent-replayed'), 'true');
  });

  test('a 5xx is not stored: the key can be retried and then executes', async () => {
    const failed = await post('retry-after-500', { name: 'after-500' }, business.keys.secretTest, {
      'x-probe-fail': '1',
    });
    expectError(failed, 500, 'INTERNAL_ERROR');
    const retried = await post('retry-after-500', { name: 'after-500' });
    expectStatus(retried, 201);
    assert.equal(retried.headers.get('idempotent-replayed'), null);
    assert.equal(await probeExecutions(t.runtime.db, 'after-500'), 1);
  });

  test('a 4xx outcome is stored and replayed like any response below 500', async () => {
    const invalid = await post('stored-400', { name: '' });
    expectError(invalid, 400, 'VALIDATION_ERROR');
    const replay = await post('stored-400', { name: '' });
    expectStatus(replay, 400);
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    // The original response, byte for byte (its requestId is the first request's).
    assert.equal(replay.text, invalid.text);
  });

  test('keys are scoped to business and environment', async () => {
    const other = await t.createBusiness();
    expectStatus(await post('shared-key', { name: 'scoped' }), 201);
    const otherBusiness = await post('shared-key', { name: 'scoped' }, other.keys.secretTest);
    assert.equal(otherBusiness.headers.get('idempotent-replayed'), null);
    const live = await post('shared-key', { name: 'scoped' }, business.keys.secretLive);
    assert.equal(live.headers.get('idempotent-replayed'), null);
    assert.equal(await probeExecutions(t.runtime.db, 'scoped'), 3);
  });

  test('keys expire after 24 hours', async () => {
    const { db } = t.runtime;
    // Retention: a key older than 24 hours is forgotten (cleanup task), then executes again.
    expectStatus(await post('old-key', { name: 'expiring' }), 201);
    await db
      .updateTable('idempotency_keys')
      .set({ created_at: sql<Date>`now() - interval '25 hours'` })
      .where('idempotency_key', '=', 'old-key')
      .execute();
    assert.ok((await deleteExpiredIdempotencyKeys(db, RETENTION_BATCHES)).deleted >= 1);
    const fresh = await post('old-key', { name: 'expiring' });
    expectStatus(fresh, 201);
    assert.equal(fresh.headers.get('idempotent-replayed'), null);
    assert.equal(await probeExecutions(db, 'expiring'), 2);
  });

  test('a route an API key writes through without its write policy keeps the app from starting', async () => {
    const app = Fastify();
    registerWritePath(app);
    await assert.rejects(async () => {
      await app.register(async (routes) => {
        routes.post('/forgotten', { config: { auth: 'secret', scope: 'intents:write' } }, async () => ({}));
      });
      await app.ready();
    }, /POST \/forgotten: a write route declares its config.write policy/);
    await app.close().catch(() => {});
  });
});
