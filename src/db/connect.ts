import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { PGlite, type PGliteOptions } from '@electric-sql/pglite';
import { Kysely, PostgresDialect, type LogEvent } from 'kysely';
import pg from 'pg';
import { Mutex } from '../lib/mutex.js';
import { PGliteDialect, queryNamed } from './pglite-dialect.js';
import { HeldBegin, type Opening } from './with-begin.js';
import { CommitTail, isWithCommit } from './with-commit.js';
import type { DB } from './schema.js';

export type DatabaseOptions = (
  | { kind: 'postgres'; url: string; poolSize?: number }
  | {
      kind: 'pglite';
      dataDir?: string;
      loadDataDir?: Blob;
      /**
       * More PGlite settings. Tests use it to share one compiled WebAssembly module and file
       * bundle among the databases of a process, and for the template's smaller WAL segment.
       */
      pglite?: Pick<PGliteOptions, 'pgliteWasmModule' | 'fsBundle' | 'initDbStartParams'>;
      /**
       * An open PGlite to use instead of opening one: tests hand each file a reset instance,
       * since opening one costs about a second of CPU. Closing the Database closes it.
       */
      instance?: PGlite;
    }
) & {
  /** Called with the text of every statement run through Kysely, BEGIN and COMMIT included. */
  onStatement?: (sql: string) => void;
};

function statementLog(onStatement: ((sql: string) => void) | undefined) {
  return onStatement
    ? (event: LogEvent) => {
        if (event.level === 'query') onStatement(event.query.sql);
      }
    : undefined;
}

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

export interface PoolStats {
  max: number;
  inUse: number;
  idle: number;
  /** Queries waiting for a connection. */
  waiting: number;
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
  /** Connections of this process, for /metrics (PGlite has one session, shared under a lock). */
  poolStats(): PoolStats;
  /** The PGlite instance when embedded (used to dump a migrated template in tests). */
  readonly pglite: PGlite | undefined;
  /**
   * Calls `onNotify` for every notification on `channel` (sent at the notifying transaction's
   * commit). On PostgreSQL a connection of its own listens, and is opened again if lost
   * (`onLost` hears why); `onNotify` is also called once listening (again), since notifications
   * sent meanwhile were missed. On PGlite the one session listens, in this process.
   */
  listen(channel: string, onNotify: () => void, onLost?: (error: unknown) => void): Promise<Listener>;
  close(): Promise<void>;
}

export interface Listener {
  close(): Promise<void>;
}

/** What a listening PostgreSQL connection calls itself (pg_stat_activity.application_name). */
export const LISTENER_APPLICATION_NAME = 'commerce-listener';

/** A connection of its own that LISTENs, and connects and LISTENs again when it is lost. */
function listenOnPostgres(
  url: string,
  channel: string,
  onNotify: () => void,
  onLost?: (error: unknown) => void,
): Listener {
  let closed = false;
  let current: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  let waitMs = 100;

  function lost(client: pg.Client, error: unknown): void {
    if (client !== current) return;
    current = undefined;
    client.end().catch(() => {});
    if (closed) return;
    onLost?.(error);
    retry = setTimeout(connect, waitMs);
    waitMs = Math.min(waitMs * 2, 5000);
  }

  function connect(): void {
    if (closed) return;
    const client = new pg.Client({
      connectionString: url,
      application_name: LISTENER_APPLICATION_NAME,
      keepAlive: true,
    });
    current = client;
    client.on('error', (error) => lost(client, error));
    client.on('end', () => lost(client, new Error('the listening connection ended')));
    client.on('notification', (message) => {
      if (message.channel === channel) onNotify();
    });
    client
      .connect()
      .then(() => client.query(`LISTEN ${client.escapeIdentifier(channel)}`))
      .then(() => {
        if (client !== current) return;
        waitMs = 100;
        onNotify();
      })
      .catch((error: unknown) => lost(client, error));
  }

  connect();
  return {
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      const client = current;
      current = undefined;
      await client?.end().catch(() => {});
    },
  };
}

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

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  return options.kind === 'postgres'
    ? openPostgres(options.url, options.poolSize ?? 20, options.onStatement)
    : openPGlite(options);
}

/** Named statements one connection keeps at most; texts past that run unnamed. */
const MAX_PREPARED_PER_CONNECTION = 500;

/**
 * Statement names by text, for every connection of the process: a Map lookup hashes a text once
 * per string, where a SHA-1 per call cost some 4 % of the API's JavaScript in a payment.
 */
const statementNames = new Map<string, string>();
const MAX_REMEMBERED_NAMES = 2_000;

