import { sql, type Kysely } from 'kysely';
import type { DB } from './schema.js';
import type { Executor } from './transaction.js';

const LOCK_NOT_AVAILABLE = '55P03';

/** How many rows of a default partition a read counts at most (expected empty: any is an alert). */
export const defaultPartitionCountLimit = 10_000;
/** How long a read of the table figures waits for a table's lock before giving up. */
export const tableGrowthLockTimeoutMs = 200;

/**
 * What the database's own statistics say about the tables' growth, read from the catalog and the
 * statistics functions without counting a row: /metrics reads it at every scrape, so it must cost
 * about the same at 2 TB as at 2 MB. A partition is counted in its partitioned table (the root of
 * its tree), so a year of monthly partitions is one figure per table, not twelve. PGlite runs no
 * autovacuum: its vacuum figures move only with a VACUUM, and are never an error.
 */
export interface TableStatistics {
  /** The table, or the partitioned table its partitions are summed into. */
  table: string;
  /** Heap, TOAST and indexes. */
  totalBytes: number;
  indexBytes: number;
  liveTuples: number;
  deadTuples: number;
  /**
   * Dead tuples past the point where autovacuum should have started on them (its threshold plus
   * scale factor times the rows, the table's own settings first), summed over partitions: lasting
   * above 0 means autovacuum does not keep up.
   */
  deadTuplesOverThreshold: number;
  /**
   * Seconds since the last vacuum or autovacuum of the table or, partitioned, of its most recently
   * vacuumed partition (old months need none); since the server started when it was never vacuumed.
   */
  vacuumAgeSeconds: number;
}

interface StatisticsRow {
  table: string;
  total_bytes: number;
  index_bytes: number;
  live_tuples: number;
  dead_tuples: number;
  dead_over_threshold: number;
  vacuum_age: number;
}

/**
 * One statement over the tables of the schemas on the search path (pg_stat_get_* for just those,
 * not the pg_stat_user_tables view, which reads every table of the catalog). The sizes are most of
 * its cost, a file size per relation: 10 to 25 ms for 41 tables and 4 × 49 partitions on PostgreSQL 15.
 */
export async function readTableStatistics(db: Executor): Promise<TableStatistics[]> {
  const { rows } = await sql<StatisticsRow>`
    WITH leaves AS (
      SELECT COALESCE(pg_partition_root(c.oid), c.oid) AS root, GREATEST(c.reltuples, 0) AS reltuples,
        pg_table_size(c.oid) AS table_bytes, pg_indexes_size(c.oid) AS index_bytes,
        pg_stat_get_live_tuples(c.oid) AS live_tuples, pg_stat_get_dead_tuples(c.oid) AS dead_tuples,
        GREATEST(pg_stat_get_last_vacuum_time(c.oid), pg_stat_get_last_autovacuum_time(c.oid)) AS vacuumed_at,
        COALESCE((SELECT o.option_value::float8 FROM pg_options_to_table(c.reloptions) o
                  WHERE o.option_name = 'autovacuum_vacuum_threshold'),
                 current_setting('autovacuum_vacuum_threshold')::float8) AS vacuum_threshold,
        COALESCE((SELECT o.option_value::float8 FROM pg_options_to_table(c.reloptions) o
                  WHERE o.option_name = 'autovacuum_vacuum_scale_factor'),
                 current_setting('autovacuum_vacuum_scale_factor')::float8) AS vacuum_scale_factor
      FROM pg_class c
      JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relkind = 'r' AND n.nspname = ANY (current_schemas(false))
    )
    SELECT r.relname AS "table",
      sum(l.table_bytes + l.index_bytes)::float8 AS total_bytes,
      sum(l.index_bytes)::float8 AS index_bytes,
      sum(l.live_tuples)::float8 AS live_tuples,
      sum(l.dead_tuples)::float8 AS dead_tuples,
      sum(GREATEST(0, l.dead_tuples - l.vacuum_threshold - l.vacuum_scale_factor * l.reltuples))::float8
        AS dead_over_threshold,
      EXTRACT(EPOCH FROM now() - COALESCE(max(l.vacuumed_at), pg_postmaster_start_time()))::float8 AS vacuum_age
    FROM leaves l
    JOIN pg_class r ON r.oid = l.root
    GROUP BY r.relname
    ORDER BY r.relname`.execute(db);
  return rows.map((row) => ({
    table: row.table,
    totalBytes: Number(row.total_bytes),
    indexBytes: Number(row.index_bytes),
    liveTuples: Number(row.live_tuples),
    deadTuples: Number(row.dead_tuples),
    deadTuplesOverThreshold: Number(row.dead_over_threshold),
    vacuumAgeSeconds: Math.max(0, Number(row.vacuum_age)),
  }));
}

export interface DefaultPartitionRows {
  /** The partitioned table whose default partition this is. */
  table: string;
  /** Rows in its default partition, counted up to the limit. */
  rows: number;
}

/**
 * Rows in each partitioned table's DEFAULT partition, which catches what no month partition
 * takes: expected empty, so anything there means a month partition is missing (and the later
 * creation of that month must move those rows out). Counted with a limit, so a full default
 * partition costs at most `limit` rows per scrape.
 */
export async function readDefaultPartitionRows(
  db: Executor,
  limit = defaultPartitionCountLimit,
): Promise<DefaultPartitionRows[]> {
  const partitions = await sql<{ table: string; schema: string; partition: string }>`
    SELECT p.relname AS "table", n.nspname AS "schema", c.relname AS "partition"
    FROM pg_class c
    JOIN pg_namespace n ON n.oid = c.relnamespace
    JOIN pg_inherits i ON i.inhrelid = c.oid
    JOIN pg_class p ON p.oid = i.inhparent
    WHERE c.relispartition AND pg_get_expr(c.relpartbound, c.oid) = 'DEFAULT'
      AND n.nspname = ANY (current_schemas(false))
    ORDER BY p.relname`.execute(db);
  const counted: DefaultPartitionRows[] = [];
  for (const { table, schema, partition } of partitions.rows) {
    const { rows } = await sql<{ rows: number }>`
      SELECT count(*)::int AS "rows" FROM (SELECT 1 FROM ${sql.id(schema, partition)} LIMIT ${limit}) AS caught`.execute(
      db,
    );
    counted.push({ table, rows: Number(rows[0]?.rows ?? 0) });
  }
  return counted;
}

export interface TableGrowth {
  tables: TableStatistics[];
  defaultPartitions: DefaultPartitionRows[];
}

/**
 * Both reads in one transaction whose statements wait at most `lockTimeoutMs` for a table's lock.
 * Reading a table's size takes a share lock that DDL holding the table (VACUUM FULL, a migration
 * rewriting it) makes wait: without the limit every scrape would queue behind it, each holding a
 * pooled connection payments need. Undefined when a lock was held longer.
 */
export async function readTableGrowth(
  db: Kysely<DB>,
  lockTimeoutMs = tableGrowthLockTimeoutMs,
): Promise<TableGrowth | undefined> {
  try {
    return await db.transaction().execute(async (trx) => {
      await sql`SELECT set_config('lock_timeout', ${`${lockTimeoutMs}ms`}, true)`.execute(trx);
      return { tables: await readTableStatistics(trx), defaultPartitions: await readDefaultPartitionRows(trx) };
    });
  } catch (error) {
    if ((error as { code?: unknown }).code === LOCK_NOT_AVAILABLE) return undefined;
    throw error;
  }
}
