import assert from 'node:assert/strict';
import { afterAll, beforeAll, test } from 'vitest';
import pino from 'pino';
import { startWorker, type PeriodicTask } from '../../src/worker/worker.js';
import { startTestApp, type TestApp } from '../support/harness.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

test('a periodic task runs once per period however many workers tick at once', async () => {
  let runs = 0;
  const task: PeriodicTask = {
    name: `count-${Date.now()}`,
    everySeconds: 3600,
    run: async () => {
      runs += 1;
    },
  };
  const logger = pino({ level: 'silent' });
  const workers = Array.from({ length: 4 }, () => startWorker(t.runtime, logger, [task], 60_000));
  await Promise.all(workers.map((worker) => worker.tick()));
  await Promise.all(workers.map((worker) => worker.tick()));
  await Promise.all(workers.map((worker) => worker.stop()));
  assert.equal(runs, 1);
  const row = await t.runtime.db
    .selectFrom('periodic_tasks')
    .selectAll()
    .where('name', '=', task.name)
    .executeTakeFirstOrThrow();
  assert.ok(row.next_run_at.getTime() > Date.now() + 3500_000, 'next run is a period away');
  assert.equal(row.last_error, null);
});

test('a failing task records its error and does not stop the others', async () => {
  let ran = false;
  const failing: PeriodicTask = {
    name: `fail-${Date.now()}`,
    everySeconds: 60,
    run: async () => Promise.reject(new Error('boom')),
  };
  const healthy: PeriodicTask = { name: `ok-${Date.now()}`, everySeconds: 60, run: async () => (ran = true) };
  const worker = startWorker(t.runtime, pino({ level: 'silent' }), [failing, healthy], 60_000);
  await worker.tick();
  await worker.stop();
  assert.equal(ran, true);
  const row = await t.runtime.db
    .selectFrom('periodic_tasks')
    .select('last_error')
    .where('name', '=', failing.name)
    .executeTakeFirstOrThrow();
  assert.match(row.last_error ?? '', /boom/);
});
