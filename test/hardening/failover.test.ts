import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, onTestFinished, test } from 'vitest';
import { sql } from 'kysely';
import pg from 'pg';
import pino from 'pino';
import { LISTENER_APPLICATION_NAME } from '../../src/db/connect.js';
import { startWorker, type PeriodicTask, type Worker } from '../../src/worker/worker.js';
import { testDatabaseKind } from '../support/database.js';
import { expectError, expectStatus, startTestApp, waitUntil, type TestApp } from '../support/harness.js';
import { startReceiver, type Receiver } from '../support/receiver.js';

/**
 * What a failover does to the service, without the HA layout (issue 39): its connections cut, and
 * a server that no longer takes writes. test/hardening/failover-ha.test.ts runs the real failover
 * when scripts/ha/layout.sh is up.
 */
const INTENTS = '/api/v1/dev/intents';
const silent = pino({ level: 'silent' });

describe('the service through a failover, without the HA layout (issue 39)', () => {
  let t: TestApp;
  let receiver: Receiver;
  let admin: pg.Client | undefined;
  let databaseName: string | undefined;
  const workers: Worker[] = [];

  beforeAll(async () => {
    t = await startTestApp({
      config: { RATE_LIMIT_TEST_PER_MINUTE: '1000000', KEY_CACHE_TTL_MS: '0', WEBHOOK_ALLOW_PRIVATE: 'true' },
    });
    receiver = await startReceiver();
    if (testDatabaseKind === 'postgres') {
      // A session of its own, opened before any setting below, that cuts the app's connections.
      admin = new pg.Client({ connectionString: t.testDatabase.url });
      await admin.connect();
      databaseName = (await admin.query<{ name: string }>('SELECT current_database() AS name')).rows[0]!.name;
    }
  });
  afterAll(async () => {
    await Promise.all(workers.map((worker) => worker.stop().catch(() => {})));
    await receiver?.close();
    await admin?.end();
    await t?.close();
  });

  /** Ends every session of the app's database but the test's own: what a primary's loss does to them. */
  async function cutConnections(): Promise<number> {
    const ended = await admin!.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
       WHERE datname = current_database() AND pid <> pg_backend_pid()`,
    );
    return ended.rowCount ?? 0;
  }

  /** The database refuses writes from now on (a standby, or a former primary being demoted), or takes them again. */
  async function setReadOnly(readOnly: boolean): Promise<void> {
    if (admin) {
      await admin.query(
        readOnly
          ? `ALTER DATABASE ${databaseName} SET default_transaction_read_only = on`
          : `ALTER DATABASE ${databaseName} RESET default_transaction_read_only`,
      );
      // The setting reaches sessions as they start: the pool's next connections.
      await cutConnections();
    } else {
      await sql`SET default_transaction_read_only = ${sql.raw(readOnly ? 'on' : 'off')}`.execute(t.runtime.db);
    }
  }

  /**
   * The test's own reads through the app's pool. Right after a cut the pool may still hand out a
   * connection whose end it has not yet seen (ECONNRESET, as a request would get a 503): read again.
   */
  async function readAfterCut<T>(read: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await read();
      } catch (error) {
        if (attempt >= 5) throw error;
      }
    }
  }

  const intentsOfKey = (key: string) =>
    readAfterCut(() =>
      t.runtime.db
        .selectFrom('payment_intents')
        .select(['reference_number', 'status'])
        .where(sql<boolean>`metadata ->> 'k' = ${key}`)
        .execute(),
    );

  test('a server that refuses writes: 503 DATABASE_UNAVAILABLE, nothing written; after: the retry is done once, and a periodic task whose end could not be written runs again at once', async () => {
    const sk = (await t.createBusiness()).keys.secretTest;
    let runs = 0;
    let release: () => void = () => {};
    let held: Promise<void> | undefined;
    const probe: PeriodicTask = {
      name: 'failover-probe',
      everySeconds: 1,
      run: async () => {
        runs += 1;
        await held;
      },
    };
    const worker = startWorker(t.runtime, silent, [probe], 50, { pollMs: 600_000 });
    workers.push(worker);
    await waitUntil(() => runs >= 1, 'the probe task to run');
    // The next run is held while the database stops taking writes, so its end cannot be written.
    held = new Promise((resolve) => (release = resolve));
    const heldRun = runs + 1;
    await waitUntil(() => runs >= heldRun, 'the held run to start');
    await setReadOnly(true);
    let readOnly = true;
    // A failure below must not leave the database refusing writes, nor the worker's run held.
    onTestFinished(async () => {
      release();
      if (readOnly) await setReadOnly(false);
    });

    const key = `read-only-${Date.now()}`;
    const refused = await t.request('POST', INTENTS, {
      key: sk,
      idempotencyKey: key,
      body: { amount: 1000, metadata: { k: key } },
    });
    expectError(refused, 503, 'DATABASE_UNAVAILABLE');
    assert.deepEqual(await intentsOfKey(key), [], 'nothing written');

    release();
    held = undefined;
    // Give the held run time to try writing its end (refused), then take writes again.
    const lease = () =>
      readAfterCut(() =>
        t.runtime.db
          .selectFrom('periodic_tasks')
          .select(['locked_by', 'locked_until'])
          .where('name', '=', probe.name)
          .executeTakeFirstOrThrow(),
      );
    await waitUntil(async () => (await lease()).locked_by !== null && runs === heldRun, 'the lease left behind');
    await setReadOnly(false);
    readOnly = false;

    // The first requests may still meet a connection that was cut (503 again): the client retries.
    const retried = await waitUntil(async () => {
      const response = await t.request('POST', INTENTS, {
        key: sk,
        idempotencyKey: key,
        body: { amount: 1000, metadata: { k: key } },
      });
      return response.status === 503 ? undefined : response;
    }, 'the database to take writes again');
    expectStatus(retried, 201);
    assert.equal((await intentsOfKey(key)).length, 1);
    // The lease left behind lasts 60 s; this worker takes its own back at its next turn.
    await waitUntil(() => runs > heldRun, 'the task to run again, well before its lease lapses', 10_000);
    await worker.stop();
    workers.splice(workers.indexOf(worker), 1);
  });

  test.skipIf(testDatabaseKind !== 'postgres' ? 'connections of their own are PostgreSQL only' : false)(
    'PostgreSQL: every connection cut again and again under load: 503s in the envelope only, the pool and the LISTEN connection recover alone, each key retried is done once',
    async () => {
      const sk = (await t.createBusiness()).keys.secretTest;
      const endpoint = await t.request('POST', '/api/v1/dev/webhooks/endpoints', {
        key: sk,
        idempotencyKey: true,
        body: { url: receiver.url, events: ['payment.created'] },
      });
      expectStatus(endpoint, 201);
      // No fallback poll: deliveries after the cuts arrive only if the worker listens again.
      const worker = startWorker(t.runtime, silent, [], 60_000, { pollMs: 600_000 });
      workers.push(worker);
      const listener = async () =>
        (
          await admin!.query<{ pid: number }>(
            `SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()`,
            [LISTENER_APPLICATION_NAME],
          )
        ).rows;
      const [firstListener] = await waitUntil(async () => {
        const rows = await listener();
        return rows.length === 1 ? rows : undefined;
      }, 'the worker to listen');

      type Outcome = { status: number; code?: string; reference?: string };
      const created = new Map<string, Outcome>();
      const paid = new Map<string, Outcome>();
      let running = true;
      let sequence = 0;
      const create = async (key: string) => {
        const response = await t.request('POST', INTENTS, {
          key: sk,
          idempotencyKey: key,
          body: { amount: 1000, metadata: { k: key } },
        });
        return {
          status: response.status,
          code: response.body?.error?.code,
          reference: response.body?.data?.referenceNumber,
        };
      };
      const pay = async (key: string, reference: string) => {
        const response = await t.request('POST', `${INTENTS}/${reference}/simulate`, {
          key: sk,
          idempotencyKey: `${key}-pay`,
          body: {},
        });
        return { status: response.status, code: response.body?.error?.code, reference };
      };
      const lane = async (id: number) => {
        while (running) {
          const key = `cut-${id}-${sequence++}`;
          const outcome = await create(key);
          created.set(key, outcome);
          if (outcome.status === 201) paid.set(key, await pay(key, outcome.reference!));
        }
      };
      const lanes = [0, 1, 2, 3].map(lane);
      const answered = () => [...created.values(), ...paid.values()];
      for (let cut = 0; cut < 3; cut++) {
        const before = answered().filter((o) => o.status < 300).length;
        await waitUntil(
          () => answered().filter((o) => o.status < 300).length >= before + 10,
          'ten writes between cuts',
          30_000,
        );
        assert.ok((await cutConnections()) > 0);
      }
      const afterCuts = answered().filter((o) => o.status < 300).length;
      await waitUntil(
        () => answered().filter((o) => o.status < 300).length >= afterCuts + 10,
        'writes after the last cut, no restart',
        30_000,
      );
      running = false;
      await Promise.all(lanes);

      for (const outcome of answered()) {
        assert.ok(outcome.status < 300 || outcome.status === 503, JSON.stringify(outcome));
        if (outcome.status === 503) assert.equal(outcome.code, 'DATABASE_UNAVAILABLE');
      }
      // The client retries what was not answered, under the same key: each is done once.
      for (const [key, outcome] of created) {
        if (outcome.status === 503) created.set(key, await create(key));
        const done = created.get(key)!;
        assert.equal(done.status, 201, `${key}: ${JSON.stringify(done)}`);
        if (paid.get(key)?.status !== 200) paid.set(key, await pay(key, done.reference!));
        assert.equal(paid.get(key)!.status, 200, `${key}: ${JSON.stringify(paid.get(key))}`);
      }
      const stored = await readAfterCut(() =>
        t.runtime.db
          .selectFrom('payment_intents')
          .select(['reference_number', 'status', sql<string>`metadata ->> 'k'`.as('k')])
          .where(sql<boolean>`metadata ->> 'k' LIKE 'cut-%'`)
          .execute(),
      );
      assert.equal(stored.length, created.size, 'one intent per key');
      assert.equal(new Set(stored.map((row) => row.k)).size, created.size);
      assert.ok(
        stored.every((row) => row.status === 'PAID'),
        'every intent paid',
      );
      const check = await t.admin('GET', '/ledger/check');
      expectStatus(check, 200);
      assert.equal(check.body.data.ok, true, check.text);

      // The worker listens again on a new connection, and is woken by the next commit.
      await waitUntil(async () => {
        const rows = await listener();
        return rows.length === 1 && rows[0]!.pid !== firstListener!.pid;
      }, 'a new listening connection');
      const deliveredBefore = receiver.requests.length;
      const woken = await create(`cut-wake-${Date.now()}`);
      assert.equal(woken.status, 201);
      await receiver.waitFor(deliveredBefore + 1, 15_000);
      await worker.stop();
      workers.splice(workers.indexOf(worker), 1);
    },
  );
});
