import { CompiledQuery, type DatabaseConnection, type Driver, type TransactionSettings } from 'kysely';

/** What both drivers send to open a transaction: the settings a caller gave, or a plain BEGIN. */
function beginCommand(settings: TransactionSettings): CompiledQuery {
  const isolation = settings.isolationLevel ? ` isolation level ${settings.isolationLevel}` : '';
  const access = settings.accessMode ? ` ${settings.accessMode}` : '';
  return CompiledQuery.raw(isolation || access ? `start transaction${isolation}${access}` : 'BEGIN');
}

const SAVEPOINT_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** A savepoint command; names come from code, never from a request, and are checked all the same. */
function savepointCommand(command: 'savepoint' | 'rollback to' | 'release', name: string): CompiledQuery {
  if (!SAVEPOINT_NAME.test(name)) throw new Error(`not a savepoint name: ${name}`);
  return CompiledQuery.raw(`${command} "${name}"`);
}

/**
 * The transaction half of both Kysely drivers: the same SQL on PGlite and PostgreSQL. A driver
 * adds how it acquires, releases and closes its connections. The plain BEGIN, COMMIT and ROLLBACK
 * are these exact texts (PGlite's connection sends them in one simple-protocol message).
 */
export abstract class TransactionCommands implements Pick<
  Driver,
  | 'beginTransaction'
  | 'savepoint'
  | 'rollbackToSavepoint'
  | 'releaseSavepoint'
  | 'commitTransaction'
  | 'rollbackTransaction'
> {
  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    await connection.executeQuery(beginCommand(settings));
  }

  async savepoint(connection: DatabaseConnection, name: string): Promise<void> {
    await connection.executeQuery(savepointCommand('savepoint', name));
  }

  async rollbackToSavepoint(connection: DatabaseConnection, name: string): Promise<void> {
    await connection.executeQuery(savepointCommand('rollback to', name));
  }

  async releaseSavepoint(connection: DatabaseConnection, name: string): Promise<void> {
    await connection.executeQuery(savepointCommand('release', name));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('COMMIT'));
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('ROLLBACK'));
  }
}
