import type { FastifyBaseLogger } from 'fastify';
import { sql, type Kysely } from 'kysely';
import type { DB, Environment } from '../../db/schema.js';
import { isConnectionLoss } from '../../http/error-handler.js';
import { newId } from '../../lib/ids.js';
import { allowsPrivate } from './endpoints.js';
import { postWebhook, type PostOutcome } from './sender.js';
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
/** Each retry waits its gap give or take this fraction, so failures at one moment do not all retry at one moment. */
export const RETRY_JITTER = 0.1;

/** The wait, in seconds, after failed attempt number `attemptCount` of a schedule: its gap, scaled and jittered. */
export function retryDelaySeconds(attemptCount: number, scale: number, random: () => number = Math.random): number {
  const gap = RETRY_GAPS_SECONDS[Math.min(Math.max(attemptCount, 1), RETRY_GAPS_SECONDS.length) - 1]!;
  return gap * scale * (1 + (random() * 2 - 1) * RETRY_JITTER);
}

/**
 * How soon to claim again when another worker was claiming some of the endpoints with work: it
 * holds them for one statement, so they are free again within a few milliseconds.
 */
const SKIPPED_RETRY_MS = 5;
/** Outcomes written by one statement at most. */
const RECORD_BATCH = 500;
/**
 * Deliveries one worker holds at most: claimed and not yet recorded (queued for a slot, in flight,
 * or having their outcome written). A backlog drains at about this many per claim-send-record
 * cycle: at 256 (4 x the 64 in flight), a backlog over 50 endpoints drained at 2,429-3,110/s with
 * half of the 2 cores idle; at 2,048, 4,350-4,996/s. The cost is memory: each held delivery keeps
 * its event's body (about 1 KB for a payment event) until its outcome is written.
 */
const MAX_HELD = 2048;
/** An endpoint whose last answer took at most this long gets deliveries claimed ahead of its free slots. */
const FAST_ANSWER_MS = 250;

export interface DeliveryEngineOptions {
  retryScale: number;
  webhookAllowPrivate: boolean;
  timeoutMs: number;
  /** Attempts in flight in this process, over all endpoints. */
  concurrency?: number;
  /** Attempts in flight to one endpoint, over all processes. */
  perEndpoint?: number;
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
  max_per_second: number | null;
  body: string;
}

interface Outcome {
  delivery: ClaimedDelivery;
  result: PostOutcome;
  durationMs: number;
}

export interface DeliveryEngine {
  /** Claims due deliveries now instead of at the next poll (a notification, a test). */
  poke(): void;
  /** Stops claiming, gives back the deliveries claimed but not sent, and waits for the attempts in flight. */
  stop(): Promise<void>;
}