function statementName(text: string): string {
  let name = statementNames.get(text);
  if (name === undefined) {
    name = `k_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
    // Texts that vary with their input (IN lists, VALUES rows) must not grow the map without end.
    if (statementNames.size >= MAX_REMEMBERED_NAMES) statementNames.clear();
    statementNames.set(text, name);
  }
  return name;
}

/** The answer to a statement held, not sent: no command, no rows. */
const notRun = (): pg.QueryResult => ({ command: '', rowCount: null, oid: 0, fields: [], rows: [] });

/** Answers a caller of `client.query` with `result`, by its callback when it passed one. */
function answer(args: unknown[], result: Promise<pg.QueryResult>): Promise<pg.QueryResult> | undefined {
  const callback = args[args.length - 1];
  if (typeof callback !== 'function') return result;
  result.then(
    (value) => callback(null, value),
    (error: unknown) => callback(error),
  );
  return undefined;
}

/**
 * Every parameterized statement Kysely sends runs as a named prepared statement, named by a hash
 * of its text: PostgreSQL parses and plans it once per connection instead of on every call (the
 * payment path's CTEs are costly to plan). Texts that vary with their input (IN lists, multi-row
 * VALUES) could grow that set without end, hence the cap. A transaction's BEGIN is held until its
 * first statement, and goes with it when that one is marked `withBegin` (with-begin.ts); a
 * statement marked `withCommit` is held and sent with the transaction's COMMIT (with-commit.ts).
 */
function preparingStatements(client: pg.PoolClient): void {
  const prepared = client as pg.PoolClient & { preparedNames?: Set<string> };
  if (prepared.preparedNames) return;
  const names = new Set<string>();
  prepared.preparedNames = names;
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  const send = query as (text: string) => Promise<pg.QueryResult | pg.QueryResult[]>;
  const tail = new CommitTail();
  const head = new HeldBegin();

  /** The statement as the caller gave it, named when it has parameters; other forms untouched. */
  const forward = (args: unknown[], outgoing: unknown): unknown => {
    const [text, values, ...rest] = args;
    if (outgoing !== text) return query(outgoing, ...args.slice(1));
    if (typeof text !== 'string' || !Array.isArray(values) || values.length === 0) return query(...args);
    const name = statementName(text);
    if (!names.has(name)) {
      if (names.size >= MAX_PREPARED_PER_CONNECTION) return query(...args);
      names.add(name);
    }
    return query({ name, text, values }, ...rest);
  };

  (client as { query: unknown }).query = (...args: unknown[]) => {
    const [text, values] = args;
    let opening: Opening;
    let outgoing = text;
    if (typeof text === 'string') {
      const parameters = Array.isArray(values) ? values : [];
      if (isWithCommit(text)) {
        tail.hold(text, parameters);
        return answer(args, Promise.resolve(notRun()));
      }
      const withTail = tail.outgoing(text);
      if (withTail !== undefined) outgoing = withTail;
      opening = head.opening(text, parameters, withTail);
    } else {
      opening = head.flush();
    }
    switch (opening.kind) {
      case 'held':
      case 'nothing':
        return answer(args, Promise.resolve(notRun()));
      case 'together':
        // Several statements in one message answer with one result each: the caller's is the last.
        return answer(
          args,
          send(opening.text).then((results) => (Array.isArray(results) ? results[results.length - 1]! : results)),
        );
      case 'begin-first': {
        // Only once the BEGIN succeeded: after a failed one the statement would run on its own.
        // pg sends one query at a time anyway, so waiting costs no round trip.
        const begun = send(opening.begin);
        if (typeof args[args.length - 1] !== 'function') return begun.then(() => forward(args, outgoing));
        begun.then(
          () => forward(args, outgoing),
          (error: unknown) => (args[args.length - 1] as (error: unknown) => void)(error),
        );
        return undefined;
      }
      case 'as-is':
        return forward(args, outgoing);
    }
  };
}

function openPostgres(url: string, poolSize: number, onStatement?: (sql: string) => void): Database {
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    types: pgTypes,
    // No parallel workers for the API's statements: each is small, and with many requests at once
    // workers only compete for the same cores. Launching them cost a list with a date range
    // 100-250 ms on a loaded 2-core machine for 10 ms of work (npm run bench -- lists).
    options: '-c max_parallel_workers_per_gather=0',
  });
  // An idle client losing its server must not crash the process; the next query reconnects.
  pool.on('error', () => {});
  // Nor one that loses it while checked out between two queries (a database restart): the error
  // is then an event nobody listens to; the client's next query fails and the pool drops it.
  pool.on('connect', (client) => {
    client.on('error', () => {});
    preparingStatements(client as pg.PoolClient);
  });
  const log = statementLog(onStatement);
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }), ...(log ? { log } : {}) });
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
    async listen(channel, onNotify, onLost) {
      return listenOnPostgres(url, channel, onNotify, onLost);
    },
    async close() {
      await db.destroy();
      // Kysely ends the pool only if it used it; migrations alone go around Kysely.
      if (!pool.ended) await pool.end();
    },
  };
}

/**
 * PGlite's own start parameters, with a smaller buffer pool: PostgreSQL's default of 128 MB sits
 * in the process's WebAssembly memory, while the data files are also in the OS page cache (PGlite
 * reads them through Node). 16 MB took a process loaded with 100,000 rows from 466 to 380 MB.
 */
const EMBEDDED_START_PARAMS = [...PGlite.defaultStartParams, '-c', 'shared_buffers=16MB'];

/**
 * Creates a new data directory (initdb) in a child process. The instance that creates it holds
 * some 350 MB it no longer needs once done; run in this process it stayed until a full garbage
 * collection happened to run (633 MB after reopening the directory, 285 MB once collected), and
 * run in a worker thread the process still held 331 MB once the thread ended (the allocator keeps
 * what the thread freed), against 195 MB when opening an existing directory. A process gives
 * everything back when it exits.
 */
async function createDataDirectory(dataDir: string, initDbStartParams: string[] | undefined): Promise<void> {
  const settings = JSON.stringify({
    module: import.meta.resolve('@electric-sql/pglite'),
    options: { dataDir, startParams: EMBEDDED_START_PARAMS, ...(initDbStartParams ? { initDbStartParams } : {}) },
  });
  // Source, not a file: the same text runs from src/ (tsx) and dist/ (plain Node).
  const source = `
    const { module, options } = JSON.parse(process.env.PGLITE_CREATE);
    const { PGlite } = await import(module);
    const created = await PGlite.create(options);
    await created.close();`;
  const child = spawn(process.execPath, ['--input-type=module', '--eval', source], {
    env: { ...process.env, PGLITE_CREATE: settings },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`creating the embedded database failed (exit code ${code}): ${stderr.trim()}`);
}

async function openPGlite(options: {
  dataDir?: string;
  loadDataDir?: Blob;
  pglite?: Pick<PGliteOptions, 'pgliteWasmModule' | 'fsBundle' | 'initDbStartParams'>;
  instance?: PGlite;
  onStatement?: (sql: string) => void;
}): Promise<Database> {
  let dataDir = options.dataDir;
  let creating = false;
  if (dataDir && !dataDir.startsWith('memory://')) {
    dataDir = path.resolve(dataDir);
    creating = !existsSync(dataDir) || readdirSync(dataDir).length === 0;
    mkdirSync(dataDir, { recursive: true });
  }
  // A template or a compiled module (tests) cannot cross to another process: the instance below
  // creates the directory itself then.
  const separately = !options.instance && !options.loadDataDir && !options.pglite?.pgliteWasmModule;
  if (creating && dataDir && separately) await createDataDirectory(dataDir, options.pglite?.initDbStartParams);
  const pglite =
    options.instance ??
    (await PGlite.create({
      ...(dataDir ? { dataDir } : {}),
      ...(options.loadDataDir ? { loadDataDir: options.loadDataDir } : {}),
      startParams: EMBEDDED_START_PARAMS,
      ...options.pglite,
    }));
  const mutex = new Mutex();
  const log = statementLog(options.onStatement);
  const db = new Kysely<DB>({ dialect: new PGliteDialect(pglite, mutex), ...(log ? { log } : {}) });
  return {
    kind: 'pglite',
    db,
    pglite,
    poolStats: () => ({
      max: 1,
      inUse: mutex.pending > 0 ? 1 : 0,
      idle: mutex.pending > 0 ? 0 : 1,
      waiting: Math.max(0, mutex.pending - 1),
    }),
    async query<R>(statement: PreparedStatement, values: unknown[]) {
      const release = await mutex.lock();
      try {
        return (await queryNamed<R>(pglite, statement.text, values)).rows;
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
    async listen(channel, onNotify) {
      // Under the lock: LISTEN inside someone's open transaction would be undone by its rollback.
      const release = await mutex.lock();
      let unlisten: () => Promise<void>;
      try {
        unlisten = await pglite.listen(channel, () => onNotify());
      } finally {
        release();
      }
      return {
        async close() {
          const again = await mutex.lock();
          try {
            if (!pglite.closed) await unlisten();
          } finally {
            again();
          }
        },
      };
    },
    close: () => db.destroy(),
  };
}
