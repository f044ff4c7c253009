import type pg from 'pg';
import type { Runtime } from '../../src/bootstrap.js';
import { periodicTasks } from '../../src/worker/worker.js';
import { apiCaller } from './growth-template.js';
import { timeSamples } from './load.js';
import { insertPayableIntents } from './sandbox.js';

/** The tables that grow with traffic: what VACUUM (ANALYZE) is timed on. */
const GROWING = [
  'ledger_postings',
  'balance_transactions',
  'events',
  'webhook_deliveries',
  'webhook_attempts',
  'payment_intents',
  'payments',
];

/** The application_name of the tasks' connections, so a lock wait can name them as its cause. */
export const TASKS_APPLICATION = 'growth-tasks';

/** The tasks the lock measurement runs again and again: partitions, retention and cleanups, by name. */
export const maintenanceTasks = () =>
  periodicTasks.filter(
    (task) =>
      task.name.startsWith('partitions-') || task.name.startsWith('retention') || task.name.endsWith('-cleanup'),
  );

/** VACUUM (ANALYZE) of each growing table, then one run of every periodic task, each timed. */
export async function timeMaintenance(client: pg.Client, runtime: Runtime): Promise<{ name: string; ms: number }[]> {
  const timed: { name: string; ms: number }[] = [];
  for (const table of GROWING) {
    const begun = Date.now();
    await client.query(`VACUUM (ANALYZE) ${table}`);
    timed.push({ name: `VACUUM (ANALYZE) ${table}`, ms: Date.now() - begun });
  }
  for (const task of periodicTasks) {
    const begun = Date.now();
    try {
      await task.run(runtime);
      timed.push({ name: `task ${task.name}`, ms: Date.now() - begun });
    } catch (error) {
      timed.push({ name: `task ${task.name} (failed: ${String(error).slice(0, 60)})`, ms: Date.now() - begun });
    }
  }
  return timed;
}

export interface LockRun {
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  errors: number;
  /** The longest wait of any ungranted lock seen, payments waiting on each other's rows included. */
  longestLockWaitMs: number;
  /** The longest wait seen of a lock held by the tasks' connections (application_name TASKS_APPLICATION). */
  longestTaskLockWaitMs: number;
  lockSamples: number;
  /** Who held the locks of waits longer than 100 ms (application or process kind, and query). */
  slowBlockers: string[];
}

export interface LockFigures {
  perSecond: number;
  seconds: number;
  tasks: string[];
  taskRuns: number;
  without: LockRun;
  with: LockRun;
}

const PER_SECOND = Number(process.env.BENCH_GROWTH_LOCK_RATE ?? 20);
const SECONDS = Number(process.env.BENCH_GROWTH_LOCK_SECONDS ?? 30);

/**
 * Payments at a steady PER_SECOND (sent on a clock, whatever the answers) for SECONDS, once
 * alone and once while the maintenance tasks run one after the other without pause; every 10 ms
 * the longest wait of an ungranted lock (pg_locks.waitstart) is sampled.
 */
export async function measureLocks(
  client: pg.Client,
  runtime: Runtime,
  apiUrl: string,
  business: { id: string; key: string },
): Promise<LockFigures> {
  const tasks = maintenanceTasks();
  const phones = Array.from({ length: 200 }, (_, i) => `+2225${String(i).padStart(7, '0')}`);
  let taskRuns = 0;
  const run = async (withTasks: boolean): Promise<LockRun> => {
    const intents = await insertPayableIntents(client, [business.id], PER_SECOND * SECONDS + 10, 1000);
    const call = apiCaller(apiUrl, business.key, `locks-${withTasks}-${Date.now()}`);
    const latencies: number[] = [];
    let errors = 0;
    let longest = 0;
    let lockSamples = 0;
    let longestByTask = 0;
    const slowBlockers = new Set<string>();
    let running = true;
    const sampler = (async () => {
      while (running) {
        const { rows } = await client.query<{ anyMs: number | null; taskMs: number | null; blockers: string | null }>(
          `SELECT
             (SELECT max(extract(epoch FROM clock_timestamp() - l.waitstart) * 1000)
              FROM pg_locks l WHERE NOT l.granted AND l.waitstart IS NOT NULL)::float8 AS "anyMs",
             (SELECT max(extract(epoch FROM clock_timestamp() - l.waitstart) * 1000)
              FROM pg_locks l WHERE NOT l.granted AND l.waitstart IS NOT NULL
                AND EXISTS (SELECT 1 FROM pg_stat_activity b
                  WHERE b.pid = ANY (pg_blocking_pids(l.pid)) AND b.application_name = $1))::float8 AS "taskMs",
             (SELECT string_agg(DISTINCT coalesce(nullif(b.application_name, ''), b.backend_type) || ': ' || left(b.query, 100), ' | ')
              FROM pg_locks l JOIN pg_stat_activity b ON b.pid = ANY (pg_blocking_pids(l.pid))
              WHERE NOT l.granted AND l.waitstart < clock_timestamp() - interval '100 ms') AS blockers`,
          [TASKS_APPLICATION],
        );
        const { anyMs, taskMs, blockers } = rows[0] ?? { anyMs: null, taskMs: null, blockers: null };
        if (anyMs !== null) {
          lockSamples += 1;
          longest = Math.max(longest, anyMs);
        }
        if (taskMs !== null) longestByTask = Math.max(longestByTask, taskMs);
        if (blockers) slowBlockers.add(blockers);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    })();
    const tasking = (async () => {
      while (withTasks && running) {
        for (const task of tasks) {
          await task.run(runtime).catch(() => undefined);
          taskRuns += 1;
        }
        if (tasks.length === 0) break;
      }
    })();
    const sent: Promise<void>[] = [];
    const begun = Date.now();
    for (let i = 0; i < PER_SECOND * SECONDS; i++) {
      const due = begun + (i * 1000) / PER_SECOND;
      if (due > Date.now()) await new Promise((resolve) => setTimeout(resolve, due - Date.now()));
      const at = process.hrtime.bigint();
      sent.push(
        call('POST', `/intents/${intents[i]!.reference}/simulate`, { payerPhone: phones[i % phones.length] }).then(
          ({ status }) => {
            if (status !== 200) errors += 1;
            else latencies.push(Number(process.hrtime.bigint() - at) / 1e6);
          },
        ),
      );
    }
    await Promise.all(sent);
    running = false;
    await Promise.all([sampler, tasking]);
    const { p50Ms, p99Ms } = timeSamples(latencies);
    return {
      p50Ms,
      p99Ms,
      maxMs: Math.max(...latencies),
      errors,
      longestLockWaitMs: longest,
      longestTaskLockWaitMs: longestByTask,
      lockSamples,
      slowBlockers: [...slowBlockers].slice(0, 5),
    };
  };
  const without = await run(false);
  const withTasks = await run(true);
  return {
    perSecond: PER_SECOND,
    seconds: SECONDS,
    tasks: tasks.map((task) => task.name),
    taskRuns,
    without,
    with: withTasks,
  };
}