/**
 * The delivery loop of a worker. A delivery is claimed with a lease (`locked_until`) that this
 * worker extends while it holds the delivery; the attempt is counted and logged at claim time. If
 * the worker dies, the lease lapses and another worker takes the delivery: nothing is lost, and
 * no two workers hold the same attempt at once.
 *
 * Claims, sends and outcomes are decoupled: one claim statement takes many due deliveries, the
 * sends start as slots free up (at most `perEndpoint` to an endpoint, `concurrency` in all), and
 * the outcomes that arrived meanwhile are written by one statement. A fast endpoint gets up to
 * `prefetch` deliveries claimed ahead, so its slots never wait for the database.
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
  /** Claimed by this worker and not yet recorded (queued, being sent, or its outcome being written). */
  const held = new Map<string, ClaimedDelivery>();
  /** Claimed deliveries waiting for a slot, per endpoint, in due order. */
  const queues = new Map<string, ClaimedDelivery[]>();
  const sendingTo = new Map<string, number>();
  const sends = new Set<Promise<void>>();
  /** When each endpoint last answered, and whether quickly. */
  const answers = new Map<string, { at: number; fast: boolean }>();
  const outcomes: Outcome[] = [];
  let flushing: Promise<void> | undefined;
  let stopped = false;
  let wanted = true;
  let wake: (() => void) | undefined;

  function poke(): void {
    wanted = true;
    wake?.();
  }

  /** Endpoints worth claiming ahead for: answered quickly in the last 10 s. */
  function fastEndpoints(): string[] {
    const since = Date.now() - 10_000;
    const fast: string[] = [];
    for (const [endpoint, answer] of answers) if (answer.fast && answer.at >= since) fast.push(endpoint);
    return fast;
  }

  function noteAnswer(delivery: ClaimedDelivery, durationMs: number): void {
    answers.delete(delivery.endpoint_id);
    // Rate-limited endpoints are never claimed ahead: their budget is counted when claimed.
    answers.set(delivery.endpoint_id, {
      at: Date.now(),
      fast: durationMs <= FAST_ANSWER_MS && delivery.max_per_second === null,
    });
    if (answers.size > 10_000) answers.delete(answers.keys().next().value!);
  }

  /**
   * Claims up to `limit` due deliveries. The endpoints with PENDING deliveries are locked first
   * (`FOR NO KEY UPDATE SKIP LOCKED`: those another worker is claiming for are left to it, so two
   * workers claim side by side for different endpoints instead of queueing on one lock), then one
   * statement, whose snapshot is taken after those locks, counts every lease taken before it on
   * the endpoints it holds. Per endpoint it keeps the concurrency bound over every worker:
   * while other workers hold some of an endpoint's deliveries, all holders together hold at most
   * `perEndpoint`; a worker holding them alone may hold `prefetch` more of a fast endpoint, since
   * it sends at most `perEndpoint` at once. For endpoints with `max_per_second` it counts the
   * attempts started in the current second of the database clock, under the same endpoint locks.
   * Endpoints already at their bound are skipped before the due window is cut, so they do not
   * crowd out the rest.
   */
  async function claim(limit: number): Promise<{ claimed: ClaimedDelivery[]; waitMs: number | null }> {
    const fast = fastEndpoints();
    return db.transaction().execute(async (trx) => {
      const locking = await sql<{ ids: string[]; candidates: number }>`
      WITH RECURSIVE waiting AS (
        -- The endpoints with PENDING deliveries, one index probe each (a skip scan), however long
        -- their backlogs: a claim costs the same with 10 or 100,000 deliveries waiting.
        (SELECT endpoint_id FROM webhook_deliveries WHERE status = 'PENDING' ORDER BY endpoint_id LIMIT 1)
        UNION ALL
        SELECT (SELECT d.endpoint_id FROM webhook_deliveries d
                WHERE d.status = 'PENDING' AND d.endpoint_id > w.endpoint_id ORDER BY d.endpoint_id LIMIT 1)
        FROM waiting w WHERE w.endpoint_id IS NOT NULL
      ),
      candidates AS (
        SELECT e.id FROM webhook_endpoints e JOIN waiting w ON e.id = w.endpoint_id WHERE e.deleted_at IS NULL
      ),
      locked AS (
        SELECT e.id FROM webhook_endpoints e WHERE e.id IN (SELECT id FROM candidates)
        ORDER BY e.id
        FOR NO KEY UPDATE SKIP LOCKED
      )
      SELECT coalesce((SELECT array_agg(id) FROM locked), '{}') AS ids,
        (SELECT count(*) FROM candidates)::int AS candidates`.execute(trx);
      const { ids, candidates } = locking.rows[0]!;
      const skipped = candidates > ids.length;
      const result =
        ids.length === 0
          ? { rows: [] as ClaimedDelivery[] }
          : await sql<ClaimedDelivery>`
      WITH held AS (
        SELECT endpoint_id,
          count(*) FILTER (WHERE locked_by = ${workerId}) AS mine,
          count(*) FILTER (WHERE locked_by <> ${workerId} AND locked_until > now()) AS others
        FROM webhook_deliveries
        WHERE locked_until IS NOT NULL AND status = 'PENDING' AND endpoint_id = ANY(${ids}::text[])
        GROUP BY endpoint_id
      ),
      room AS (
        SELECT endpoint_id,
          CASE WHEN others = 0
            THEN ${perEndpoint} + CASE WHEN endpoint_id = ANY(${fast}::text[]) THEN ${prefetch} ELSE 0 END - mine
            ELSE ${perEndpoint} - mine - others END AS room
        FROM held
      ),
      open AS (
        SELECT e.id, e.active,
          coalesce(room.room,
            ${perEndpoint} + CASE WHEN e.id = ANY(${fast}::text[]) THEN ${prefetch} ELSE 0 END) AS room
        FROM webhook_endpoints e
        LEFT JOIN room ON room.endpoint_id = e.id
        WHERE e.id = ANY(${ids}::text[]) AND coalesce(room.room, 1) > 0
          AND NOT (e.max_per_second IS NOT NULL AND e.rate_window_at = date_trunc('second', now())
                   AND e.rate_window_count >= e.max_per_second)
      ),
      due AS (
        SELECT d.id, d.endpoint_id, d.next_attempt_at, o.room
        FROM open o
        CROSS JOIN LATERAL (
          SELECT d.id, d.endpoint_id, d.next_attempt_at FROM webhook_deliveries d
          WHERE d.endpoint_id = o.id AND d.status = 'PENDING' AND d.next_attempt_at <= now()
            AND (d.locked_until IS NULL OR d.locked_until <= now()) AND (o.active OR d.event = 'ping')
            AND NOT (d.id = ANY(${[...held.keys()]}::text[]))
          ORDER BY d.next_attempt_at
          LIMIT o.room
        ) d
        ORDER BY d.next_attempt_at
        LIMIT 1000
      ),
      paced AS (
        SELECT e.id, e.max_per_second
          - CASE WHEN e.rate_window_at = date_trunc('second', now()) THEN e.rate_window_count ELSE 0 END AS room
        FROM webhook_endpoints e
        WHERE e.max_per_second IS NOT NULL AND e.id IN (SELECT endpoint_id FROM due)
      ),
      ranked AS (
        SELECT due.id, due.next_attempt_at,
          row_number() OVER (PARTITION BY due.endpoint_id ORDER BY due.next_attempt_at, due.id) AS rank,
          due.room, paced.room AS rate_room
        FROM due
        LEFT JOIN paced ON paced.id = due.endpoint_id
      ),
      picked AS (
        SELECT id FROM ranked
        WHERE rank <= room AND (rate_room IS NULL OR rank <= rate_room)
        ORDER BY next_attempt_at LIMIT ${limit}
      ),
      claimed AS (
        UPDATE webhook_deliveries w
        SET attempt_count = w.attempt_count + 1, attempts_total = w.attempts_total + 1, locked_by = ${workerId},
            locked_until = now() + make_interval(secs => ${leaseSeconds}), updated_at = now()
        FROM picked
        WHERE w.id = picked.id AND w.status = 'PENDING' AND (w.locked_until IS NULL OR w.locked_until <= now())
        RETURNING w.id, w.attempt_count, w.attempts_total, w.endpoint_id, w.event_id, w.event, w.environment,
          w.next_attempt_at
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
             e.signature_scheme, e.secret, e.previous_secret, e.previous_secret_expires_at, e.max_per_second, ev.body
      FROM claimed c
      JOIN webhook_endpoints e ON e.id = c.endpoint_id
      JOIN events ev ON ev.id = c.event_id
      ORDER BY c.next_attempt_at, c.id`.execute(trx);
      if (skipped) return { claimed: result.rows, waitMs: SKIPPED_RETRY_MS };
      // Work in hand means another claim soon (as its outcomes are written): no need to look ahead.
      if (result.rows.length > 0) return { claimed: result.rows, waitMs: null };
      // When to look again unless woken: the next scheduled attempt (a retry, a spread recover),
      // or the next second when a rate-limited endpoint has used this one's budget.
      const next = await sql<{ ms: number | null }>`
        SELECT least(
          (SELECT extract(epoch FROM min(next_attempt_at) - now()) * 1000 FROM webhook_deliveries
           WHERE status = 'PENDING' AND next_attempt_at > now()),
          (SELECT 1000 - extract(milliseconds FROM now())::numeric % 1000 FROM webhook_endpoints e
           WHERE e.max_per_second IS NOT NULL AND e.rate_window_at = date_trunc('second', now())
             AND e.rate_window_count >= e.max_per_second AND e.deleted_at IS NULL AND e.active
             AND EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.endpoint_id = e.id AND d.status = 'PENDING'
                         AND d.next_attempt_at <= now())
           LIMIT 1)
        )::float8 AS ms`.execute(trx);
      return { claimed: result.rows, waitMs: next.rows[0]?.ms ?? null };
    });
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

  async function send(delivery: ClaimedDelivery): Promise<Outcome> {
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
    const result = await postWebhook(delivery.url, delivery.body, headersFor(delivery, secrets, timestamp), {
      timeoutMs: options.timeoutMs,
      allowPrivate: allowsPrivate(delivery.environment, options.webhookAllowPrivate),
    });
    return { delivery, result, durationMs: Date.now() - started };
  }

  /**
   * One statement records a batch of attempts (what was sent and what came back), bumps the
   * hourly rollups the stats read, starts or ends each endpoint's failing run (in the order the
   * answers came), and moves each delivery on, the last only while the claim is still ours (a
   * lapsed lease means another worker owns the delivery now). Rows other workers may write too
   * (rollups, endpoints) are taken in key order, so two batches wait for each other rather than
   * deadlock; endpoints are locked before deliveries, like everywhere else.
   */
  async function record(batch: Outcome[]): Promise<void> {
    const rows = batch.map(({ delivery, result, durationMs }, ord) => {
      const succeeded = result.errorClass === null;
      const dead = !succeeded && delivery.attempt_count >= MAX_ATTEMPTS;
      const next = succeeded ? 'SUCCEEDED' : dead ? 'DEAD' : 'PENDING';
      return {
        id: delivery.id,
        attempt: delivery.attempts_total,
        endpoint_id: delivery.endpoint_id,
        ord,
        status_code: result.statusCode,
        duration_ms: durationMs,
        error: result.error,
        error_class: result.errorClass,
        request_headers: result.requestHeaders,
        response_headers: result.responseHeaders,
        response_body: result.responseBody,
        bucket: latencyBucket(durationMs),
        next,
        delay: next === 'PENDING' ? retryDelaySeconds(delivery.attempt_count, options.retryScale) : 0,
      };
    });
    await sql`
      WITH input AS (
        SELECT * FROM json_to_recordset(${JSON.stringify(rows)}::json) AS x(
          id text, attempt int, endpoint_id text, ord int, status_code int, duration_ms int, error text,
          error_class text, request_headers jsonb, response_headers jsonb, response_body text, bucket int,
          next text, delay float8)
      ),
      logged AS (
        UPDATE webhook_attempts a
        SET status_code = x.status_code, duration_ms = x.duration_ms, error = x.error, error_class = x.error_class,
            request_headers = x.request_headers, response_headers = x.response_headers,
            response_body = x.response_body
        FROM input x
        WHERE a.delivery_id = x.id AND a.attempt = x.attempt
        RETURNING x.endpoint_id, x.ord, x.status_code, x.error, x.error_class, x.bucket, a.started_at
      ),
      rolled AS (
        INSERT INTO webhook_attempt_rollups AS r
          (endpoint_id, hour, outcome, latency_bucket, attempts, last_error, last_error_at, last_status_code)
        SELECT endpoint_id, date_trunc('hour', started_at, 'UTC'), coalesce(error_class, 'SUCCEEDED'), bucket,
          count(*), (array_agg(error ORDER BY ord DESC) FILTER (WHERE error IS NOT NULL))[1],
          CASE WHEN bool_or(error_class IS NOT NULL) THEN now() END,
          (array_agg(status_code ORDER BY ord DESC) FILTER (WHERE status_code IS NOT NULL))[1]
        FROM logged
        GROUP BY 1, 2, 3, 4
        ORDER BY 1, 2, 3, 4
        ON CONFLICT (endpoint_id, hour, outcome, latency_bucket) DO UPDATE
        SET attempts = r.attempts + excluded.attempts, last_error = coalesce(excluded.last_error, r.last_error),
            last_error_at = coalesce(excluded.last_error_at, r.last_error_at),
            last_status_code = coalesce(excluded.last_status_code, r.last_status_code)
      ),
      runs AS (
        SELECT endpoint_id, max(ord) AS last, max(ord) FILTER (WHERE error_class IS NULL) AS last_ok,
          min(started_at) FILTER (WHERE error_class IS NOT NULL) AS first_failure
        FROM logged GROUP BY endpoint_id
      ),
      since AS (
        -- Where the run stands after the batch: ended by a last success, restarted by the first
        -- failure after a success, or started by the first failure.
        SELECT r.endpoint_id, coalesce(r.last_ok = r.last, false) AS ended, r.last_ok IS NOT NULL AS restarted,
          CASE WHEN r.last_ok IS NULL THEN r.first_failure
               ELSE (SELECT min(l.started_at) FROM logged l WHERE l.endpoint_id = r.endpoint_id AND l.ord > r.last_ok)
          END AS failing_since
        FROM runs r
      ),
      changing AS (
        SELECT e.id FROM webhook_endpoints e JOIN since s ON s.endpoint_id = e.id
        WHERE (s.ended AND e.failing_since IS NOT NULL) OR (NOT s.ended AND (s.restarted OR e.failing_since IS NULL))
        ORDER BY e.id
        FOR NO KEY UPDATE OF e
      ),
      health AS (
        UPDATE webhook_endpoints e
        SET failing_since = CASE WHEN s.ended THEN NULL ELSE s.failing_since END, disable_warned_at = NULL
        FROM changing c JOIN since s ON s.endpoint_id = c.id
        WHERE e.id = c.id
          AND ((s.ended AND e.failing_since IS NOT NULL) OR (NOT s.ended AND (s.restarted OR e.failing_since IS NULL)))
        RETURNING e.id
      ),
      ordered AS (
        -- Then the deliveries, in id order like every other write of several (ending an
        -- endpoint's backlog), so that two such writes wait for each other rather than deadlock.
        SELECT d.id FROM webhook_deliveries d
        WHERE d.id IN (SELECT id FROM input) AND d.locked_by = ${workerId} AND (SELECT count(*) FROM health) >= 0
        ORDER BY d.id
        FOR NO KEY UPDATE OF d
      )
      UPDATE webhook_deliveries d
      SET status = x.next, next_attempt_at = now() + make_interval(secs => x.delay),
          locked_by = NULL, locked_until = NULL, last_status_code = x.status_code, last_error = x.error,
          completed_at = CASE WHEN x.next = 'PENDING' THEN NULL ELSE now() END, updated_at = now()
      FROM input x
      WHERE d.id = x.id AND d.locked_by = ${workerId} AND d.attempts_total = x.attempt
        -- Endpoints before deliveries, the order of everything else that writes both (claims,
        -- auto-disable, edits and deletes): these constant conditions run "health" (which locks
        -- them), then "ordered", once, before the first delivery is read. An unreferenced CTE
        -- would run last.
        AND (SELECT count(*) FROM ordered) >= 0`.execute(db);
  }

  /**
   * The receiver already has the request when its outcome is written. If the database is out of
   * reach then, the outcome waits here and is written once it is back: the delivery stays held
   * (the claim skips it, the heartbeat renews its lease when it can) rather than being sent again
   * when its lease lapses. Only a stopping worker gives up; its delivery is then sent again by
   * whoever claims it (at least once, as always).
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

  /** Writes the outcomes that have arrived, a batch per statement, one batch at a time. */
  function flush(): void {
    if (flushing || outcomes.length === 0) return;
    flushing = (async () => {
      while (outcomes.length > 0) {
        const batch = outcomes.splice(0, RECORD_BATCH);
        try {
          await untilRecorded(() => record(batch));
        } catch (error) {
          // One bad row must not cost the others their outcome: write them one by one.
          for (const outcome of batch) {
            try {
              await untilRecorded(() => record([outcome]));
            } catch (single) {
              logger.error({ err: single, deliveryId: outcome.delivery.id }, 'webhook attempt failed to record');
            }
          }
          if (batch.length === 1) logger.debug({ err: error }, 'webhook outcome batch failed');
        }
        for (const outcome of batch) held.delete(outcome.delivery.id);
        poke();
      }
    })().finally(() => {
      flushing = undefined;
      flush();
    });
  }

  /** Starts queued deliveries while slots are free: `perEndpoint` per endpoint, `concurrency` in all. */
  function pump(): void {
    if (stopped) return;
    for (const [endpoint, queue] of queues) {
      if (sends.size >= concurrency) return;
      while (queue.length > 0 && sends.size < concurrency && (sendingTo.get(endpoint) ?? 0) < perEndpoint) {
        start(queue.shift()!);
      }
      if (queue.length === 0) queues.delete(endpoint);
    }
  }

  function start(delivery: ClaimedDelivery): void {
    sendingTo.set(delivery.endpoint_id, (sendingTo.get(delivery.endpoint_id) ?? 0) + 1);
    const run: Promise<void> = send(delivery)
      .then(
        (outcome) => {
          noteAnswer(delivery, outcome.durationMs);
          outcomes.push(outcome);
        },
        (error: unknown) => {
          held.delete(delivery.id);
          logger.error({ err: error, deliveryId: delivery.id }, 'webhook attempt failed');
        },
      )
      .finally(() => {
        sends.delete(run);
        const left = (sendingTo.get(delivery.endpoint_id) ?? 1) - 1;
        if (left > 0) sendingTo.set(delivery.endpoint_id, left);
        else sendingTo.delete(delivery.endpoint_id);
        flush();
        pump();
      });
    sends.add(run);
  }

  /**
   * A stopping worker gives back what it claimed but did not send: the claim's attempt and its
   * log line are taken back, so the delivery is due again at once elsewhere, as if never claimed.
   */
  async function release(deliveries: ClaimedDelivery[]): Promise<void> {
    if (deliveries.length === 0) return;
    const rows = deliveries.map((delivery) => ({ id: delivery.id, attempt: delivery.attempts_total }));
    await sql`
      WITH input AS (SELECT * FROM json_to_recordset(${JSON.stringify(rows)}::json) AS x(id text, attempt int)),
      released AS (
        UPDATE webhook_deliveries d
        SET attempt_count = d.attempt_count - 1, attempts_total = d.attempts_total - 1, locked_by = NULL,
            locked_until = NULL, updated_at = now()
        FROM input x
        WHERE d.id = x.id AND d.locked_by = ${workerId} AND d.attempts_total = x.attempt
        RETURNING d.id, x.attempt
      )
      DELETE FROM webhook_attempts a USING released r WHERE a.delivery_id = r.id AND a.attempt = r.attempt`.execute(db);
    for (const delivery of deliveries) held.delete(delivery.id);
  }

  async function heartbeat(): Promise<void> {
    if (held.size === 0) return;
    // A delivery locked now is having its outcome written or its endpoint's backlog ended: it is
    // skipped (its lease is cleared either way), so a renewal never waits, nor deadlocks.
    await sql`
      UPDATE webhook_deliveries SET locked_until = now() + make_interval(secs => ${leaseSeconds})
      WHERE id IN (
        SELECT id FROM webhook_deliveries
        WHERE locked_by = ${workerId} AND id = ANY(${[...held.keys()]}::text[])
        FOR NO KEY UPDATE SKIP LOCKED
      )`.execute(db);
  }

  async function loop(): Promise<void> {
    while (!stopped) {
      let waitMs = pollMs;
      const free = MAX_HELD - held.size;
      if (wanted && free > 0) {
        wanted = false;
        try {
          const { claimed, waitMs: next } = await claim(free);
          for (const delivery of claimed) {
            held.set(delivery.id, delivery);
            const queue = queues.get(delivery.endpoint_id);
            if (queue) queue.push(delivery);
            else queues.set(delivery.endpoint_id, [delivery]);
          }
          pump();
          if (claimed.length >= free) wanted = true;
          if (next !== null) waitMs = Math.min(pollMs, Math.max(1, Math.ceil(next)));
        } catch (error) {
          logger.error({ err: error }, 'could not claim webhook deliveries');
        }
      }
      if (stopped) break;
      if (wanted && held.size < MAX_HELD) continue;
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

  // One at a time: a renewal waiting on a locked delivery must not be joined by another every
  // tick until they hold every pooled connection.
  let beating = false;
  const heartbeats = setInterval(
    () => {
      if (beating) return;
      beating = true;
      heartbeat()
        .catch((error: unknown) => logger.warn({ err: error }, 'webhook lease heartbeat failed'))
        .finally(() => (beating = false));
    },
    Math.max(500, (leaseSeconds * 1000) / 4),
  );
  const running = loop();

  return {
    poke,
    async stop() {
      stopped = true;
      wake?.();
      await running;
      const unsent = [...queues.values()].flat();
      queues.clear();
      try {
        await release(unsent);
      } catch (error) {
        // Their leases lapse and another worker takes them (each with one more attempt counted).
        logger.warn({ err: error }, 'could not give back unsent webhook deliveries');
      }
      while (sends.size > 0 || flushing || outcomes.length > 0) {
        await Promise.all([...sends]);
        flush();
        await flushing;
      }
      clearInterval(heartbeats);
    },
  };
}
