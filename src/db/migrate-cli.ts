/** `npm run migrate`: applies pending migrations to the configured database and exits. */
import { ConfigError, loadConfig } from '../config.js';
import { openDatabase } from './connect.js';
import { databaseOptionsFor } from './configured.js';
import { migrate } from './migrate.js';

try {
  const config = loadConfig();
  const database = await openDatabase(databaseOptionsFor(config));
  const applied = await migrate(database);
  await database.close();
  process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'database is up to date\n');
  // PGlite can leave a handle open after close(); the work is done, so leave explicitly.
  process.exit(0);
} catch (error) {
  process.stderr.write(`${error instanceof ConfigError ? error.message : String(error)}\n`);
  process.exit(1);
}
