import { sql, type Kysely } from 'kysely';
import type { DB } from '../../../db/schema.js';
import {
  deadReasonOf,
  deliveryActions,
  fromStatusesOf,
  OUTCOME_ACTIONS,
  outcomeAction,
  waitingStatuses,
} from '../delivery-state.js';
import type { PostOutcome } from '../sender.js';
import { latencyBucket } from '../stats.js';
import type { ClaimedDelivery } from './claim.js';
import { retryDelaySeconds } from './retry-schedule.js';

/** What one attempt came back with. */
export interface Outcome {
  delivery: ClaimedDelivery;
  result: PostOutcome;
  durationMs: number;
}

/**
 * One statement records a batch of attempts (what was sent and what came back), bumps the
 * hourly rollups the stats read, starts or ends each endpoint's failing run (in the order the
 * answers came), and moves each delivery on (`succeed`, `fail` or `exhaust`), the last only from
 * a status its action starts from and while the claim is still ours (a lapsed lease means another
 * worker owns the delivery now). Rows other workers may write too (rollups, endpoints) are taken
 * in key order, so two batches wait for each other rather than deadlock; endpoints are locked
 * before deliveries, like everywhere else.
 */
export async function recordOutcomes(
  db: Kysely<DB>,
  workerId: string,
  batch: readonly Outcome[],
  retryScale: number,
): Promise<void> {
  const rows = batch.map(({ delivery, result, durationMs }, ord) => {
    const action = outcomeAction(result.errorClass === null, delivery.attempt_count);
    const next = deliveryActions[action].to;
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
      action,
      next,
      dead_reason: deadReasonOf(action),
      delay: action === 'fail' ? retryDelaySeconds(delivery.attempt_count, retryScale) : 0,
    };
  });
  await sql`
    WITH input AS (
      SELECT * FROM json_to_recordset(${JSON.stringify(rows)}::json) AS x(
        id text, attempt int, endpoint_id text, ord int, status_code int, duration_ms int, error text,
        error_class text, request_headers jsonb, response_headers jsonb, response_body text, bucket int,
        action text, next text, dead_reason text, delay float8)
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
    SET status = x.next, dead_reason = x.dead_reason, next_attempt_at = now() + make_interval(secs => x.delay),
        locked_by = NULL, locked_until = NULL, last_status_code = x.status_code, last_error = x.error,
        completed_at = CASE WHEN x.next IN (${waitingStatuses()}) THEN NULL ELSE now() END, updated_at = now()
    FROM input x
    WHERE d.id = x.id AND d.locked_by = ${workerId} AND d.attempts_total = x.attempt
      AND ${fromStatusesOf(sql.ref('d.status'), sql.ref('x.action'), OUTCOME_ACTIONS)}
      -- Endpoints before deliveries, the order of everything else that writes both (claims,
      -- auto-disable, edits and deletes): these constant conditions run "health" (which locks
      -- them), then "ordered", once, before the first delivery is read. An unreferenced CTE
      -- would run last.
      AND (SELECT count(*) FROM ordered) >= 0`.execute(db);
}
