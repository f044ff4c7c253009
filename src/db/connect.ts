import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { Mutex } from '../lib/mutex.js';
import { PGliteDialect } from './pglite-dialect.js';
import type { DB } from './schema.js';

export type DatabaseOptions =
  { kind: 'postgres'; url: string; poolSize?: number } | { kind: 'pglite'; dataDir?: string; loadDataDir?: Blob };

type ScriptRunner = (sql: string) => Promise<Record<string, unknown>[]>;

/**
 * A hot-path statement, kept as SQL text so PostgreSQL can prepare it once per connection
 * (`name`): the `pg` client, not the server, is the bottleneck of a write, and a named
 * statement skips parsing and planning on every call.
 */
export interface PreparedStatement {
  readonly name: string;
  readonly text: string;
}

/**
 * The one place that knows which driver is in use. Everything else talks Kysely (or, for
 * migrations, runs SQL scripts through `inScriptTransaction`).
 */
export interface Database {
  readonly kind: 'postgres' | 'pglite';
  readonly db: Kysely<DB>;
  /** Runs one prepared statement outside any transaction (a single statement is atomic). */
  query<R>(statement: PreparedStatement, values: unknown[]): Promise<R[]>;
  /** Runs multi-statement SQL text in one transaction. */
  inScriptTransaction<T>(work: (run: ScriptRunner) => Promise<T>): Promise<T>;
  /** The PGlite instance when embedded (used to dump a migrated template in tests). */
  readonly pglite: PGlite | undefined;
  close(): Promise<void>;
}

// int8 columns (counts, centimes) come back as numbers while they are exact, as PGlite does.
const INT8_OID = 20;
function parseInt8(text: string): number | bigint {
  const value = BigInt(text);
  return value > BigInt(Number.MAX_SAFE_INTEGER) || value < BigInt(Number.MIN_SAFE_INTEGER) ? value : Number(value);
}
const pgTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8_OID && format !== 'binary') return parseInt8;
    return pg.types.getTypeParser(oid, format);
  },
} as pg.CustomTypesConfig;

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  return options.kind === 'postgres' ? openPostgres(options.url, options.poolSize ?? 20) : openPGlite(options);
}

function openPostgres(url: string, poolSize: number): Database {
  const pool = new pg.Pool({ connectionString: url, max: poolSize, types: pgTypes });
  // An idle client losing its server must not crash the process; the next query reconnects.
  pool.on('error', () => {});
  // Nor one that loses it while checked out between two queries (a database restart): the error
  // is then an event nobody listens to; the client's next query fails and the pool drops it.
  pool.on('connect', (client) => client.on('error', () => {}));
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  return {
    kind: 'postgres',
    db,
    pglite: undefined,
    async query<R>(statement: PreparedStatement, values: unknown[]) {
      const result = await pool.query({ name: statement.name, text: statement.text, values });
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
    async close() {
      await db.destroy();
      // Kysely ends the pool only if it used it; migrations alone go around Kysely.
      if (!pool.ended) await pool.end();
    },
  };
}

async function openPGlite(options: { dataDir?: string; loadDataDir?: Blob }): Promise<Database> {
  let dataDir = options.dataDir;
  if (dataDir && !dataDir.startsWith('memory://')) {
    dataDir = path.resolve(dataDir);
    mkdirSync(dataDir, { recursive: true });
  }
  const pglite = await PGlite.create({
    ...(dataDir ? { dataDir } : {}),
    ...(options.loadDataDir ? { loadDataDir: options.loadDataDir } : {}),
  });
  const mutex = new Mutex();
  const db = new Kysely<DB>({ dialect: new PGliteDialect(pglite, mutex) });
  return {
    kind: 'pglite',
    db,
    pglite,
    async query<R>(statement: PreparedStatement, values: unknown[]) {
      const release = await mutex.lock();
      try {
        return (await pglite.query<R>(statement.text, values)).rows;
      } finally {
        release();
      }
    },
    async inScriptTransaction(work) {
      const release = await mutex.lock();
      try {
        return await pglite.transaction(async (tx) =>
          work(async (sql) => {
            const results = await tx.exec(sql);
            return (results[results.length - 1]?.rows ?? []) as Record<string, unknown>[];
          }),
        );
      } finally {
        release();
      }
    },
    close: () => db.destroy(),
  };
}
