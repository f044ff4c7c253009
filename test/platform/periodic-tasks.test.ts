import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, test } from 'vitest';
import { sql } from 'kysely';
import pino from 'pino';
import type { Runtime } from '../../src/bootstrap.js';
import { openDatabase } from '../../src/db/connect.js';
import { startWorker, type PeriodicTask, type Worker } from '../../src/worker/worker.js';
import { testDatabaseKind } from '../support/database.js';
import { startTestApp, waitUntil, type TestApp } from '../support/harness.js';

const logger = pino({ level: 'silent' });
let t: TestApp;
/** The runtime of the second worker: on PostgreSQL its own pool, as another process would have. */
let other: Runtime;

beforeAll(async () => {
  t = await startTestApp();
  if (testDatabaseKind === 'postgres') {
    const database = await openDatabase({ kind: 'postgres', url: t.testDatabase.url!, poolSize: 5 });
    other = { ...t.runtime, database, db: database.db };
  } else {
    // PGlite: one connection per process, so the two workers share the runtime.
    other = t.runtime;
  }
});
afterAll(async () => {
  if (other !== t.runtime) await other.database.close();
  await t.close();
});

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}

function taskRow(name: string) {
  return t.runtime.db.selectFrom('periodic_tasks').selectAll().where('name', '=', name).executeTakeFirstOrThrow();
}

test('a task slower than its period never runs in two workers at once, and keeps running', async () => {
  const name = `slow-${Date.now()}`;
  let active = 0;
  let maxActive = 0;
  const runs: { worker: string; start: number; end: number }[] = [];
  const slowTask = (worker: string): PeriodicTask => ({
    name,
    everySeconds: 1,
    run: async () => {
      active += 1;
      maxActive = Math.max(maxActive, active);
      const start = Date.now();
      await delay(1500); // the work itself: longer than the period
      runs.push({ worker, start, end: Date.now() });
      active -= 1;
    },
  });
  const workers: Worker[] = [
    startWorker(t.runtime, logger, [slowTask('a')], 50),
    startWorker(other, logger, [slowTask('b')], 50),
  ];
  try {
    await waitUntil(() => runs.length >= 3, 'three runs of the slow task', 30_000);
  } finally {
    await Promise.all(workers.map((worker) => worker.stop()));
  }
  assert.equal(maxActive, 1, JSON.stringify(runs));
  const sorted = [...runs].sort((x, y) => x.start - y.start);
  for (let i = 1; i < sorted.length; i++) {
    assert.ok(sorted[i]!.start >= sorted[i - 1]!.end, `runs overlap: ${JSON.stringify(sorted)}`);
  }
  const row = await taskRow(name);
  assert.equal(row.locked_by, null, 'the lease is given back when the run ends');
  assert.equal(row.locked_until, null);
  assert.equal(row.last_error, null);
});

test('a lapsed lease lets another worker take the task; the first one does not clear its lease', async () => {
  const name = `lease-${Date.now()}`;
  const gates = { a: deferred(), b: deferred() };
  const started = { a: 0, b: 0 };
  const gatedTask = (worker: 'a' | 'b'): PeriodicTask => ({
    name,
    everySeconds: 1,
    run: async () => {
      started[worker] += 1;
      await gates[worker].promise;
    },
  });

  const first = startWorker(t.runtime, logger, [gatedTask('a')], 60_000);
  let second: Worker | undefined;
  try {
    await waitUntil(() => started.a === 1, 'the first worker to run the task');
    const held = await taskRow(name);
    assert.ok(held.locked_by, 'leased');
    assert.ok(held.locked_until && held.locked_until.getTime() > Date.now() + 30_000, 'a generous lease');

    // Due again, but leased: the second worker skips it.
    await t.runtime.db
      .updateTable('periodic_tasks')
      .set({ next_run_at: sql<Date>`now() - interval '1 second'` })
      .where('name', '=', name)
      .execute();
    second = startWorker(other, logger, [gatedTask('b')], 20);
    await second.tick();
    assert.equal(started.b, 0, 'not run while another worker holds the lease');

    // The first worker's lease lapses (as a dead worker's would): the second takes the task.
    await t.runtime.db
      .updateTable('periodic_tasks')
      .set({ locked_until: sql<Date>`now() - interval '1 second'` })
      .where('name', '=', name)
      .execute();
    await waitUntil(() => started.b === 1, 'the second worker to take the lapsed task');
    const taken = await taskRow(name);
    assert.ok(taken.locked_by && taken.locked_by !== held.locked_by, 'leased to the second worker');

    // The first run ends: it leaves the second worker's lease alone.
    gates.a.resolve();
    await first.stop();
    const after = await taskRow(name);
    assert.equal(after.locked_by, taken.locked_by);
    assert.ok(after.locked_until && after.locked_until.getTime() > Date.now());

    gates.b.resolve();
    await second.stop();
    const done = await taskRow(name);
    assert.equal(done.locked_by, null);
    assert.equal(started.a, 1);
    assert.equal(started.b, 1);
  } finally {
    gates.a.resolve();
    gates.b.resolve();
    await first.stop();
    await second?.stop();
  }
});

test('an aside task that hangs holds back no other task, and stop waits for it', async () => {
  const hung = deferred();
  const stamp = Date.now();
  let fastRuns = 0;
  let asideEnded = false;
  const tasks: PeriodicTask[] = [
    {
      name: `aside-${stamp}`,
      everySeconds: 1,
      aside: true,
      run: async () => {
        await hung.promise;
        asideEnded = true;
      },
    },
    { name: `fast-${stamp}`, everySeconds: 0.25, run: async () => void (fastRuns += 1) },
  ];
  const worker = startWorker(t.runtime, logger, tasks, 50);
  try {
    await waitUntil(() => fastRuns >= 4, 'the fast task running while the aside one hangs', 20_000);
  } finally {
    const stopping = worker.stop();
    hung.resolve();
    await stopping;
  }
  assert.equal(asideEnded, true);
});
