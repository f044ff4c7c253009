import type { FastifyBaseLogger } from 'fastify';
import { sql, type Kysely } from 'kysely';
import type { DB, Environment } from '../../db/schema.js';
import { newId } from '../../lib/ids.js';
import { allowsPrivate } from './endpoints.js';
import { postWebhook } from './sender.js';
import { DELIVERY_HEADER, EVENT_HEADER, SIGNATURE_HEADER, signatureHeader, TIMESTAMP_HEADER } from './signing.js';

/** api.md 6.1, read as gaps (decisions): the wait after each failed attempt, in seconds. */
export const RETRY_GAPS_SECONDS = [30, 120, 900, 3600, 14_400, 43_200, 86_400] as const;
export const MAX_ATTEMPTS = RETRY_GAPS_SECONDS.length + 1;

export interface DeliveryEngineOptions {
  retryScale: number;
  webhookAllowPrivate: boolean;
  timeoutMs: number;
  /** Attempts in flight in this process, over all endpoints. */
  concurrency?: number;
  /** Attempts in flight to one endpoint, over all processes. */
  perEndpoint?: number;
  pollMs?: number;
  leaseSeconds?: number;
}

interface ClaimedDelivery {
  id: string;
  attempt_count: number;
  attempts_total: number;
  event: string;
  environment: Environment;
  url: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  body: string;
}

export interface DeliveryEngine {
  /** Claims due deliveries now instead of at the next poll. */
  poke(): void;
  /** Stops claiming and waits for the attempts in flight. */
  stop(): Promise<void>;
}

/**
 * The delivery loop of a worker. A delivery is claimed with a lease (`locked_until`) that this
 * worker extends while the attempt runs; the attempt is counted and logged at claim time. If the
 * worker dies, the lease lapses and another worker takes the delivery: nothing is lost, and no
 * two workers hold the same attempt at once.
 */
