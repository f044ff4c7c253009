import type { PGlite } from '@electric-sql/pglite';
import type { Kysely, LogEvent } from 'kysely';
import type { DB } from './schema.js';

/**
 * A hot-path statement, kept as SQL text with a name of its own, so PostgreSQL can prepare it once
 * per connection (unless named statements are turned off: see `namedStatements`).
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

export interface Listener {
  close(): Promise<void>;
}

export type ScriptRunner = (sql: string) => Promise<Record<string, unknown>[]>;

/**
 * The one place that knows which driver is in use (postgres.ts or pglite.ts). Everything else
 * talks Kysely (or, for migrations, runs SQL scripts through `inScriptTransaction`).
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
   * Calls `onNotify` with the payload of every notification on `channel` (sent at the notifying
   * transaction's commit). On PostgreSQL a connection of its own listens, and is opened again if
   * lost (`onLost` hears why); `onNotify` is also called, without a payload, once listening
   * (again), since notifications sent meanwhile were missed: a listener then looks at everything
   * it watches. On PGlite the one session listens, in this process.
   */
  listen(channel: string, onNotify: (payload?: string) => void, onLost?: (error: unknown) => void): Promise<Listener>;
  close(): Promise<void>;
}

/** What both drivers take besides where the database is. */
export interface DriverOptions {
  /**
   * Parameterized statements run as named prepared statements (parsed and planned once per
   * connection). Off for a pooler in transaction mode, where the next statement may reach
   * another server connection that never prepared the name. Default: on.
   */
  namedStatements?: boolean;
  /** Called with the text of every statement run through Kysely, BEGIN and COMMIT included. */
  onStatement?: (sql: string) => void;
}

/** Kysely's `log` option for `onStatement`. */
export function statementLog(onStatement: ((sql: string) => void) | undefined) {
  return onStatement
    ? (event: LogEvent) => {
        if (event.level === 'query') onStatement(event.query.sql);
      }
    : undefined;
}

/** What a listening PostgreSQL connection calls itself (pg_stat_activity.application_name). */
export const LISTENER_APPLICATION_NAME = 'commerce-listener';
