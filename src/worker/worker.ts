import type { FastifyBaseLogger } from 'fastify';
import { sql } from 'kysely';
import type { Runtime } from '../bootstrap.js';
import type { BatchBudget } from '../config.js';
import { foldListCounts } from '../db/counted-list.js';
import { createMonthsAhead, dropMonthsPastRetention } from '../db/partitions.js';
import { newId } from '../lib/ids.js';
import { deleteExpiredIdempotencyKeys } from '../http/idempotency/store.js';
import { sendExpiringNotices } from '../modules/api-keys/expiring.js';
import { expireDueIntents } from '../modules/intents/service.js';
import { endWaitingPayments } from '../modules/intents/waiting-payments.js';
import { endDueRequests } from '../modules/requests/expiry.js';
import { sendOperatorNotices } from '../modules/requests/operator-hook-sender.js';
import { foldBalanceDays } from '../modules/payments/balance-days.js';
import { foldPendingMovements } from '../modules/payments/ledger.js';
import { payDailySellers } from '../modules/payouts/daily.js';
import { SENDERS, startPayoutSender, type PayoutSender } from '../modules/payouts/send.js';
import { startDeliveryEngine, type DeliveryEngine, type DeliveryEngineOptions } from '../modules/webhooks/engine.js';
import { checkFailingEndpoints } from '../modules/webhooks/health.js';
import { deleteOldRollups } from '../modules/webhooks/stats.js';
import { WAKE_CHANNEL } from '../modules/webhooks/wake.js';
import { deleteExpiredUnknownPhoneAttempts } from '../modules/wallets/service.js';
import { deleteEndedSessions } from '../modules/dashboard/sessions.js';
import { deleteEndedRequests } from '../modules/requests/retention.js';
import { deleteEndedWalletSessions } from '../modules/walletapp/sessions.js';
import { deleteOldDeliveries } from '../modules/webhooks/retention.js';

/** Warns about, then disables, webhook endpoints that have been failing (settings from the config). */
export function webhookAutoDisable(runtime: Runtime) {
  return checkFailingEndpoints(runtime.db, {
    disableAfterHours: runtime.config.webhookDisableAfterHours,
    warningHours: runtime.config.webhookDisableWarningHours,
  });
}

/**
 * A recurring task: at most one worker runs it at a time, whatever the number of workers and
 * however long a run takes (the worker holds the task's lease while it runs).
 */
export interface PeriodicTask {
  name: string;
  everySeconds: number;
  run(runtime: Runtime): Promise<unknown>;
  /**
   * Run beside the tick instead of in it: a task that waits on someone else's server (the
   * operator's gateway) must not hold back the ledger fold or the expiries queued behind it.
   */
  aside?: true;
}

/**
 * The cleanups: each deletes in bounded batches (db/batched-delete.ts) within the run's budget
 * (`config.retention.batches`), the rest left to its next run. Aside: a run of several seconds
 * must not hold back the ledger fold and the expiries, which run in the tick.
 */
function cleanupTasks(
  tasks: [name: string, everySeconds: number, run: (runtime: Runtime, budget: BatchBudget) => Promise<unknown>][],
): PeriodicTask[] {
  return tasks.map(([name, everySeconds, run]) => ({
    name,
    everySeconds,
    aside: true,
    run: (runtime) => run(runtime, runtime.config.retention.batches),
  }));
}

