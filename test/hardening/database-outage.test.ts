import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, test } from 'vitest';
import pino from 'pino';
import { openDatabase } from '../../src/db/connect.js';
import { startWorker, type Worker } from '../../src/worker/worker.js';
import {
  expectError,
  expectStatus,
  startTestApp,
  waitUntil,
  type TestApp,
  type TestResponse,
} from '../support/harness.js';
import { startReceiver, type Receiver } from '../support/receiver.js';

const INTENTS = '/api/v1/dev/intents';
const binary = (name: string) =>
  ['/usr/local/bin', '/usr/bin', '/usr/lib/postgresql/17/bin', '/usr/lib/postgresql/16/bin']
    .map((dir) => path.join(dir, name))
    .find(existsSync);
const initdb = binary('initdb');
const pgCtl = binary('pg_ctl');
const asRoot = process.getuid?.() === 0;

/** PostgreSQL refuses to run as root: run its tools as the postgres user then. */
function pg(command: string, args: string[]): void {
  const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
  execFileSync(file, argv, { stdio: 'ignore', timeout: 60_000 });
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe.skipIf(!initdb || !pgCtl ? 'no initdb/pg_ctl' : false)(
  'a PostgreSQL of its own stopped and restarted under load (issue 15, faults)',
  () => {
    let dir: string;
    let t: TestApp;
    let worker: Worker;
    let receiver: Receiver;
    let start: () => void;
    let stop: () => void;
    beforeAll(async () => {
      dir = mkdtempSync(path.join(os.tmpdir(), 'devapi-pg-'));
      if (asRoot) {
        const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
        chownSync(dir, id('-u'), id('-g'));
      }
      const data = path.join(dir, 'data');
      const port = await freePort();
      pg(initdb!, ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
      start = () =>
        pg(pgCtl!, [
          '-D',
          data,
          '-l',
          path.join(dir, 'log'),
          '-w',
          '-o',
          `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`,
          'start',
        ]);
      stop = () => pg(pgCtl!, ['-D', data, '-m', 'fast', '-w', 'stop']);
      start();
      const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
      t = await startTestApp({
        config: { RATE_LIMIT_TEST_PER_MINUTE: '1000000', KEY_CACHE_TTL_MS: '0', WEBHOOK_ALLOW_PRIVATE: 'true' },
        testDatabase: {
          database: await openDatabase({ kind: 'postgres', url, poolSize: 5 }),
          url,
          drop: async () => {},
        },
      });
      receiver = await startReceiver();
      // The whole worker (delivery engine and periodic tasks), in this process, through the outage.
      worker = startWorker(t.runtime, pino({ level: 'silent' }));
    });
    afterAll(async () => {
      await worker?.stop().catch(() => {});
      await receiver?.close();
      await t?.close().catch(() => {});
      try {
        stop();
      } catch {
        // already stopped
      }
      rmSync(dir, { recursive: true, force: true });
    });

    test('while down: 503 DATABASE_UNAVAILABLE at once; after: API and worker recover alone; nothing lost, paid or delivered twice', async () => {
      const sk = (await t.createBusiness()).keys.secretTest;
      const endpoint = await t.request('POST', '/api/v1/dev/webhooks/endpoints', {
        key: sk,
        idempotencyKey: true,
        body: { url: receiver.url, events: ['payment.created', 'payment.confirmed'] },
      });
      expectStatus(endpoint, 201);
      type Outcome = { status: number; reference?: string; code?: string };
      const created = new Map<string, Outcome>();
      const paid = new Map<string, Outcome & { intent: string }>();
      let running = true;
      let sent = 0;
      const outcomeOf = (response: TestResponse): Outcome => ({
        status: response.status,
        reference: response.body?.data?.referenceNumber,
        code: response.body?.error?.code,
      });
      // Each lane creates an intent, then pays it (sandbox simulate), each under its own key.
      const load = async (lane: number) => {
        while (running) {
          const key = `outage-${lane}-${sent++}`;
          const response = await t.request('POST', INTENTS, { key: sk, idempotencyKey: key, body: { amount: 1000 } });
          created.set(key, outcomeOf(response));
          if (response.status === 201) {
            const intent = response.body.data.referenceNumber as string;
            const payment = await t.request('POST', `${INTENTS}/${intent}/simulate`, {
              key: sk,
              idempotencyKey: `${key}-pay`,
              body: {},
            });
            paid.set(`${key}-pay`, { ...outcomeOf(payment), intent });
          }
          // Pacing the load (a refused request answers at once), not waiting for a state.
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
      };
      const lanes = [0, 1, 2, 3].map(load);
      const all = () => [...created.values(), ...paid.values()];
      const count = (status: number) => all().filter((o) => o.status === status).length;
      const received = () => receiver.requests.length;
      await waitUntil(
        () => count(201) >= 20 && received() >= 20,
        'intents created and delivered before the outage',
        60_000,
      );
      stop();
      const sawDown = count(503);
      await waitUntil(() => count(503) >= sawDown + 10, 'ten 503 answers while the database is down', 60_000);
      start();
      const before201 = count(201);
      const receivedBefore = received();
      // Recovery by itself: new requests succeed again, and new events are delivered, with no
      // restart of the API or the worker.
      await waitUntil(() => count(201) >= before201 + 20, 'twenty intents created after the restart', 120_000);
      running = false;
      await Promise.all(lanes);

      for (const [key, outcome] of [...created, ...paid]) {
        const expected = key.endsWith('-pay') ? 200 : 201;
        assert.ok([expected, 503].includes(outcome.status), `${key}: ${JSON.stringify(outcome)}`);
        if (outcome.status === 503) assert.equal(outcome.code, 'DATABASE_UNAVAILABLE');
      }
      // A 503 committed nothing and freed its key: the same request again is done once.
      for (const [key, outcome] of created) {
        if (outcome.status !== 503) continue;
        const retried = await t.request('POST', INTENTS, { key: sk, idempotencyKey: key, body: { amount: 1000 } });
        expectStatus(retried, 201);
        created.set(key, outcomeOf(retried));
      }
      for (const [key, outcome] of paid) {
        if (outcome.status !== 503) continue;
        const retried = await t.request('POST', `${INTENTS}/${outcome.intent}/simulate`, {
          key: sk,
          idempotencyKey: key,
          body: {},
        });
        expectStatus(retried, 200);
        paid.set(key, { ...outcomeOf(retried), intent: outcome.intent });
      }
      // The keys whose payment was never asked (the load stopped in between) are paid now.
      for (const [key, outcome] of created) {
        if (paid.has(`${key}-pay`)) continue;
        const payment = await t.request('POST', `${INTENTS}/${outcome.reference}/simulate`, {
          key: sk,
          idempotencyKey: `${key}-pay`,
          body: {},
        });
        expectStatus(payment, 200);
        paid.set(`${key}-pay`, { ...outcomeOf(payment), intent: outcome.reference! });
      }

      // Nothing committed is lost, nothing is doubled: one intent per key, each paid once.
      const references = [...created.values()].map((o) => o.reference);
      assert.equal(new Set(references).size, created.size, 'one intent per key');
      const stored = await t.runtime.db.selectFrom('payment_intents').select(['reference_number', 'status']).execute();
      assert.deepEqual(stored.map((row) => row.reference_number).sort(), [...references].sort() as string[]);
      assert.ok(
        stored.every((row) => row.status === 'PAID'),
        'every intent paid',
      );
      const events = await t.runtime.db.selectFrom('events').select(['id', 'event', 'subject']).execute();
      for (const name of ['payment.created', 'payment.confirmed']) {
        const subjects = events.filter((e) => e.event === name).map((e) => e.subject);
        assert.equal(subjects.length, created.size, `one ${name} per intent`);
        assert.equal(new Set(subjects).size, created.size, `no intent has two ${name}`);
      }
      const check = await t.admin('GET', '/ledger/check');
      expectStatus(check, 200);
      assert.equal(check.body.data.ok, true, check.text);

      // The worker delivered through it all by itself: every event once, none twice.
      assert.ok(receivedBefore > 0);
      await waitUntil(
        async () => {
          const open = await t.runtime.db
            .selectFrom('webhook_deliveries')
            .select('id')
            .where('status', '!=', 'SUCCEEDED')
            .execute();
          return open.length === 0 && receiver.requests.length >= events.length;
        },
        'every event delivered after the restart',
        120_000,
      );
      // One delivery per event (one endpoint): count the receiver's hits per delivery id.
      const deliveries = await t.runtime.db.selectFrom('webhook_deliveries').select(['id', 'event_id']).execute();
      assert.deepEqual(deliveries.map((d) => d.event_id).sort(), events.map((e) => e.id).sort());
      const hits = new Map<string, number>();
      for (const request of receiver.requests) {
        const id = String(request.headers['x-commerce-delivery']);
        hits.set(id, (hits.get(id) ?? 0) + 1);
      }
      const doubled = [...hits].filter(([, n]) => n > 1);
      assert.deepEqual(doubled, [], 'no delivery received twice');
      assert.deepEqual([...hits.keys()].sort(), deliveries.map((d) => d.id).sort(), 'every delivery received');
      expectStatus(await t.request('GET', '/ready'), 200);
      expectError(await t.request('GET', `${INTENTS}/PI-NOPE`, { key: sk }), 404, 'INTENT_NOT_FOUND');
    });
  },
);
