import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sql } from 'kysely';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { waitingStatuses } from '../db/schema.js';
import { defaultPartitionCountLimit, readTableGrowth, tableGrowthLockTimeoutMs } from '../db/table-statistics.js';
import { bearerToken, sameToken } from './auth.js';
import type { AppServices } from './context.js';
import { ApiError } from './errors.js';

/**
 * GET /metrics in the Prometheus text format. Request figures are counted in this process (one
 * histogram observation per response); webhook, outbox and standby-wait figures are read from the
 * database at scrape time, so every API process reports the whole cluster's delivery state, whichever process
 * runs the worker. Table growth (sizes, tuples, vacuum) comes from the catalog and statistics views,
 * never from counting rows.
 */
export interface RequestMetrics {
  /** Called once per response, from the onResponse hook. */
  observe(request: FastifyRequest, reply: FastifyReply): void;
}

// Process metrics (CPU, memory, event loop, GC) are per process, not per app: collected once.
let processRegistry: Registry | undefined;
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

interface DeliveryState {
  backlog: number;
  due: number;
  in_flight: number;
  delivery_lag: number;
  outbox_lag: number;
}

export async function registerMetrics(app: FastifyInstance, services: AppServices): Promise<RequestMetrics> {
  const registry = new Registry();
  const registers = [registry];

  const requests = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP requests by route template, method and status, with their duration.',
    labelNames: ['method', 'route', 'status_code'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers,
  });
  const rateLimited = new Counter({
    name: 'rate_limit_refusals_total',
    help: 'Requests refused with 429 RATE_LIMITED, by route (API keys, checkout addresses and wallets).',
    labelNames: ['route'] as const,
    registers,
  });

  const attempts = new Counter({
    name: 'webhook_attempts_total',
    help: 'Finished webhook delivery attempts by outcome: succeeded (2xx), http_error (other status), network_error (no answer: timeout, refused, blocked address).',
    labelNames: ['outcome'] as const,
    registers,
  });
  const backlog = new Gauge({
    name: 'webhook_deliveries_pending',
    help: 'Webhook deliveries not finished (PENDING, or FAILED with a retry scheduled), by state: due (waiting for a worker), scheduled (a retry later), in_flight (an attempt running).',
    labelNames: ['state'] as const,
    registers,
  });
  const deliveryLag = new Gauge({
    name: 'webhook_delivery_lag_seconds',
    help: 'How long the oldest due delivery has waited past its scheduled time for a worker (0 when none waits).',
    registers,
  });
  const outboxLag = new Gauge({
    name: 'event_outbox_lag_seconds',
    help: 'Age of the oldest event whose delivery has not had its first attempt yet (0 when none).',
    registers,
  });
  const pool = new Gauge({
    name: 'db_pool_connections',
    help: 'Database connections of this process by state (in_use, idle, max); PGlite has one session.',
    labelNames: ['state'] as const,
    registers,
  });
  const poolWaiting = new Gauge({
    name: 'db_pool_waiting_queries',
    help: 'Queries of this process waiting for a database connection.',
    registers,
  });
  const standbyWaits = new Gauge({
    name: 'db_commits_waiting_for_standby',
    help: "Commits in this database waiting for the synchronous standby's acknowledgement (wait event SyncRep).",
    registers,
  });
  const standbyWait = new Gauge({
    name: 'db_commit_standby_wait_seconds',
    help: 'How long the oldest commit waiting for the synchronous standby has waited (0 when none).',
    registers,
  });

  const tableLabels = ['table'] as const;
  const tableBytes = new Gauge({
    name: 'db_table_total_bytes',
    help: 'Bytes on disk of a table with its TOAST and indexes; partitions summed into their partitioned table.',
    labelNames: tableLabels,
    registers,
  });
  const indexBytes = new Gauge({
    name: 'db_table_index_bytes',
    help: "Bytes on disk of a table's indexes; partitions summed into their partitioned table.",
    labelNames: tableLabels,
    registers,
  });
  const liveTuples = new Gauge({
    name: 'db_table_live_tuples',
    help: "Live rows of a table as PostgreSQL's statistics estimate them (pg_stat_user_tables).",
    labelNames: tableLabels,
    registers,
  });
  const deadTuples = new Gauge({
    name: 'db_table_dead_tuples',
    help: 'Dead rows of a table waiting for vacuum (pg_stat_user_tables).',
    labelNames: tableLabels,
    registers,
  });
  const deadOverThreshold = new Gauge({
    name: 'db_table_dead_tuples_over_autovacuum_threshold',
    help: 'Dead rows past the point where autovacuum should have vacuumed them (0 while it keeps up).',
    labelNames: tableLabels,
    registers,
  });
  const vacuumAge = new Gauge({
    name: 'db_table_vacuum_age_seconds',
    help: 'Seconds since the last vacuum or autovacuum of a table (of its most recently vacuumed partition); since the server started when never.',
    labelNames: tableLabels,
    registers,
  });
  const defaultPartitionRows = new Gauge({
    name: 'db_default_partition_rows',
    help: `Rows in a partitioned table's DEFAULT partition (counted up to ${defaultPartitionCountLimit}): above 0, a month partition is missing.`,
    labelNames: tableLabels,
    registers,
  });

  const growthSkipped = new Counter({
    name: 'db_table_statistics_skipped_total',
    help: `Scrapes that kept the previous table figures because DDL (VACUUM FULL, a migration) held a table past ${tableGrowthLockTimeoutMs} ms.`,
    registers,
  });

  /** Two catalog statements, plus one limited count per default partition (a handful, expected empty). */
  async function readTableFigures(): Promise<void> {
    const growth = await readTableGrowth(services.db);
    if (!growth) {
      growthSkipped.inc();
      return;
    }
    for (const gauge of [tableBytes, indexBytes, liveTuples, deadTuples, deadOverThreshold, vacuumAge]) gauge.reset();
    for (const table of growth.tables) {
      const labels = { table: table.table };
      tableBytes.set(labels, table.totalBytes);
      indexBytes.set(labels, table.indexBytes);
      liveTuples.set(labels, table.liveTuples);
      deadTuples.set(labels, table.deadTuples);
      deadOverThreshold.set(labels, table.deadTuplesOverThreshold);
      vacuumAge.set(labels, table.vacuumAgeSeconds);
    }
    defaultPartitionRows.reset();
    for (const { table, rows } of growth.defaultPartitions) defaultPartitionRows.set({ table }, rows);
  }

  /** Two cheap statements: waiting deliveries through their partial index (its statuses as literals), attempts by outcome. */
  async function readDatabaseState(): Promise<void> {
    const { rows } = await sql<DeliveryState>`
      SELECT
        count(*)::int AS backlog,
        (count(*) FILTER (WHERE next_attempt_at <= now()
          AND (locked_until IS NULL OR locked_until <= now())))::int AS due,
        (count(*) FILTER (WHERE locked_until > now()))::int AS in_flight,
        COALESCE(EXTRACT(EPOCH FROM now() - min(next_attempt_at) FILTER (WHERE next_attempt_at <= now()
          AND (locked_until IS NULL OR locked_until <= now()))), 0)::float8 AS delivery_lag,
        COALESCE(EXTRACT(EPOCH FROM now() - min(created_at) FILTER (WHERE attempt_count = 0)), 0)::float8
          AS outbox_lag
      FROM webhook_deliveries
      WHERE status IN (${waitingStatuses()})`.execute(services.db);
    const state = rows[0];
    if (state) {
      backlog.set({ state: 'due' }, Number(state.due));
      backlog.set({ state: 'in_flight' }, Number(state.in_flight));
      backlog.set({ state: 'scheduled' }, Number(state.backlog) - Number(state.due) - Number(state.in_flight));
      deliveryLag.set(Math.max(0, Number(state.delivery_lag)));
      outboxLag.set(Math.max(0, Number(state.outbox_lag)));
    }

    const outcomes = await sql<{ outcome: string; attempts: number }>`
      SELECT CASE WHEN status_code BETWEEN 200 AND 299 THEN 'succeeded'
                  WHEN status_code IS NOT NULL THEN 'http_error'
                  ELSE 'network_error' END AS outcome,
             count(*)::int AS attempts
      FROM webhook_attempts
      WHERE status_code IS NOT NULL OR error IS NOT NULL
      GROUP BY 1`.execute(services.db);
    attempts.reset();
    for (const outcome of ['succeeded', 'http_error', 'network_error']) {
      const row = outcomes.rows.find((r) => r.outcome === outcome);
      attempts.inc({ outcome }, row ? Number(row.attempts) : 0);
    }

    // Commits stuck on a standby that is gone (docs/operations.md: Patroni 3.0.2 may leave it named).
    const standby = await sql<{ waiting: number; oldest: number }>`
      SELECT count(*)::int AS waiting,
             COALESCE(EXTRACT(EPOCH FROM now() - min(query_start)), 0)::float8 AS oldest
      FROM pg_stat_activity
      WHERE wait_event = 'SyncRep' AND datname = current_database()`.execute(services.db);
    standbyWaits.set(Number(standby.rows[0]?.waiting ?? 0));
    standbyWait.set(Math.max(0, Number(standby.rows[0]?.oldest ?? 0)));

    const stats = services.database.poolStats();
    pool.set({ state: 'in_use' }, stats.inUse);
    pool.set({ state: 'idle' }, stats.idle);
    pool.set({ state: 'max' }, stats.max);
    poolWaiting.set(stats.waiting);
  }

  app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
    const token = bearerToken(request);
    if (!sameToken(token, services.config.metricsToken) && !sameToken(token, services.adminToken)) {
      // Either token reads the metrics, so the message names both; where the admin token is kept
      // is for docs/operations.md, not for whoever calls without one.
      throw new ApiError(
        'ADMIN_UNAUTHORIZED',
        'Missing or wrong token: send "Authorization: Bearer <token>" with METRICS_TOKEN or the admin token (ADMIN_TOKEN).',
      );
    }
    await readDatabaseState();
    await readTableFigures();
    const text = `${await registry.metrics()}\n${await processMetrics().metrics()}`;
    return reply.header('Content-Type', registry.contentType).header('Cache-Control', 'no-store').send(text);
  });

  return {
    observe(request, reply) {
      const route = request.routeOptions.url ?? 'unmatched';
      requests.observe(
        { method: request.method, route, status_code: String(reply.statusCode) },
        reply.elapsedTime / 1000,
      );
      if (reply.statusCode === 429) rateLimited.inc({ route });
    },
  };
}
