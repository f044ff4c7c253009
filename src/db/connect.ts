import type { Database, DriverOptions } from './database.js';
import { openPGlite, type PGliteSettings } from './pglite.js';
import { openPostgres } from './postgres.js';

export type { Database, Listener, PoolStats, PreparedStatement } from './database.js';
export { LISTENER_APPLICATION_NAME } from './listener.js';

export type DatabaseOptions = (
  { kind: 'postgres'; url: string; poolSize?: number } | ({ kind: 'pglite' } & PGliteSettings)
) &
  DriverOptions;

/** PostgreSQL when given a URL (postgres.ts), else PGlite embedded in this process (pglite.ts). */
export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  return options.kind === 'postgres'
    ? openPostgres({ ...options, poolSize: options.poolSize ?? 20 })
    : openPGlite(options);
}
