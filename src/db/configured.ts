import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../config.js';
import { openDatabase, type Database } from './connect.js';
import { findDatabaseImage } from './image.js';
import type { DatabaseImageSource } from './pglite.js';

/** Where a step that went another way than planned is told (the server's logger). */
export interface OpeningLog {
  warn(message: string): void;
}

export function databaseOptionsFor(config: Config) {
  return config.databaseUrl
    ? ({
        kind: 'postgres',
        url: config.databaseUrl,
        listenUrl: config.databaseListenUrl ?? config.databaseUrl,
        poolSize: config.dbPoolSize,
        namedStatements: config.dbPreparedStatements,
      } as const)
    : ({ kind: 'pglite', dataDir: path.join(config.dataDir, 'pglite') } as const);
}

/** Where a database is, for people: a PGlite directory, or a PostgreSQL URL without its password. */
function describeDatabase(config: Config): { firstOpen: boolean; where: string } {
  const options = databaseOptionsFor(config);
  if (options.kind === 'pglite') {
    const firstOpen = !existsSync(options.dataDir) || readdirSync(options.dataDir).length === 0;
    const relative = !path.isAbsolute(options.dataDir) && !options.dataDir.startsWith('.');
    return { firstOpen, where: relative ? `./${options.dataDir}` : options.dataDir };
  }
  const url = new URL(options.url);
  return { firstOpen: false, where: `PostgreSQL at ${url.host}${url.pathname}` };
}

/**
 * The build's image to unpack a new embedded database from (image.ts), if there is a current
 * one; says which way the database is made, since without it a first start takes longer.
 */
function newDatabaseImage(
  where: string,
  progress: (step: string) => void,
  log: OpeningLog | undefined,
): DatabaseImageSource | undefined {
  const lookup = findDatabaseImage();
  if (!lookup.image) {
    progress(`creating the embedded database in ${where} (${lookup.missing}: a few seconds)`);
    return undefined;
  }
  progress(`creating the embedded database in ${where} from the database image`);
  return {
    tarball: lookup.image.tarball,
    onFailed: (error) => {
      log?.warn(`the database image would not load (${String(error)}); running initdb instead`);
      progress('  the database image would not load: creating the database the slow way (a few seconds)');
    },
  };
}

/**
 * Opens the database the configuration names, as `npm start` does: PostgreSQL at its URL, or the
 * embedded one in the data directory, unpacked from the build's image when new. `progress` hears
 * one line per step. Migrations are the caller's next step.
 */
export async function openConfiguredDatabase(
  config: Config,
  options: { progress?: (step: string) => void; log?: OpeningLog } = {},
): Promise<Database> {
  const progress = options.progress ?? (() => {});
  const { firstOpen, where } = describeDatabase(config);
  const databaseOptions = databaseOptionsFor(config);
  if (databaseOptions.kind === 'postgres') {
    progress(`connecting to ${where}`);
    return openDatabase(databaseOptions);
  }
  if (!firstOpen) {
    progress(`opening the embedded database in ${where}`);
    return openDatabase(databaseOptions);
  }
  const image = newDatabaseImage(where, progress, options.log);
  return openDatabase(image ? { ...databaseOptions, image } : databaseOptions);
}