export const periodicTasks: PeriodicTask[] = [
  // decisions.md: expiry within 60 s of expiresAt; the first tick at start catches up after downtime.
  { name: 'intent-expiry', everySeconds: 10, run: (runtime) => expireDueIntents(runtime.db) },
  // A payment waiting for its payer ends when the payer answers (the sandbox's phones: after 2 s)
  // or at its timeout (intents/waiting-payments.ts).
  {
    name: 'waiting-payments',
    everySeconds: 1,
    run: (runtime) =>
      endWaitingPayments(runtime.db, { timeoutSeconds: runtime.config.paymentProcessingTimeoutSeconds }),
  },
  // Payment requests whose time is up, or whose sandbox phone answers by itself (requests/expiry.ts).
  { name: 'payment-requests', everySeconds: 1, run: (runtime) => endDueRequests(runtime.db) },
  // Shared ledger accounts take their pending movements into their balance row (ledger.ts); a
  // merchant's balance transactions learn their `balanceAfter` then, so it runs four times a second.
  { name: 'ledger-fold', everySeconds: 0.25, run: (runtime) => foldPendingMovements(runtime.db, 1000) },
  // Writers count list rows under their own slot (counted-list.ts); this sums them per day.
  { name: 'list-count-fold', everySeconds: 5, run: (runtime) => foldListCounts(runtime.db) },
  // Statements' day totals, kept the same way (payments/balance-days.ts).
  { name: 'balance-day-fold', everySeconds: 5, run: (runtime) => foldBalanceDays(runtime.db) },
  { name: 'webhook-auto-disable', everySeconds: 60, run: webhookAutoDisable },
  // Sellers on a DAILY payout schedule, paid once a UTC day (payouts/daily.ts, decision 082): the
  // first run after midnight UTC pays them, later runs find the day taken.
  {
    name: 'seller-payouts',
    everySeconds: 60,
    run: (runtime) =>
      payDailySellers(runtime.db, {
        maxAmount: runtime.config.intentMaxAmount,
        maxPendingSandbox: runtime.config.sandboxPendingPayoutsMax,
      }),
  },
  // `api_key.expiring`, once per key, 24 h before it stops working (api-keys/expiring.ts, decision 084).
  { name: 'api-key-expiring', everySeconds: 60, run: (runtime) => sendExpiringNotices(runtime.db) },
  ...cleanupTasks([
    // A day of keys is millions of rows at a national scale: every minute, a run's budget at a time.
    ['idempotency-cleanup', 60, (runtime, budget) => deleteExpiredIdempotencyKeys(runtime.db, budget)],
    ['webhook-rollup-cleanup', 3600, (runtime, budget) => deleteOldRollups(runtime.db, budget)],
    ['pin-attempts-cleanup', 600, (runtime, budget) => deleteExpiredUnknownPhoneAttempts(runtime.db, budget)],
    // Retention (decision 093). Events and webhook attempts go by whole month partitions (PART).
    [
      'webhook-delivery-retention',
      60,
      (runtime, budget) => deleteOldDeliveries(runtime.db, runtime.config.retention.webhookDeliveryDays, budget),
    ],
    [
      'payment-request-retention',
      300,
      (runtime, budget) => deleteEndedRequests(runtime.db, runtime.config.retention.paymentRequestDays, budget),
    ],
    [
      'dashboard-session-retention',
      3600,
      (runtime, budget) =>
        deleteEndedSessions(
          runtime.db,
          {
            days: runtime.config.retention.dashboardSessionDays,
            idleMinutes: runtime.config.dashboard.sessionIdleMinutes,
          },
          budget,
        ),
    ],
    [
      'wallet-session-retention',
      3600,
      (runtime, budget) => deleteEndedWalletSessions(runtime.db, runtime.config.retention.dashboardSessionDays, budget),
    ],
  ]),
  // Monthly partitions (db/partitions.ts, decision 091): months made ahead, old months of events
  // and webhook attempts dropped. Their DDL waits at most 50 ms for a lock, else waits for the next run.
  { name: 'partitions-ahead', everySeconds: 3600, run: (runtime) => createMonthsAhead(runtime.db) },
  {
    name: 'partitions-retention',
    everySeconds: 3600,
    run: (runtime) => dropMonthsPastRetention(runtime.db, runtime.config.retention),
  },
  // New payment requests told to the operator's SMS or push gateway (decision 078); nothing when
  // OPERATOR_HOOK_URL is unset. Aside: a gateway that hangs holds back no other task.
  {
    name: 'operator-hook',
    everySeconds: 1,
    aside: true,
    run: (runtime) => sendOperatorNotices(runtime.db, runtime.config),
  },
];

/** A task's result that says some of its work waits for the next run (a lock not had in time). */
function putOffWork(result: unknown): boolean {
  const putOff = (result as { putOff?: unknown } | null | undefined)?.putOff;
  return Array.isArray(putOff) && putOff.length > 0;
}

