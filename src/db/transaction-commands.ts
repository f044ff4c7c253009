import { CompiledQuery, type TransactionSettings } from 'kysely';

/** What both drivers send to open a transaction: the settings a caller gave, or a plain BEGIN. */
export function beginCommand(settings: TransactionSettings): CompiledQuery {
  const isolation = settings.isolationLevel ? ` isolation level ${settings.isolationLevel}` : '';
  const access = settings.accessMode ? ` ${settings.accessMode}` : '';
  return CompiledQuery.raw(isolation || access ? `start transaction${isolation}${access}` : 'begin');
}

const SAVEPOINT_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** A savepoint command; names come from code, never from a request, and are checked all the same. */
export function savepointCommand(command: 'savepoint' | 'rollback to' | 'release', name: string): CompiledQuery {
  if (!SAVEPOINT_NAME.test(name)) throw new Error(`not a savepoint name: ${name}`);
  return CompiledQuery.raw(`${command} "${name}"`);
}
