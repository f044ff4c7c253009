import type { FastifyBaseLogger } from 'fastify';
import { sql } from 'kysely';
import type { Runtime } from '../bootstrap.js';
import { foldListCounts } from '../db/counted-list.js';
import { deleteExpiredIdempotencyKeys } from '../http/idempotency/store.js';
import { expireDueIntents } from '../modules/intents/service.js';
import { foldPendingMovements } from '../modules/payments/ledger.js';
import { sendDuePayouts } from '../modules/payouts/send.js';
import { startDeliveryEngine, type DeliveryEngine, type DeliveryEngineOptions } from '../modules/webhooks/engine.js';
import { checkFailingEndpoints } from '../modules/webhooks/health.js';
import { deleteOldRollups } from '../modules/webhooks/stats.js';
import { WAKE_CHANNEL } from '../modules/webhooks/wake.js';
import { deleteExpiredUnknownPhoneAttempts } from '../modules/wallets/service.js';

/** Warns about, then disables, webhook endpoints that have been failing (settings from the config). */
export function webhookAutoDisable(runtime: Runtime) {
  return checkFailingEndpoints(runtime.db, {
    disableAfterHours: runtime.config.webhookDisableAfterHours,
    warningHours: runtime.config.webhookDisableWarningHours,
  });
}

/** A recurring task: at most one worker runs it at a time, whatever the number of workers. */
export interface PeriodicTask {
  name: string;
  everySeconds: number;
  run(runtime: Runtime): Promise<unknown>;
}

export const periodicTasks: PeriodicTask[] = [
  { name: 'idempotency-cleanup', everySeconds: 600, run: (runtime) => deleteExpiredIdempotencyKeys(runtime.db) },
  // decisions.md: expiry within 60 s of expiresAt; the first tick at start catches up after downtime.
  { name: 'intent-expiry', everySeconds: 10, run: (runtime) => expireDueIntents(runtime.db) },
  // Shared ledger accounts take their pending movements into their balance row (ledger.ts).
  { name: 'ledger-fold', everySeconds: 1, run: (runtime) => foldPendingMovements(runtime.db, 1000) },
  // Writers count list rows under their own slot (counted-list.ts); this sums them per day.
  // Payouts are sent by the worker, each in its own transaction (payouts/send.ts).
  { name: 'payout-send', everySeconds: 1, run: (runtime) => sendDuePayouts(runtime.db) },
  { name: 'list-count-fold', everySeconds: 5, run: (runtime) => foldListCounts(runtime.db) },
  { name: 'webhook-auto-disable', everySeconds: 60, run: webhookAutoDisable },
  { name: 'webhook-rollup-cleanup', everySeconds: 3600, run: (runtime) => deleteOldRollups(runtime.db) },
  { name: 'pin-attempts-cleanup', everySeconds: 600, run: (runtime) => deleteExpiredUnknownPhoneAttempts(runtime.db) },
];

export interface Worker {
  /** The webhook delivery loop of this worker. */
  deliveries: DeliveryEngine;
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
  tickMs = 1000,
  tuning: DeliveryTuning = {},
): Worker {
  const { db } = runtime;
  let stopped = false;
  let running: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;

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
      })
      .where('name', '=', task.name)
      .where('next_run_at', '<=', sql<Date>`now()`)
      .returning('name')
      .executeTakeFirst();
    return claimed !== undefined;
  }

  async function tick(): Promise<void> {
    for (const task of tasks) {
      if (stopped) return;
      try {
        if (!(await claim(task))) continue;
        const result = await task.run(runtime);
        await db.updateTable('periodic_tasks').set({ last_error: null }).where('name', '=', task.name).execute();
        logger.debug({ task: task.name, result }, 'periodic task done');
      } catch (error) {
        logger.error({ err: error, task: task.name }, 'periodic task failed');
        await db
          .updateTable('periodic_tasks')
          .set({ last_error: String(error) })
          .where('name', '=', task.name)
          .execute()
          .catch(() => {});
      }
    }
  }

  function schedule(): void {
    if (stopped) return;
    timer = setTimeout(() => {
      running = tick().finally(schedule);
    }, tickMs);
  }

  const deliveries = startDeliveryEngine(db, logger, {
    retryScale: runtime.config.webhookRetryScale,
    webhookAllowPrivate: runtime.config.webhookAllowPrivate,
    timeoutMs: runtime.config.webhookTimeoutMs,
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
  running = tick().finally(schedule);
  return {
    deliveries,
    tick: () => tick(),
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
      await (await listening)?.close();
      await deliveries.stop();
    },
  };
}