/**
 * How long a periodic task's lease lasts, renewed every quarter of it while the task runs: a run
 * holds its task however long it takes, and the task of a worker that died mid-run is free again
 * within this time.
 */
export const TASK_LEASE_SECONDS = 60;

export interface Worker {
  /** The webhook delivery loop of this worker. */
  deliveries: DeliveryEngine;
  /**
   * The payout loop of this worker (payouts/send.ts): on its own, so that a long queue of payouts
   * never holds up the periodic tasks, which run one after another in a tick.
   */
  payouts: PayoutSender;
  stop(): Promise<void>;
  /** Runs every due task once now (tests and the first tick). */
  tick(): Promise<void>;
}

/** What a caller may set of the delivery engine beyond the config (tests: a very long fallback poll). */
export type DeliveryTuning = Pick<
  DeliveryEngineOptions,
  'pollMs' | 'concurrency' | 'perEndpoint' | 'perBusiness' | 'prefetch' | 'leaseSeconds'
>;

export function startWorker(
  runtime: Runtime,
  logger: FastifyBaseLogger,
  tasks = periodicTasks,
  tickMs = 250,
  tuning: DeliveryTuning = {},
): Worker {
  const { db } = runtime;
  let stopped = false;
  let running: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;

  const workerId = newId('wrk');
  /** Tasks this worker is running now (a test's `tick` may overlap the scheduled one). */
  const runningTasks = new Set<string>();
  /** The runs of `aside` tasks under way, which the ticks do not wait for and `stop` does. */
  const asideRuns = new Set<Promise<void>>();
  /**
   * When a scheduled tick next asks for each task. A task this worker ran is not due again before
   * its period, so asking sooner would only cost statements at every tick; one it could not take
   * (not due, or another worker's) is asked for again within a second, as the ticks did before.
   */
  const nextAsk = new Map<string, number>();

  /**
   * Takes the task if it is due and no live lease holds it, in one UPDATE: the next run time and
   * the lease move together, so two workers never both take it. A lease of this worker's own, for
   * a task it is not running, is one whose end could not be written (the database went away
   * mid-run, a failover): that run is over, and the task need not wait for the lease to lapse.
   */
  async function claim(task: PeriodicTask): Promise<boolean> {
    await db
      .insertInto('periodic_tasks')
      .values({ name: task.name })
      .onConflict((conflict) => conflict.column('name').doNothing())
      .execute();
    const claimed = await db
      .updateTable('periodic_tasks')
      .set({
        next_run_at: sql<Date>`now() + make_interval(secs => ${task.everySeconds})`,
        last_run_at: sql<Date>`now()`,
        locked_by: workerId,
        locked_until: sql<Date>`now() + make_interval(secs => ${TASK_LEASE_SECONDS})`,
      })
      .where('name', '=', task.name)
      .where('next_run_at', '<=', sql<Date>`now()`)
      .where((eb) =>
        eb.or([
          eb('locked_until', 'is', null),
          eb('locked_until', '<=', sql<Date>`now()`),
          eb('locked_by', '=', workerId),
        ]),
      )
      .returning('name')
      .executeTakeFirst();
    return claimed !== undefined;
  }

  /** Keeps the lease of a running task; a lease another worker took since (it lapsed) stays theirs. */
  function keepLease(task: PeriodicTask): () => void {
    let renewing = false;
    const timer = setInterval(
      () => {
        if (renewing) return;
        renewing = true;
        db.updateTable('periodic_tasks')
          .set({ locked_until: sql<Date>`now() + make_interval(secs => ${TASK_LEASE_SECONDS})` })
          .where('name', '=', task.name)
          .where('locked_by', '=', workerId)
          .executeTakeFirst()
          .then((result) => {
            if (result.numUpdatedRows === 0n)
              logger.warn({ task: task.name }, 'periodic task lease lost while running');
          })
          .catch((error: unknown) =>
            logger.warn({ err: error, task: task.name }, 'could not renew a periodic task lease'),
          )
          .finally(() => (renewing = false));
      },
      (TASK_LEASE_SECONDS * 1000) / 4,
    );
    return () => clearInterval(timer);
  }

  /** Ends a run: its outcome, and the lease given back (if it is still this worker's). */
  async function finish(task: PeriodicTask, error: string | null): Promise<void> {
    await db
      .updateTable('periodic_tasks')
      .set((eb) => ({
        last_error: error,
        locked_by: eb.case().when('locked_by', '=', workerId).then(null).else(eb.ref('locked_by')).end(),
        locked_until: eb.case().when('locked_by', '=', workerId).then(null).else(eb.ref('locked_until')).end(),
      }))
      .where('name', '=', task.name)
      .execute();
  }

  /** Claims and runs one task if it is due, its lease given back after; whether it ran. */
  async function runIfDue(task: PeriodicTask): Promise<boolean> {
    let claimed: boolean;
    try {
      claimed = await claim(task);
    } catch (error) {
      logger.error({ err: error, task: task.name }, 'could not claim a periodic task');
      return false;
    }
    if (!claimed) return false;
    const stopRenewing = keepLease(task);
    let failure: string | null = null;
    try {
      const result = await task.run(runtime);
      if (putOffWork(result)) logger.warn({ task: task.name, result }, 'periodic task put work off to its next run');
      else logger.debug({ task: task.name, result }, 'periodic task done');
    } catch (error) {
      failure = String(error);
      logger.error({ err: error, task: task.name }, 'periodic task failed');
    } finally {
      stopRenewing();
    }
    // A lease left behind (the database away) is this worker's again at its next turn (claim),
    // and another worker's once it lapses.
    await finish(task, failure).catch((error: unknown) =>
      logger.warn({ err: error, task: task.name }, 'could not record the end of a periodic task'),
    );
    return true;
  }

  /** Asks for every task (a scheduled tick: those whose `nextAsk` has come) and runs the due ones. */
  async function tick(scheduled = false): Promise<void> {
    for (const task of tasks) {
      if (stopped) return;
      if (runningTasks.has(task.name)) continue;
      if (scheduled && (nextAsk.get(task.name) ?? 0) > Date.now()) continue;
      runningTasks.add(task.name);
      const askedAt = Date.now();
      const turn = runIfDue(task)
        .then((ran) => {
          // From when it was asked for, as its `next_run_at` is: a 250 ms task runs every 250 ms.
          const waitSeconds = ran ? task.everySeconds : Math.min(task.everySeconds, 1);
          nextAsk.set(task.name, askedAt + waitSeconds * 1000);
        })
        .finally(() => runningTasks.delete(task.name));
      if (task.aside) {
        asideRuns.add(turn);
        void turn.finally(() => asideRuns.delete(turn));
      } else {
        await turn;
      }
    }
  }

  function schedule(): void {
    if (stopped) return;
    timer = setTimeout(() => {
      running = tick(true).finally(schedule);
    }, tickMs);
  }

  const deliveries = startDeliveryEngine(db, logger, {
    retryScale: runtime.config.webhookRetryScale,
    webhookAllowPrivate: runtime.config.webhookAllowPrivate,
    timeoutMs: runtime.config.webhookTimeoutMs,
    connectTimeoutMs: runtime.config.webhookConnectTimeoutMs,
    ...tuning,
  });
  // Woken by each commit that adds deliveries; the engine's own poll is the fallback.
  const listening = runtime.database
    .listen(
      WAKE_CHANNEL,
      () => deliveries.poke(),
      (error) => logger.warn({ err: error }, 'lost the webhook notification connection; reconnecting'),
    )
    .catch((error: unknown) => {
      logger.warn({ err: error }, 'could not listen for webhook notifications; polling only');
      return undefined;
    });
  // On PostgreSQL each sender holds a connection while it sends: half the pool at most, so that a
  // flood of payouts never leaves the API (in the same process) and the tasks without one.
  const kind = runtime.database.kind;
  const senders =
    kind === 'postgres'
      ? Math.min(SENDERS.postgres, Math.max(1, Math.floor(runtime.config.dbPoolSize / 2)))
      : SENDERS[kind];
  const payouts = startPayoutSender(db, logger, { senders });
  running = tick().finally(schedule);
  return {
    deliveries,
    payouts,
    tick: () => tick(),
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
      await Promise.all(asideRuns);
      await (await listening)?.close();
      await Promise.all([deliveries.stop(), payouts.stop()]);
    },
  };
}
