import { sql, type Kysely } from 'kysely';
import type { DB, Environment } from '../../../db/schema.js';
import { fromStatuses } from '../delivery-state.js';
import type { SignatureScheme } from '../signing.js';

/** A delivery this worker claimed: its attempt counted, its lease taken, what sending it needs. */
export interface ClaimedDelivery {
  id: string;
  attempt_count: number;
  attempts_total: number;
  endpoint_id: string;
  business_id: string;
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

export interface ClaimRequest {
  workerId: string;
  /** Deliveries to claim at most. */
  limit: number;
  /** Attempts in flight to one endpoint, over all workers. */
  perEndpoint: number;
  /** What a worker holding an endpoint alone may hold beyond `perEndpoint` of a fast one. */
  prefetch: number;
  /** Endpoints worth claiming ahead for. */
  fast: readonly string[];
  /** Deliveries this worker already holds (their outcome not yet written). */
  held: readonly string[];
  leaseSeconds: number;
}

/**
 * How soon to claim again when another worker was claiming some of the endpoints with work: it
 * holds them for one statement, so they are free again within a few milliseconds.
 */
const SKIPPED_RETRY_MS = 5;

/** What a claim may take, and what every read here counts as waiting: `attempt`'s from-statuses. */
const waitingStatuses = fromStatuses('attempt');

/**
 * Claims due deliveries (`attempt`), in one transaction of two statements, and says when to look
 * again if nothing came (`waitMs`, null: no hint). The endpoints with waiting deliveries are
 * locked first (`FOR NO KEY UPDATE SKIP LOCKED`: those another worker is claiming for are left to
 * it, so two workers claim side by side for different endpoints instead of queueing on one lock),
 * then one statement, whose snapshot is taken after those locks, counts every lease taken before
 * it on the endpoints it holds. Per endpoint it keeps the concurrency bound over every worker:
 * while other workers hold some of an endpoint's deliveries, all holders together hold at most
 * `perEndpoint`; a worker holding them alone may hold `prefetch` more of a fast endpoint, since
 * it sends at most `perEndpoint` at once. For endpoints with `max_per_second` it counts the
 * attempts started in the current second of the database clock, under the same endpoint locks.
 * Endpoints already at their bound are skipped before the due window is cut, so they do not
 * crowd out the rest. The attempt is counted and logged at claim time, so a worker that dies
 * mid-attempt leaves a trace ("no outcome recorded").
 */
export async function claimDeliveries(
  db: Kysely<DB>,
  request: ClaimRequest,
): Promise<{ claimed: ClaimedDelivery[]; waitMs: number | null }> {
  const { workerId, perEndpoint, prefetch, leaseSeconds, limit } = request;
  const fast = [...request.fast];
  return db.transaction().execute(async (trx) => {
    const locking = await sql<{ ids: string[]; candidates: number }>`
      WITH RECURSIVE waiting AS (
        -- The endpoints with waiting deliveries, one index probe each (a skip scan), however long
        -- their backlogs: a claim costs the same with 10 or 100,000 deliveries waiting.
        (SELECT endpoint_id FROM webhook_deliveries WHERE status IN (${waitingStatuses}) ORDER BY endpoint_id LIMIT 1)
        UNION ALL
        SELECT (SELECT d.endpoint_id FROM webhook_deliveries d
                WHERE d.status IN (${waitingStatuses}) AND d.endpoint_id > w.endpoint_id ORDER BY d.endpoint_id LIMIT 1)
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
        WHERE locked_until IS NOT NULL AND status IN (${waitingStatuses}) AND endpoint_id = ANY(${ids}::text[])
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
          WHERE d.endpoint_id = o.id AND d.status IN (${waitingStatuses}) AND d.next_attempt_at <= now()
            AND (d.locked_until IS NULL OR d.locked_until <= now()) AND o.active
            AND NOT (d.id = ANY(${[...request.held]}::text[]))
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
        WHERE w.id = picked.id AND w.status IN (${waitingStatuses})
          AND (w.locked_until IS NULL OR w.locked_until <= now())
        RETURNING w.id, w.attempt_count, w.attempts_total, w.endpoint_id, w.business_id, w.event_id, w.event,
          w.environment, w.next_attempt_at
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
      SELECT c.id, c.attempt_count, c.attempts_total, c.endpoint_id, c.business_id, c.event_id, c.event,
             c.environment, e.url, e.signature_scheme, e.secret, e.previous_secret, e.previous_secret_expires_at,
             e.max_per_second, ev.body
      FROM claimed c
      JOIN webhook_endpoints e ON e.id = c.endpoint_id
      JOIN events ev ON ev.id = c.event_id
      ORDER BY c.next_attempt_at, c.id`.execute(trx);
    if (skipped) return { claimed: result.rows, waitMs: SKIPPED_RETRY_MS };
    // Work in hand means another claim soon (as its outcomes are written): no need to look ahead.
    if (result.rows.length > 0) return { claimed: result.rows, waitMs: null };
    return { claimed: result.rows, waitMs: await nextDueInMs(trx) };
  });
}

/**
 * When to look again unless woken: the next scheduled attempt (a retry, a spread recover), or the
 * next second when a rate-limited endpoint has used this one's budget.
 */
async function nextDueInMs(db: Kysely<DB>): Promise<number | null> {
  const next = await sql<{ ms: number | null }>`
    SELECT least(
      (SELECT extract(epoch FROM min(next_attempt_at) - now()) * 1000 FROM webhook_deliveries
       WHERE status IN (${waitingStatuses}) AND next_attempt_at > now()),
      (SELECT 1000 - extract(milliseconds FROM now())::numeric % 1000 FROM webhook_endpoints e
       WHERE e.max_per_second IS NOT NULL AND e.rate_window_at = date_trunc('second', now())
         AND e.rate_window_count >= e.max_per_second AND e.deleted_at IS NULL AND e.active
         AND EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.endpoint_id = e.id AND d.status IN (${waitingStatuses})
                     AND d.next_attempt_at <= now())
       LIMIT 1)
    )::float8 AS ms`.execute(db);
  return next.rows[0]?.ms ?? null;
}
