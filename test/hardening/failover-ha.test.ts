import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { sql } from 'kysely';
import pg from 'pg';
import pino from 'pino';
import { haPooledUrl, haUrl, layout, memberState, roles, waitHealthy } from './ha-layout.js';
import { openDatabase } from '../../src/db/connect.js';
import { migrate } from '../../src/db/migrate.js';
import { randomBase62 } from '../../src/lib/ids.js';
import { startWorker, type Worker } from '../../src/worker/worker.js';
import { expectStatus, startTestApp, waitUntil, type TestApp } from '../support/harness.js';
import { patience } from '../support/patience.js';

/**
 * The service on the HA layout of scripts/ha/layout.sh (issue 39): the primary's PostgreSQL killed,
 * the standby's machine lost, etcd lost, each under load. It stops and starts the layout's
 * members, so it runs only when asked: `TEST_HA_LAYOUT=1` with the layout up
 * (`scripts/ha/layout.sh up`; `down` after). A layout merely running (a benchmark's, a
 * person's) is left alone. test/hardening/failover.test.ts covers what needs no layout. The service
 * connects as the application's role with the password `layout.sh up` generated (issue 47);
 * with `TEST_HA_PGBOUNCER=1` through the layout's PgBouncer (LISTEN through HAProxy, decision 095).
 */
const INTENTS = '/api/v1/dev/intents';
const asked = process.env.TEST_HA_LAYOUT === '1';
const throughPgBouncer = process.env.TEST_HA_PGBOUNCER === '1';

if (asked) {
  const { primary, syncStandby } = await roles();
  assert.ok(
    primary !== undefined && syncStandby !== undefined,
    'TEST_HA_LAYOUT=1 asks for the HA layout: run `scripts/ha/layout.sh up` first',
  );
}