export function startDeliveryEngine(
  db: Kysely<DB>,
  logger: FastifyBaseLogger,
  options: DeliveryEngineOptions,
): DeliveryEngine {
  const workerId = newId('wrk');
  const concurrency = options.concurrency ?? 64;
  const perEndpoint = options.perEndpoint ?? 4;
  const pollMs = options.pollMs ?? 100;
  const leaseSeconds = options.leaseSeconds ?? 10;
  const inFlight = new Map<string, Promise<void>>();
  let stopped = false;
  let wake: (() => void) | undefined;

  async function claim(limit: number): Promise<ClaimedDelivery[]> {
    const result = await sql<ClaimedDelivery>`
      WITH due AS (
        SELECT d.id, d.endpoint_id, d.next_attempt_at
        FROM webhook_deliveries d
        JOIN webhook_endpoints e ON e.id = d.endpoint_id AND e.deleted_at IS NULL AND (e.active OR d.event = 'ping')
        WHERE d.status = 'PENDING' AND d.next_attempt_at <= now()
          AND (d.locked_until IS NULL OR d.locked_until <= now())
        ORDER BY d.next_attempt_at
        LIMIT 1000
      ),
      busy AS (
        SELECT endpoint_id, count(*) AS n FROM webhook_deliveries
        WHERE locked_until IS NOT NULL AND locked_until > now() AND status = 'PENDING'
        GROUP BY endpoint_id
      ),
      ranked AS (
        SELECT due.id, due.next_attempt_at,
          row_number() OVER (PARTITION BY due.endpoint_id ORDER BY due.next_attempt_at, due.id) AS rank,
          coalesce(busy.n, 0) AS busy
        FROM due LEFT JOIN busy ON busy.endpoint_id = due.endpoint_id
      ),
      picked AS (
        SELECT id FROM ranked WHERE rank + busy <= ${perEndpoint} ORDER BY next_attempt_at LIMIT ${limit}
      ),
      claimed AS (
        UPDATE webhook_deliveries w
        SET attempt_count = w.attempt_count + 1, attempts_total = w.attempts_total + 1, locked_by = ${workerId},
            locked_until = now() + make_interval(secs => ${leaseSeconds}), updated_at = now()
        FROM picked
        WHERE w.id = picked.id AND w.status = 'PENDING' AND (w.locked_until IS NULL OR w.locked_until <= now())
        RETURNING w.id, w.attempt_count, w.attempts_total, w.endpoint_id, w.event_id, w.event, w.environment
      ),
      logged AS (
        INSERT INTO webhook_attempts (delivery_id, attempt, started_at, error)
        SELECT id, attempts_total, now(), 'no outcome recorded: the worker stopped during the attempt' FROM claimed
      )
      SELECT c.id, c.attempt_count, c.attempts_total, c.event, c.environment, e.url, e.secret, e.previous_secret,
             e.previous_secret_expires_at, ev.body
      FROM claimed c
      JOIN webhook_endpoints e ON e.id = c.endpoint_id
      JOIN events ev ON ev.id = c.event_id`.execute(db);
    return result.rows;
  }

  async function attempt(delivery: ClaimedDelivery): Promise<void> {
    const started = Date.now();
    const timestamp = Math.floor(started / 1000);
    const secrets = [delivery.secret];
    if (
      delivery.previous_secret &&
      delivery.previous_secret_expires_at &&
      delivery.previous_secret_expires_at.getTime() > started
    ) {
      secrets.push(delivery.previous_secret);
    }
    const outcome = await postWebhook(
      delivery.url,
      delivery.body,
      {
        'Content-Type': 'application/json',
        'User-Agent': 'Commerce-Webhooks/1',
        [SIGNATURE_HEADER]: signatureHeader(secrets, timestamp, delivery.body),
        [TIMESTAMP_HEADER]: String(timestamp),
        [EVENT_HEADER]: delivery.event,
        [DELIVERY_HEADER]: delivery.id,
      },
      { timeoutMs: options.timeoutMs, allowPrivate: allowsPrivate(delivery.environment, options.webhookAllowPrivate) },
    );
    const durationMs = Date.now() - started;
    const succeeded = outcome.statusCode !== null && outcome.statusCode >= 200 && outcome.statusCode < 300;
    const error = succeeded ? null : (outcome.error ?? `HTTP ${outcome.statusCode}`);
    const dead = !succeeded && delivery.attempt_count >= MAX_ATTEMPTS;
    const gapSeconds = RETRY_GAPS_SECONDS[Math.min(delivery.attempt_count, RETRY_GAPS_SECONDS.length) - 1] ?? 0;
    // One statement: the attempt's outcome, and the delivery's next state only while the claim
    // is still ours (a lapsed lease means another worker owns the delivery now).
    const next = succeeded ? 'SUCCEEDED' : dead ? 'DEAD' : 'PENDING';
    await sql`
      WITH logged AS (
        UPDATE webhook_attempts
        SET status_code = ${outcome.statusCode}, duration_ms = ${durationMs}, error = ${error},
            response_snippet = ${outcome.responseSnippet}
        WHERE delivery_id = ${delivery.id} AND attempt = ${delivery.attempts_total}
      )
      UPDATE webhook_deliveries
      SET status = ${next},
          next_attempt_at = now() + make_interval(secs => ${next === 'PENDING' ? gapSeconds * options.retryScale : 0}),
          locked_by = NULL, locked_until = NULL, last_status_code = ${outcome.statusCode}, last_error = ${error},
          completed_at = ${next === 'PENDING' ? null : sql`now()`}, updated_at = now()
      WHERE id = ${delivery.id} AND locked_by = ${workerId} AND attempts_total = ${delivery.attempts_total}`.execute(
      db,
    );
  }

  async function heartbeat(): Promise<void> {
    if (inFlight.size === 0) return;
    await db
      .updateTable('webhook_deliveries')
      .set({ locked_until: sql<Date>`now() + make_interval(secs => ${leaseSeconds})` })
      .where('locked_by', '=', workerId)
      .where('id', 'in', [...inFlight.keys()])
      .execute();
  }

  function launch(delivery: ClaimedDelivery): void {
    const run = attempt(delivery)
      .catch((error: unknown) =>
        logger.error({ err: error, deliveryId: delivery.id }, 'webhook attempt failed to record'),
      )
      .finally(() => {
        inFlight.delete(delivery.id);
        wake?.();
      });
    inFlight.set(delivery.id, run);
  }

  async function loop(): Promise<void> {
    while (!stopped) {
      let claimedAll = false;
      const free = concurrency - inFlight.size;
      if (free > 0) {
        try {
          const claimed = await claim(free);
          for (const delivery of claimed) launch(delivery);
          claimedAll = claimed.length === free;
        } catch (error) {
          logger.error({ err: error }, 'could not claim webhook deliveries');
        }
      }
      if (claimedAll || stopped) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, pollMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = undefined;
    }
  }

  const heartbeats = setInterval(
    () => {
      heartbeat().catch((error: unknown) => logger.warn({ err: error }, 'webhook lease heartbeat failed'));
    },
    Math.max(500, (leaseSeconds * 1000) / 4),
  );
  const running = loop();

  return {
    poke: () => wake?.(),
    async stop() {
      stopped = true;
      wake?.();
      await running;
      await Promise.all(inFlight.values());
      clearInterval(heartbeats);
    },
  };
}
