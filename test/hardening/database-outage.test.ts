import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { openDatabase } from '../../src/db/connect.js';
import { expectError, expectStatus, startTestApp, waitUntil, type TestApp } from '../support/harness.js';

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

describe(
  'a PostgreSQL of its own stopped and restarted under load (issue 15, faults)',
  { skip: !initdb || !pgCtl ? 'no initdb/pg_ctl' : false },
  () => {
    let dir: string;
    let t: TestApp;
    let start: () => void;
    let stop: () => void;
    before(async () => {
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
        config: { RATE_LIMIT_TEST_PER_MINUTE: '1000000', KEY_CACHE_TTL_MS: '0' },
        testDatabase: {
          database: await openDatabase({ kind: 'postgres', url, poolSize: 5 }),
          url,
          drop: async () => {},
        },
      });
    });
    after(async () => {
      await t?.close().catch(() => {});
      try {
        stop();
      } catch {
        // already stopped
      }
      rmSync(dir, { recursive: true, force: true });
    });

    test('while down: 503 DATABASE_UNAVAILABLE at once; after: recovers alone; nothing lost or doubled', async () => {
      const sk = (await t.createBusiness()).keys.secretTest;
      const outcomes = new Map<string, { status: number; reference?: string; code?: string }>();
      let running = true;
      let sent = 0;
      const load = async (lane: number) => {
        while (running) {
          const key = `outage-${lane}-${sent++}`;
          const response = await t.request('POST', INTENTS, {
            key: sk,
            idempotencyKey: key,
            body: { amount: 1000 },
            headers: {},
          });
          outcomes.set(key, {
            status: response.status,
            reference: response.body?.data?.referenceNumber,
            code: response.body?.error?.code,
          });
          // Pacing the load (a refused request answers at once), not waiting for a state.
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
      };
      const lanes = [0, 1, 2, 3].map(load);
      const count = (status: number) => [...outcomes.values()].filter((o) => o.status === status).length;
      await waitUntil(() => count(201) >= 20, 'twenty intents created before the outage', 60_000);
      stop();
      const sawDown = count(503);
      await waitUntil(() => count(503) >= sawDown + 10, 'ten 503 answers while the database is down', 60_000);
      start();
      const before201 = count(201);
      // Recovery by itself: new requests succeed again with no restart of the API.
      await waitUntil(() => count(201) >= before201 + 20, 'twenty intents created after the restart', 120_000);
      running = false;
      await Promise.all(lanes);

      for (const [key, outcome] of outcomes) {
        assert.ok([201, 503].includes(outcome.status), `${key}: ${JSON.stringify(outcome)}`);
        if (outcome.status === 503) assert.equal(outcome.code, 'DATABASE_UNAVAILABLE');
      }
      // A 503 committed nothing and freed its key: the same request again is done once.
      for (const [key, outcome] of outcomes) {
        if (outcome.status !== 503) continue;
        const retried = await t.request('POST', INTENTS, { key: sk, idempotencyKey: key, body: { amount: 1000 } });
        expectStatus(retried, 201);
        outcomes.set(key, { status: 201, reference: retried.body.data.referenceNumber });
      }
      const references = [...outcomes.values()].map((o) => o.reference);
      assert.equal(new Set(references).size, outcomes.size, 'one intent per key');
      const stored = await t.runtime.db.selectFrom('payment_intents').select('reference_number').execute();
      assert.deepEqual(stored.map((row) => row.reference_number).sort(), [...references].sort() as string[]);
      expectStatus(await t.request('GET', '/ready'), 200);
      expectError(await t.request('GET', `${INTENTS}/PI-NOPE`, { key: sk }), 404, 'INTENT_NOT_FOUND');
    });
  },
);
