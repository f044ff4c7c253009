import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Database } from './connect.js';

const migrationsDir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');
// Any constant shared by every process that migrates this database.
const MIGRATION_LOCK_ID = 7_243_001;

export interface Migration {
  version: string;
  sql: string;
}

export function listMigrations(): Migration[] {
  return readdirSync(migrationsDir)
    .filter((file) => /^\d{3}_[a-z0-9_]+\.sql$/.test(file))
    .sort()
    .map((file) => ({
      version: file.replace(/\.sql$/, ''),
      sql: readFileSync(path.join(migrationsDir, file), 'utf8'),
    }));
}

/**
 * Applies pending migrations in one transaction under an advisory lock, so processes starting
 * together against one PostgreSQL apply each migration exactly once. Returns what was applied.
 * `to` stops after that version (a test builds the database an older release left).
 */
export async function migrate(database: Database, options: { to?: string } = {}): Promise<string[]> {
  return database.inScriptTransaction(async (run) => {
    await run(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_ID})`);
    await run(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    const applied = new Set((await run('SELECT version FROM schema_migrations')).map((row) => String(row.version)));
    const done: string[] = [];
    for (const migration of listMigrations()) {
      if (options.to !== undefined && migration.version > options.to) break;
      if (applied.has(migration.version)) continue;
      await run(migration.sql);
      await run(`INSERT INTO schema_migrations (version) VALUES ('${migration.version}')`);
      done.push(migration.version);
    }
    return done;
  });
}
