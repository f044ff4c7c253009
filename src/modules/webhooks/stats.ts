import { sql, type Kysely } from 'kysely';
import { deleteInBatches, type BatchBudget, type BatchedDeleteResult } from '../../db/batched-delete.js';
import type { DB } from '../../db/schema.js';
import { waitingStatuses } from './delivery-state.js';
import { errorClasses, type ErrorClass } from './sender.js';

/**
 * Upper bounds (ms, exclusive) of the latency buckets the hourly rollups count attempts in;
 * the last bucket is open. Percentiles are interpolated inside a bucket, so they are estimates
 * within one bucket's width (about a third of the value at most).
 */
export const LATENCY_BUCKETS_MS = [
  5, 10, 20, 35, 50, 75, 100, 150, 200, 300, 400, 500, 750, 1000, 1500, 2000, 3000, 5000, 7500, 10_000, 15_000, 20_000,
  30_000,
] as const;

export function latencyBucket(durationMs: number): number {
  const index = LATENCY_BUCKETS_MS.findIndex((bound) => durationMs < bound);
  return index === -1 ? LATENCY_BUCKETS_MS.length : index;
}

/** Rollups older than this are deleted; the last error is looked for within it. */
export const ROLLUP_RETENTION_DAYS = 30;

export const outcomes = ['SUCCEEDED', ...errorClasses] as const;
export type Outcome = 'SUCCEEDED' | ErrorClass;

export interface WindowStats {
  attempts: number;
  succeeded: number;
  failed: number;
  /** succeeded / attempts, 0..1; null without attempts. */
  successRate: number | null;
  latencyMs: { p50: number; p95: number } | null;
  byOutcome: Record<Outcome, number>;
}

export interface EndpointStats {
  endpointId: string;
  /** Deliveries waiting for an attempt (PENDING or FAILED). */
  backlog: number;
  failingSince: string | null;
  lastError: { at: string; errorClass: string; message: string; statusCode: number | null } | null;
  last24h: WindowStats;
  last7d: WindowStats;
}

/** The value below which `fraction` of the counted attempts fall, interpolated in its bucket. */
export function percentile(counts: readonly number[], fraction: number): number {
  const total = counts.reduce((sum, n) => sum + n, 0);
  const rank = fraction * total;
  let seen = 0;
  for (let bucket = 0; bucket < counts.length; bucket++) {
    const n = counts[bucket] ?? 0;
    if (n === 0) continue;
    if (seen + n >= rank) {
      const lower = bucket === 0 ? 0 : LATENCY_BUCKETS_MS[bucket - 1]!;
      const upper = LATENCY_BUCKETS_MS[bucket];
      if (upper === undefined) return lower;
      return Math.round(lower + ((upper - lower) * (rank - seen)) / n);
    }
    seen += n;
  }
  return 0;
}

function windowStats(rows: readonly { outcome: string; latency_bucket: number; attempts: number }[]): WindowStats {
  const byOutcome = Object.fromEntries(outcomes.map((outcome) => [outcome, 0])) as Record<Outcome, number>;
  const counts = new Array<number>(LATENCY_BUCKETS_MS.length + 1).fill(0);
  let attempts = 0;
  for (const row of rows) {
    if (row.attempts === 0) continue;
    attempts += row.attempts;
    if (row.outcome in byOutcome) byOutcome[row.outcome as Outcome] += row.attempts;
    counts[row.latency_bucket] = (counts[row.latency_bucket] ?? 0) + row.attempts;
  }
  const succeeded = byOutcome.SUCCEEDED;
  return {
    attempts,
    succeeded,
    failed: attempts - succeeded,
    successRate: attempts === 0 ? null : Math.round((succeeded / attempts) * 10_000) / 10_000,
    latencyMs: attempts === 0 ? null : { p50: percentile(counts, 0.5), p95: percentile(counts, 0.95) },
    byOutcome,
  };
}

/**
 * An endpoint's health from its hourly rollups (a few hundred rows at most) and the count of its
 * waiting deliveries (a partial index): the cost does not grow with the deliveries it ever had.
 * A window takes the hourly rows that overlap it, so "24 h" spans 24 to 25 hours.
 */
export async function endpointStats(
  db: Kysely<DB>,
  endpoint: { id: string; failing_since: Date | null },
): Promise<EndpointStats> {
  const [rows, lastError, backlog] = await Promise.all([
    sql<{ outcome: string; latency_bucket: number; day: number; week: number }>`
      SELECT outcome, latency_bucket,
        coalesce(sum(attempts) FILTER (WHERE hour > now() - interval '25 hours'), 0)::int AS day,
        sum(attempts)::int AS week
      FROM webhook_attempt_rollups
      WHERE endpoint_id = ${endpoint.id} AND hour > now() - interval '169 hours'
      GROUP BY outcome, latency_bucket`.execute(db),
    db
      .selectFrom('webhook_attempt_rollups')
      .select(['last_error', 'last_error_at', 'outcome', 'last_status_code'])
      .where('endpoint_id', '=', endpoint.id)
      .where('last_error_at', 'is not', null)
      .orderBy('last_error_at', 'desc')
      .limit(1)
      .executeTakeFirst(),
    db
      .selectFrom('webhook_deliveries')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('endpoint_id', '=', endpoint.id)
      // Literals, so the generic plan of the prepared statement can use the waiting deliveries' partial index.
      .where(sql<boolean>`status IN (${waitingStatuses()})`)
      .executeTakeFirstOrThrow(),
  ]);
  const byWindow = (pick: 'day' | 'week') =>
    windowStats(
      rows.rows.map((row) => ({ outcome: row.outcome, latency_bucket: row.latency_bucket, attempts: row[pick] })),
    );
  return {
    endpointId: endpoint.id,
    backlog: Number(backlog.n),
    failingSince: endpoint.failing_since?.toISOString() ?? null,
    lastError:
      lastError?.last_error_at && lastError.last_error
        ? {
            at: lastError.last_error_at.toISOString(),
            errorClass: lastError.outcome,
            message: lastError.last_error,
            statusCode: lastError.last_status_code,
          }
        : null,
    last24h: byWindow('day'),
    last7d: byWindow('week'),
  };
}

/** Periodic: drops rollups past the retention, in bounded batches. */
export function deleteOldRollups(db: Kysely<DB>, budget: BatchBudget): Promise<BatchedDeleteResult> {
  return deleteInBatches(db, budget, async (trx, limit) => {
    const result = await sql`DELETE FROM webhook_attempt_rollups
      WHERE (endpoint_id, hour, outcome, latency_bucket) IN (
        SELECT endpoint_id, hour, outcome, latency_bucket FROM webhook_attempt_rollups
        WHERE hour < now() - make_interval(days => ${ROLLUP_RETENTION_DAYS})
        ORDER BY hour LIMIT ${limit} FOR UPDATE SKIP LOCKED)`.execute(trx);
    return Number(result.numAffectedRows ?? 0n);
  });
}
