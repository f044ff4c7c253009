import { readFileSync } from 'node:fs';
import pg from 'pg';
import { openDatabase, type Database } from '../../src/db/connect.js';
import { migrate } from '../../src/db/migrate.js';
import { randomBase62 } from '../../src/lib/ids.js';

/** PostgreSQL when TEST_DATABASE_URL is set, else embedded PGlite. */
export const testDatabaseUrl = process.env.TEST_DATABASE_URL || undefined;
export const testDatabaseKind = testDatabaseUrl ? 'postgres' : 'pglite';

function urlForDatabase(base: string, name: string): string {
  const url = new URL(base);
  url.pathname = `/${name}`;
  return url.toString();
}

async function adminQuery(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: testDatabaseUrl });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

/**
 * What every PGlite database of this process starts from, read and compiled once per process
 * (a batch of npm test runs many files in one process): the migrated template, PGlite's
 * WebAssembly module and its file bundle.
 */
let pgliteStart:
  Promise<{ template: Blob | undefined; pglite: { pgliteWasmModule: WebAssembly.Module; fsBundle: Blob } }> | undefined;
// The tsconfig's libraries declare WebAssembly's types, not the global object.
const wasm = (globalThis as unknown as { WebAssembly: { compile(bytes: Uint8Array): Promise<WebAssembly.Module> } })
  .WebAssembly;

function pgliteStartingPoint() {
  pgliteStart ??= (async () => {
    const templateFile = process.env.TEST_PGLITE_TEMPLATE;
    const dist = new URL('.', import.meta.resolve('@electric-sql/pglite'));
    return {
      template: templateFile ? new Blob([readFileSync(templateFile)]) : undefined,
      pglite: {
        pgliteWasmModule: await wasm.compile(readFileSync(new URL('pglite.wasm', dist))),
        fsBundle: new Blob([readFileSync(new URL('pglite.data', dist))]),
      },
    };
  })();
  return pgliteStart;
}

export interface TestDatabase {
  database: Database;
  /** A URL other processes can use to reach the same database (PostgreSQL only). */
  url: string | undefined;
  drop(): Promise<void>;
}

/**
 * A database of this test file's own: a copy of the run's migrated template (see
 * scripts/run-tests.ts), or a freshly migrated one when a file is run on its own.
 */
export async function createTestDatabase(options: { onStatement?: (sql: string) => void } = {}): Promise<TestDatabase> {
  if (testDatabaseUrl) {
    const name = `devapi_test_${randomBase62(10).toLowerCase()}`;
    const template = process.env.TEST_PG_TEMPLATE;
    await adminQuery(template ? `CREATE DATABASE ${name} TEMPLATE ${template}` : `CREATE DATABASE ${name}`);
    const url = urlForDatabase(testDatabaseUrl, name);
    const database = await openDatabase({ kind: 'postgres', url, poolSize: 10, ...options });
    if (!template) await migrate(database);
    return {
      database,
      url,
      async drop() {
        await database.close();
        await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      },
    };
  }
  const { template, pglite } = await pgliteStartingPoint();
  const database = await openDatabase({
    kind: 'pglite',
    ...(template ? { loadDataDir: template } : {}),
    pglite,
    ...options,
  });
  await migrate(database);
  return { database, url: undefined, drop: () => database.close() };
}
