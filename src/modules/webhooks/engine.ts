import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { newId } from '../../lib/ids.js';
import { claimDeliveries, type ClaimedDelivery } from './delivery/claim.js';
import { OutcomeWriter } from './delivery/outcome-writer.js';
import { releaseDeliveries } from './delivery/release.js';
import { keepLeases } from './delivery/renew-leases.js';
import { DeliveryScheduler } from './delivery/scheduler.js';
import { sendDelivery } from './delivery/send.js';

/**
 * Deliveries one worker holds at most: claimed and not yet recorded (queued for a slot, in flight,
 * or having their outcome written). A backlog drains at about this many per claim-send-record
 * cycle: at 256 (4 x the 64 in flight), a backlog over 50 endpoints drained at 2,429-3,110/s with
 * half of the 2 cores idle; at 2,048, 4,350-4,996/s. The cost is memory: each held delivery keeps
 * its event's body (about 1 KB for a payment event) until its outcome is written.
 */
const MAX_HELD = 2048;
/** See SchedulerLimits: an attempt unanswered after half a second waits on its receiver alone. */
const STALLED_AFTER_MS = 500;
const MAX_IN_FLIGHT = 512;

export interface DeliveryEngineOptions {
  retryScale: number;
  webhookAllowPrivate: boolean;
  timeoutMs: number;
  connectTimeoutMs: number;
  /** Attempts in flight in this process, over all endpoints. */
  concurrency?: number;
  /** Attempts in flight to one endpoint, over all processes. */
  perEndpoint?: number;
  /**
   * Attempts in flight in this process that one business (in one environment) always gets; above
   * it, only while more than `concurrency / 4` slots are free, so slow or silent businesses
   * never hold every slot.
   */
  perBusiness?: number;
  /**
   * Deliveries of a fast endpoint this worker may hold claimed beyond the bound while it is the
   * only worker holding that endpoint's deliveries: the next attempt starts as soon as one ends,
   * while outcomes are written and claims made in batches behind it.
   */
  prefetch?: number;
  /** The fallback poll: notifications wake the worker; this catches what they cannot (a lapsed lease). */
  pollMs?: number;
  leaseSeconds?: number;
}

export interface DeliveryEngine {
  /** Claims due deliveries now instead of at the next poll (a notification, a test). */
  poke(): void;
  /** Stops claiming, gives back the deliveries claimed but not sent, and waits for the attempts in flight. */
  stop(): Promise<void>;
}

/**
 * The delivery loop of a worker, in phases: claim (delivery/claim.ts), schedule
 * (delivery/scheduler.ts), send (delivery/send.ts), record (delivery/record-outcomes.ts). A
 * delivery is claimed with a lease (`locked_until`) that this worker extends while it holds the
 * delivery (delivery/renew-leases.ts). If the worker dies, the lease lapses and another worker
 * takes the delivery: nothing is lost, and no two workers hold the same attempt at once.
 *
 * The phases are decoupled: one claim statement takes many due deliveries, the scheduler starts
 * sends as slots free up, and the outcomes that arrived meanwhile are written by one statement.
 */
export function startDeliveryEngine(
  db: Kysely<DB>,
  logger: FastifyBaseLogger,
  options: DeliveryEngineOptions,
): DeliveryEngine {
  const workerId = newId('wrk');
  const concurrency = options.concurrency ?? 64;
  const perEndpoint = options.perEndpoint ?? 4;
  const prefetch = options.prefetch ?? 128;
  const pollMs = options.pollMs ?? 1000;
  const leaseSeconds = options.leaseSeconds ?? 10;
  const scheduler = new DeliveryScheduler<ClaimedDelivery>({
    concurrency,
    perEndpoint,
    perBusiness: options.perBusiness ?? Math.max(2 * perEndpoint, Math.floor(concurrency / 8)),
    reserved: Math.floor(concurrency / 4),
    maxHeld: MAX_HELD,
    stalledAfterMs: STALLED_AFTER_MS,
    maxInFlight: MAX_IN_FLIGHT,
  });
  const sends = new Set<Promise<void>>();
  const outcomes = new OutcomeWriter(db, workerId, options.retryScale, logger, (recorded) => {
    scheduler.forget(recorded);
    poke();
  });
  let stopped = false;
  let wanted = true;
  let wake: (() => void) | undefined;
  let stallTimer: NodeJS.Timeout | undefined;

  function poke(): void {
    wanted = true;
    wake?.();
  }

  function pump(): void {
    if (stopped) return;
    const now = Date.now();
    for (const delivery of scheduler.takeStartable(now)) start(delivery);
    // Deliveries left waiting for a slot get one when the oldest attempt stalls, if none ends first.
    const stallInMs = scheduler.msUntilStall(now);
    if (stallInMs !== null && !stallTimer) {
      stallTimer = setTimeout(() => {
        stallTimer = undefined;
        pump();
      }, stallInMs + 1);
    }
  }

  function start(delivery: ClaimedDelivery): void {
    const run: Promise<void> = sendDelivery(delivery, options)
      .then(
        (outcome) => {
          scheduler.noteAnswer(delivery.endpoint_id, outcome.durationMs, delivery.max_per_second !== null, Date.now());
          outcomes.add(outcome);
        },
        (error: unknown) => {
          scheduler.forget([delivery.id]);
          logger.error({ err: error, deliveryId: delivery.id }, 'webhook attempt failed');
        },
      )
      .finally(() => {
        sends.delete(run);
        scheduler.finished(delivery);
        outcomes.flush();
        pump();
      });
    sends.add(run);
  }

  async function loop(): Promise<void> {
    while (!stopped) {
      let waitMs = pollMs;
      const free = scheduler.room;
      if (wanted && free > 0) {
        wanted = false;
        try {
          const { claimed, waitMs: next } = await claimDeliveries(db, {
            workerId,
            limit: free,
            perEndpoint,
            prefetch,
            fast: scheduler.fastEndpoints(Date.now()),
            held: scheduler.heldIds(),
            leaseSeconds,
          });
          scheduler.hold(claimed);
          pump();
          if (claimed.length >= free) wanted = true;
          if (next !== null) waitMs = Math.min(pollMs, Math.max(1, Math.ceil(next)));
        } catch (error) {
          logger.error({ err: error }, 'could not claim webhook deliveries');
        }
      }
      if (stopped) break;
      if (wanted && scheduler.room > 0) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          wanted = true;
          resolve();
        }, waitMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = undefined;
    }
  }

  const stopRenewing = keepLeases(
    db,
    workerId,
    () => scheduler.heldIds(),
    leaseSeconds,
    (error) => logger.warn({ err: error }, 'webhook lease heartbeat failed'),
  );
  const running = loop();

  return {
    poke,
    async stop() {
      stopped = true;
      clearTimeout(stallTimer);
      wake?.();
      await running;
      try {
        await releaseDeliveries(db, workerId, scheduler.takeQueued());
      } catch (error) {
        // Their leases lapse and another worker takes them (each with one more attempt counted).
        logger.warn({ err: error }, 'could not give back unsent webhook deliveries');
      }
      // Until the attempts in flight end (each within the send timeout; nothing new starts once
      // stopped), an outcome that meets a lost database waits for it as while running: given up
      // sooner, its delivery would be sent again. Only then does the writer give up on it.
      while (sends.size > 0) await Promise.all([...sends]);
      outcomes.stopping = true;
      while (sends.size > 0 || outcomes.busy) {
        await Promise.all([...sends]);
        await outcomes.drain();
      }
      stopRenewing();
    },
  };
}
