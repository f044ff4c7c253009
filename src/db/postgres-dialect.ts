import {
  type CompiledQuery,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryResult,
} from 'kysely';
import type pg from 'pg';
import { statementName } from './statement-names.js';
import { TransactionCommands } from './transaction-commands.js';

/**
 * Kysely dialect for PostgreSQL through a `pg` pool, whose driver names its statements: with
 * `namedStatements`, every parameterized statement is sent with a name derived from its text, so
 * a connection parses and plans it once (the payment path's CTEs are costly to plan) where
 * Kysely's own driver sends every statement unnamed. graphile-worker gives its hot statements a
 * fixed name each and drops the names under its `noPreparedStatements` setting; Kysely builds
 * ours, so their names come from their text.
 */
export class NamedStatementsDialect implements Dialect {
  constructor(
    private readonly pool: pg.Pool,
    private readonly namedStatements: boolean,
  ) {}

  createAdapter() {
    return new PostgresAdapter();
  }
  createDriver(): Driver {
    return new NamedStatementsDriver(this.pool, this.namedStatements);
  }
  createQueryCompiler() {
    return new PostgresQueryCompiler();
  }
  createIntrospector(db: Kysely<unknown>) {
    return new PostgresIntrospector(db);
  }
}

/** Named statements one connection keeps at most; texts past that run unnamed. */
const MAX_NAMED_PER_CONNECTION = 500;

class NamedStatementsConnection implements DatabaseConnection {
  /** The names this connection has prepared: the cap keeps texts that vary from growing it. */
  private readonly named = new Set<string>();

  constructor(
    readonly client: pg.PoolClient,
    private readonly namedStatements: boolean,
  ) {}

  private nameFor(compiled: CompiledQuery): string | undefined {
    if (!this.namedStatements || compiled.parameters.length === 0) return undefined;
    const name = statementName(compiled.sql);
    if (!this.named.has(name)) {
      if (this.named.size >= MAX_NAMED_PER_CONNECTION) return undefined;
      this.named.add(name);
    }
    return name;
  }

  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    const name = this.nameFor(compiled);
    const { command, rowCount, rows } = await this.client.query<R & pg.QueryResultRow>({
      text: compiled.sql,
      values: [...compiled.parameters],
      ...(name === undefined ? {} : { name }),
    });
    const writes = command === 'INSERT' || command === 'UPDATE' || command === 'DELETE' || command === 'MERGE';
    return { rows: rows ?? [], numAffectedRows: writes && rowCount !== null ? BigInt(rowCount) : undefined };
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('this PostgreSQL driver does not stream query results');
  }
}

class NamedStatementsDriver extends TransactionCommands implements Driver {
  /** One Kysely connection per pooled client, so the names it prepared stay with it. */
  private readonly connections = new WeakMap<pg.PoolClient, NamedStatementsConnection>();

  constructor(
    private readonly pool: pg.Pool,
    private readonly namedStatements: boolean,
  ) {
    super();
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    const client = await this.pool.connect();
    let connection = this.connections.get(client);
    if (!connection) {
      connection = new NamedStatementsConnection(client, this.namedStatements);
      this.connections.set(client, connection);
    }
    return connection;
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    (connection as NamedStatementsConnection).client.release();
  }

  async destroy(): Promise<void> {
    if (!this.pool.ended) await this.pool.end();
  }
}
