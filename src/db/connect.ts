import type { Database, DriverOptions } from './database.js';
import type { PGliteSettings } from './pglite.js';

export {
  LISTENER_APPLICATION_NAME,
  type Database,
  type Listener,
  type PoolStats,
  type PreparedStatement,
} from './database.js';

export type DatabaseOptions = (
  | {
      kind: 'postgres';
      url: string;
      /** Where LISTEN connects: PostgreSQL itself when `url` goes through a pooler. Default: `url`. */
      listenUrl?: string;
      poolSize?: number;
    }
  | ({ kind: 'pglite' } & PGliteSettings)
) &
  DriverOptions;

/**
 * PostgreSQL when given a URL (postgres.ts), else PGlite embedded in this process (pglite.ts).
 * Only the driver in use is loaded: a start spends its time loading modules.
 */
export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  if (options.kind === 'postgres') {
    const { openPostgres } = await import('./postgres.js');
    return openPostgres({ ...options, poolSize: options.poolSize ?? 20 });
  }
  const { openPGlite } = await import('./pglite.js');
  return openPGlite(options);
}