describe('the service on the HA layout: failover, standby lost, etcd lost (issue 39)', { skip: !asked }, () => {
  let t: TestApp;
  let worker: Worker;
  let name: string;
  let sk: string;

  /** A short-lived connection through HAProxy (a kept one would die with the primary). */
  async function onPrimary(text: string): Promise<void> {
    const client = new pg.Client({ connectionString: haUrl() });
    client.on('error', () => {});
    await client.connect();
    await client.query(text);
    await client.end();
  }

  beforeAll(async () => {
    name = `devapi_ha_${randomBase62(8).toLowerCase()}`;
    await onPrimary(`CREATE DATABASE ${name}`);
    const url = new URL(haUrl());
    url.pathname = `/${name}`;
    const direct = await openDatabase({ kind: 'postgres', url: url.toString(), poolSize: 2 });
    await migrate(direct);
    await direct.close();
    // TEST_HA_PGBOUNCER=1: the app through the layout's PgBouncer, as production runs it (decision 095).
    const pooled = new URL(haPooledUrl());
    pooled.pathname = `/${name}`;
    const database = await openDatabase(
      throughPgBouncer
        ? { kind: 'postgres', url: pooled.toString(), listenUrl: url.toString(), poolSize: 8, namedStatements: false }
        : { kind: 'postgres', url: url.toString(), poolSize: 8 },
    );
    t = await startTestApp({
      config: { RATE_LIMIT_TEST_PER_MINUTE: '1000000', KEY_CACHE_TTL_MS: '0' },
      testDatabase: { database, url: url.toString(), drop: async () => {} },
    });
    worker = startWorker(t.runtime, pino({ level: 'silent' }));
    sk = (await t.createBusiness()).keys.secretTest;
  });
  afterAll(async () => {
    await worker?.stop().catch(() => {});
    await t?.close().catch(() => {});
    await waitHealthy().catch(() => {});
    await onPrimary(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
  });

  /**
   * Lanes creating and paying intents, each write retried under its key while it gets no answer
   * or a 503, while `phase` runs; answers every status seen and each key's intent.
   */
  async function underLoad(phase: () => Promise<void>) {
    const statuses: number[] = [];
    const intents = new Map<string, string>();
    let running = true;
    let sequence = 0;
    const slowest = { ms: 0 };
    const send = async (path: string, key: string, body: unknown, expect: number) => {
      for (;;) {
        const started = Date.now();
        const response = await t
          .request('POST', path, { key: sk, idempotencyKey: key, body })
          .catch(() => ({ status: 0, body: undefined, text: '' }));
        slowest.ms = Math.max(slowest.ms, Date.now() - started);
        statuses.push(response.status);
        if (response.status === expect) return response.body;
        assert.ok([0, 503].includes(response.status), `${path}: ${response.status} ${response.text}`);
        if (response.status === 503) assert.equal(response.body.error.code, 'DATABASE_UNAVAILABLE');
        // A client's pause before it retries, not a wait for a state.
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };
    const lane = async (id: number) => {
      while (running) {
        const key = `ha-${id}-${sequence++}`;
        const created = await send(INTENTS, key, { amount: 1000, metadata: { k: key } }, 201);
        const reference = created.data.referenceNumber as string;
        intents.set(key, reference);
        await send(`${INTENTS}/${reference}/simulate`, `${key}-pay`, {}, 200);
      }
    };
    const lanes = [0, 1, 2, 3].map(lane);
    try {
      await waitUntil(() => statuses.filter((s) => s < 300).length >= 20, 'writes before the fault', 60_000);
      await phase();
      const after = statuses.filter((s) => s < 300).length;
      await waitUntil(() => statuses.filter((s) => s < 300).length >= after + 20, 'writes after the fault', 60_000);
    } finally {
      running = false;
      await Promise.all(lanes);
    }
    return { statuses, intents, slowestMs: slowest.ms };
  }

  /** Each key once, each intent paid, the books balanced. */
  async function checkExactlyOnce(intents: Map<string, string>): Promise<void> {
    const stored = await t.runtime.db
      .selectFrom('payment_intents')
      .select(['reference_number', 'status', sql<string>`metadata ->> 'k'`.as('k')])
      .where(sql<boolean>`metadata ->> 'k' = ANY (${[...intents.keys()]})`)
      .execute();
    assert.equal(stored.length, intents.size, 'one intent per key');
    assert.deepEqual(stored.map((row) => row.reference_number).sort(), [...intents.values()].sort());
    assert.ok(
      stored.every((row) => row.status === 'PAID'),
      'every intent paid once',
    );
    const check = await t.admin('GET', '/ledger/check');
    expectStatus(check, 200);
    assert.equal(check.body.data.ok, true, check.text);
  }

  test("the primary's machine lost: 503s, then the new primary without a restart; each key done once", async () => {
    const before = await waitHealthy();
    const { statuses, intents } = await underLoad(async () => {
      const killedAt = Date.now();
      await layout('stop', before);
      const { primary } = await waitUntil(
        async () => {
          const found = await roles();
          return found.primary && found.primary !== before ? found : undefined;
        },
        'the standby promoted',
        60_000,
      );
      assert.notEqual(primary, before);
      assert.ok(Date.now() - killedAt < patience(60_000));
      // The machine back: it rejoins as the synchronous standby.
      await layout('start', before);
    });
    assert.ok(statuses.includes(503) || statuses.includes(0), 'the failover was seen');
    await checkExactlyOnce(intents);
    await waitHealthy();
  });

  test('the standby lost: writes wait until Patroni drops it, none fails', async () => {
    await waitHealthy();
    const { syncStandby } = await roles();
    const { statuses, intents, slowestMs } = await underLoad(async () => {
      await layout('stop', syncStandby!);
      // Writes go on while it is gone (underLoad waits for 20 more).
    });
    await layout('start', syncStandby!);
    assert.deepEqual(
      statuses.filter((s) => s >= 300 || s === 0),
      [],
      'no write failed',
    );
    assert.ok(slowestMs < 15_000, `slowest write ${slowestMs} ms`);
    await checkExactlyOnce(intents);
    await waitHealthy();
  });

  test('etcd lost for longer than the leader lock: the primary stays primary, writes go on', async () => {
    const before = await waitHealthy();
    const { statuses, intents } = await underLoad(async () => {
      await layout('stop', 'etcd');
      // Once the leader key could not be renewed, the primary stays primary by failsafe_mode
      // (every member answers it); without it, it would demote itself.
      await waitUntil(
        async () => (await memberState(before))?.failsafe_mode_is_active === true,
        'the primary to keep its role by failsafe_mode',
        60_000,
      );
      const { primary } = await roles();
      assert.equal(primary, before, 'the primary stayed primary');
    });
    await layout('start', 'etcd');
    assert.deepEqual(
      statuses.filter((s) => s >= 300 || s === 0),
      [],
      'no write failed',
    );
    await checkExactlyOnce(intents);
    await waitHealthy();
  });

  test('etcd and the standby lost: the primary cannot prove it holds the lock and stops being primary (no split brain); 503 until they are back', async () => {
    await waitHealthy();
    const { primary: before, syncStandby } = await roles();
    let sawNoPrimary = false;
    const { statuses, intents } = await underLoad(async () => {
      await layout('stop', 'etcd');
      await layout('stop', syncStandby!);
      // The leader key cannot be renewed and failsafe_mode cannot reach every member: the
      // primary demotes itself once its lock would have expired; nobody is primary meanwhile.
      await waitUntil(
        async () => {
          const state = await memberState(before!);
          return state?.role === 'replica' || state?.role === 'demoted' || state?.state !== 'running';
        },
        'the primary to give up its role',
        60_000,
      );
      sawNoPrimary = (await roles()).primary === undefined;
      await layout('start', 'etcd');
      await layout('start', syncStandby!);
    });
    assert.ok(sawNoPrimary, 'no member was primary while the lock could not be proven');
    assert.ok(statuses.includes(503) || statuses.includes(0), 'writes were refused meanwhile');
    await checkExactlyOnce(intents);
    await waitHealthy();
  });
});
