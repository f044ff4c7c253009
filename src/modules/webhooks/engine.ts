import type { FastifyBaseLogger } from 'fastify';
import { sql, type Kysely } from 'kysely';
import type { DB, Environment } from '../../db/schema.js';
import { isConnectionLoss } from '../../http/error-handler.js';
import { newId } from '../../lib/ids.js';
import { allowsPrivate } from './endpoints.js';
import { postWebhook } from './sender.js';
import {
  DELIVERY_HEADER,
  EVENT_HEADER,
  SIGNATURE_HEADER,
  signatureHeader,
  STANDARD_ID_HEADER,
  STANDARD_SIGNATURE_HEADER,
  STANDARD_TIMESTAMP_HEADER,
  standardSignatureHeader,
  TIMESTAMP_HEADER,
  type SignatureScheme,
} from './signing.js';
import { latencyBucket } from './stats.js';

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
  endpoint_id: string;
  event_id: string;
  event: string;
  signature_scheme: SignatureScheme;
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

  /**
   * One statement claims up to `limit` due deliveries. Per endpoint it keeps the concurrency
   * bound (over every worker) and, for endpoints with `max_per_second`, the attempts started in
   * the current second of the database clock: those endpoint rows are locked (in id order) while
   * the statement counts, so workers claiming at once share one budget. Endpoints already at
   * their bound are skipped before the due window is cut, so they do not crowd out the rest.
   */
  async function claim(limit: number): Promise<ClaimedDelivery[]> {
    const result = await sql<ClaimedDelivery>`
      WITH busy AS (
        SELECT endpoint_id, count(*) AS n FROM webhook_deliveries
        WHERE locked_until IS NOT NULL AND locked_until > now() AND status = 'PENDING'
        GROUP BY endpoint_id
      ),
      due AS (
        SELECT d.id, d.endpoint_id, d.next_attempt_at
        FROM webhook_deliveries d
        JOIN webhook_endpoints e ON e.id = d.endpoint_id AND e.deleted_at IS NULL AND (e.active OR d.event = 'ping')
          AND NOT (e.max_per_second IS NOT NULL AND e.rate_window_at = date_trunc('second', now())
                   AND e.rate_window_count >= e.max_per_second)
        WHERE d.status = 'PENDING' AND d.next_attempt_at <= now()
          AND (d.locked_until IS NULL OR d.locked_until <= now())
          AND d.endpoint_id NOT IN (SELECT endpoint_id FROM busy WHERE n >= ${perEndpoint})
          AND NOT (d.id = ANY(${[...inFlight.keys()]}::text[]))
        ORDER BY d.next_attempt_at
        LIMIT 1000
      ),
      paced AS (
        SELECT e.id, e.max_per_second
          - CASE WHEN e.rate_window_at = date_trunc('second', now()) THEN e.rate_window_count ELSE 0 END AS room
        FROM webhook_endpoints e
        WHERE e.max_per_second IS NOT NULL AND e.id IN (SELECT endpoint_id FROM due)
        ORDER BY e.id
        FOR UPDATE
      ),
      ranked AS (
        SELECT due.id, due.next_attempt_at,
          row_number() OVER (PARTITION BY due.endpoint_id ORDER BY due.next_attempt_at, due.id) AS rank,
          coalesce(busy.n, 0) AS busy, paced.room
        FROM due
        LEFT JOIN busy ON busy.endpoint_id = due.endpoint_id
        LEFT JOIN paced ON paced.id = due.endpoint_id
      ),
      picked AS (
        SELECT id FROM ranked
        WHERE rank + busy <= ${perEndpoint} AND (room IS NULL OR rank <= room)
        ORDER BY next_attempt_at LIMIT ${limit}
      ),
      claimed AS (
        UPDATE webhook_deliveries w
        SET attempt_count = w.attempt_count + 1, attempts_total = w.attempts_total + 1, locked_by = ${workerId},
            locked_until = now() + make_interval(secs => ${leaseSeconds}), updated_at = now()
        FROM picked
        WHERE w.id = picked.id AND w.status = 'PENDING' AND (w.locked_until IS NULL OR w.locked_until <= now())
        RETURNING w.id, w.attempt_count, w.attempts_total, w.endpoint_id, w.event_id, w.event, w.environment
      ),
      counted AS (
        UPDATE webhook_endpoints e
        SET rate_window_count = c.n
              + CASE WHEN e.rate_window_at = date_trunc('second', now()) THEN e.rate_window_count ELSE 0 END,
            rate_window_at = date_trunc('second', now())
        FROM (SELECT endpoint_id, count(*) AS n FROM claimed GROUP BY endpoint_id) c
        WHERE e.id = c.endpoint_id AND e.max_per_second IS NOT NULL
      ),
      logged AS (
        INSERT INTO webhook_attempts (delivery_id, attempt, started_at, error)
        SELECT id, attempts_total, now(), 'no outcome recorded: the worker stopped during the attempt' FROM claimed
      )
      SELECT c.id, c.attempt_count, c.attempts_total, c.endpoint_id, c.event_id, c.event, c.environment, e.url,
             e.signature_scheme, e.secret, e.previous_secret, e.previous_secret_expires_at, ev.body
      FROM claimed c
      JOIN webhook_endpoints e ON e.id = c.endpoint_id
      JOIN events ev ON ev.id = c.event_id`.execute(db);
    return result.rows;
  }

  /** The headers of one attempt, signed with every secret in use (two during a rotation). */
  function headersFor(delivery: ClaimedDelivery, secrets: string[], timestamp: number): Record<string, string> {
    const common = {
      'Content-Type': 'application/json',
      'User-Agent': 'Commerce-Webhooks/1',
    };
    switch (delivery.signature_scheme) {
      case 'commerce':
        return {
          ...common,
          [SIGNATURE_HEADER]: signatureHeader(secrets, timestamp, delivery.body),
          [TIMESTAMP_HEADER]: String(timestamp),
          [EVENT_HEADER]: delivery.event,
          [DELIVERY_HEADER]: delivery.id,
        };
      case 'standard':
        // webhook-id is the event id: the same on every attempt, what receivers deduplicate on.
        return {
          ...common,
          [STANDARD_ID_HEADER]: delivery.event_id,
          [STANDARD_TIMESTAMP_HEADER]: String(timestamp),
          [STANDARD_SIGNATURE_HEADER]: standardSignatureHeader(secrets, delivery.event_id, timestamp, delivery.body),
          [EVENT_HEADER]: delivery.event,
          [DELIVERY_HEADER]: delivery.id,
        };
      default: {
        const unknown: never = delivery.signature_scheme;
        throw new Error(`unknown signature scheme ${String(unknown)}`);
      }
    }
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
    const outcome = await postWebhook(delivery.url, delivery.body, headersFor(delivery, secrets, timestamp), {
      timeoutMs: options.timeoutMs,
      allowPrivate: allowsPrivate(delivery.environment, options.webhookAllowPrivate),
    });
    const durationMs = Date.now() - started;
    const succeeded = outcome.errorClass === null;
    const error = outcome.error;
    const dead = !succeeded && delivery.attempt_count >= MAX_ATTEMPTS;
    const gapSeconds = RETRY_GAPS_SECONDS[Math.min(delivery.attempt_count, RETRY_GAPS_SECONDS.length) - 1] ?? 0;
    const next = succeeded ? 'SUCCEEDED' : dead ? 'DEAD' : 'PENDING';
    // One statement records the attempt (what was sent and what came back), bumps the hourly
    // rollup the stats read, starts or ends the endpoint's failing run, and moves the delivery
    // on, the last only while the claim is still ours (a lapsed lease means another worker owns
    // the delivery now).
    await untilRecorded(() =>
      sql`
      WITH logged AS (
        UPDATE webhook_attempts
        SET status_code = ${outcome.statusCode}, duration_ms = ${durationMs}, error = ${error},
            error_class = ${outcome.errorClass}, request_headers = ${JSON.stringify(outcome.requestHeaders)}::jsonb,
            response_headers = ${outcome.responseHeaders ? JSON.stringify(outcome.responseHeaders) : null}::jsonb,
            response_body = ${outcome.responseBody}
        WHERE delivery_id = ${delivery.id} AND attempt = ${delivery.attempts_total}
        RETURNING started_at
      ),
      rolled AS (
        INSERT INTO webhook_attempt_rollups AS r
          (endpoint_id, hour, outcome, latency_bucket, attempts, last_error, last_error_at, last_status_code)
        SELECT ${delivery.endpoint_id}, date_trunc('hour', started_at, 'UTC'), ${outcome.errorClass ?? 'SUCCEEDED'},
          ${latencyBucket(durationMs)}, 1, ${error}, ${succeeded ? null : sql`now()`}, ${outcome.statusCode}
        FROM logged
        ON CONFLICT (endpoint_id, hour, outcome, latency_bucket) DO UPDATE
        SET attempts = r.attempts + 1, last_error = coalesce(excluded.last_error, r.last_error),
            last_error_at = coalesce(excluded.last_error_at, r.last_error_at),
            last_status_code = coalesce(excluded.last_status_code, r.last_status_code)
      ),
      health AS (
        UPDATE webhook_endpoints
        SET failing_since = ${succeeded ? null : sql`(SELECT started_at FROM logged)`},
            disable_warned_at = NULL
        WHERE id = ${delivery.endpoint_id} AND failing_since IS ${succeeded ? sql`NOT NULL` : sql`NULL`}
      )
      UPDATE webhook_deliveries
      SET status = ${next},
          next_attempt_at = now() + make_interval(secs => ${next === 'PENDING' ? gapSeconds * options.retryScale : 0}),
          locked_by = NULL, locked_until = NULL, last_status_code = ${outcome.statusCode}, last_error = ${error},
          completed_at = ${next === 'PENDING' ? null : sql`now()`}, updated_at = now()
      WHERE id = ${delivery.id} AND locked_by = ${workerId} AND attempts_total = ${delivery.attempts_total}`.execute(
        db,
      ),
    );
  }

  /**
   * The receiver already has the request when its outcome is written. If the database is out of
   * reach then, the outcome waits here and is written once it is back: the delivery stays in
   * flight (the claim skips it, the heartbeat renews its lease when it can) rather than being
   * sent again when its lease lapses. Only a stopping worker gives up; its delivery is then sent
   * again by whoever claims it (at least once, as always).
   */
  async function untilRecorded(write: () => Promise<unknown>): Promise<void> {
    for (let waitMs = 100; ; waitMs = Math.min(waitMs * 2, 2000)) {
      try {
        await write();
        return;
      } catch (error) {
        if (stopped || !isConnectionLoss(error)) throw error;
      }
      await new Promise((resolve) => setTimeout(resolve, waitMs));
    }
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
