import { Kysely } from 'kysely';
import pg from 'pg';
import { statementLog, type Database, type DriverOptions, type PreparedStatement } from './database.js';
import { listenOnPostgres } from './listener.js';
import { NamedStatementsDialect } from './postgres-dialect.js';
import type { DB } from './schema.js';

// int8 columns (counts, centimes) come back as numbers while they are exact, as PGlite does.
const INT8_OID = 20;
function parseInt8(text: string): number | bigint {
  // Fifteen characters, a sign included, are always within Number's exact range: no BigInt needed.
  if (text.length <= 15) return Number(text);
  const value = BigInt(text);
  return value > BigInt(Number.MAX_SAFE_INTEGER) || value < BigInt(Number.MIN_SAFE_INTEGER) ? value : Number(value);
}
const pgTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8_OID && format !== 'binary') return parseInt8;
    return pg.types.getTypeParser(oid, format);
  },
} as pg.CustomTypesConfig;

export function openPostgres(options: { url: string; listenUrl?: string; poolSize: number } & DriverOptions): Database {
  const { url, poolSize } = options;
  // A pooler in transaction mode hands each transaction any server connection: a LISTEN would stay
  // on one the pooler gives to others, so the listener connects to PostgreSQL itself.
  const listenUrl = options.listenUrl ?? url;
  const namedStatements = options.namedStatements ?? true;
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    types: pgTypes,
    // No parallel workers for the API's statements: each is small, and with many requests at once
    // workers only compete for the same cores. Launching them cost a list with a date range
    // 100-250 ms on a loaded 2-core machine for 10 ms of work (npm run bench -- lists). PgBouncer
    // refuses this startup parameter unless told to ignore it, and then sets it itself on its
    // server connections (scripts/ha/pgbouncer.ini.in, decision 095).
    options: '-c max_parallel_workers_per_gather=0',
  });
  // An idle client losing its server must not crash the process; the next query reconnects.
  pool.on('error', () => {});
  // Nor one that loses it while checked out between two queries (a database restart): the error
  // is then an event nobody listens to; the client's next query fails and the pool drops it.
  pool.on('connect', (client) => {
    client.on('error', () => {});
  });
  const log = statementLog(options.onStatement);
  const db = new Kysely<DB>({ dialect: new NamedStatementsDialect(pool, namedStatements), ...(log ? { log } : {}) });
  return {
    kind: 'postgres',
    db,
    pglite: undefined,
    poolStats: () => ({
      max: poolSize,
      inUse: pool.totalCount - pool.idleCount,
      idle: pool.idleCount,
      waiting: pool.waitingCount,
    }),
    async query<R>(statement: PreparedStatement, values: unknown[]) {
      const result = await pool.query({
        text: statement.text,
        values,
        ...(namedStatements ? { name: statement.name } : {}),
      });
      return result.rows as R[];
    },
    async inScriptTransaction(work) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const result = await work(async (sql) => {
          const outcome = (await client.query(sql)) as pg.QueryResult | pg.QueryResult[];
          const last = Array.isArray(outcome) ? outcome[outcome.length - 1] : outcome;
          return (last?.rows ?? []) as Record<string, unknown>[];
        });
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {});
        throw error;
      } finally {
        client.release();
      }
    },
    async listen(channel, onNotify, onLost) {
      return listenOnPostgres(listenUrl, channel, onNotify, onLost);
    },
    async close() {
      await db.destroy();
      // Kysely ends the pool only if it used it; migrations alone go around Kysely.
      if (!pool.ended) await pool.end();
    },
  };
}
