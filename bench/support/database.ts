import pg from 'pg';
import { openDatabase, type Database } from '../../src/db/connect.js';
import { migrate } from '../../src/db/migrate.js';
import { randomBase62 } from '../../src/lib/ids.js';

export const BENCH_DATABASE_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface ScratchDatabase {
  url: string;
  database: Database;
  drop(): Promise<void>;
}

/** A fresh, migrated PostgreSQL database for one benchmark run, dropped at the end. */
export async function createScratchDatabase(): Promise<ScratchDatabase> {
  const name = `devapi_bench_${randomBase62(8).toLowerCase()}`;
  const admin = new pg.Client({ connectionString: BENCH_DATABASE_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(BENCH_DATABASE_URL);
  url.pathname = `/${name}`;
  const database = await openDatabase({ kind: 'postgres', url: url.toString(), poolSize: 4 });
  await migrate(database);
  return {
    url: url.toString(),
    database,
    async drop() {
      await database.close();
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    },
  };
}
