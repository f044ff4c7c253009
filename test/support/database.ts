import { readFileSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { openDatabase, type Database } from '../../src/db/connect.js';
import { migrate } from '../../src/db/migrate.js';
import { forgetNamedStatements } from '../../src/db/pglite-dialect.js';
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
 * (a vitest worker runs many files in one process): the migrated template, PGlite's
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
 * test/support/global-setup.ts), or a freshly migrated one when a file is run on its own;
 * `unmigrated`: an empty one, for a test that migrates it step by step.
 */
export async function createTestDatabase(
  options: { onStatement?: (sql: string) => void; unmigrated?: true } = {},
): Promise<TestDatabase> {
  const { unmigrated, ...driverOptions } = options;
  if (testDatabaseUrl) {
    const name = `devapi_test_${randomBase62(10).toLowerCase()}`;
    const template = unmigrated ? undefined : process.env.TEST_PG_TEMPLATE;
    await adminQuery(template ? `CREATE DATABASE ${name} TEMPLATE ${template}` : `CREATE DATABASE ${name}`);
    const url = urlForDatabase(testDatabaseUrl, name);
    const database = await openDatabase({ kind: 'postgres', url, poolSize: 10, ...driverOptions });
    if (!template && !unmigrated) await migrate(database);
    return {
      database,
      url,
      async drop() {
        await database.close();
        await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      },
    };
  }
  if (unmigrated) {
    // An empty instance of its own, closed for good (the idle ones hold the template's schema).
    const { pglite } = await pgliteStartingPoint();
    const instance = await PGlite.create(pglite);
    const database = await openDatabase({ kind: 'pglite', instance, ...driverOptions });
    return { database, url: undefined, drop: () => database.close() };
  }
  const { instance, fresh } = await takePGlite();
  const database = await openDatabase({ kind: 'pglite', instance, ...driverOptions });
  await migrate(database);
  // Taken from the first instance once migrated, before any test wrote to it.
  if (fresh) await (resetScript ??= resetScriptFrom(instance));
  return { database, url: undefined, drop: () => database.close() };
}

/**
 * Idle PGlite instances of this process, reset to the migrated template's state. Opening one
 * costs about a second of CPU (a hundred databases in a run); resetting one, a few tens of ms.
 */
const idlePGlites: PGlite[] = [];
/** More idle instances than a test file uses at once only hold memory. */
const MAX_IDLE_PGLITES = 2;
/** The SQL that puts a used instance back in the template's state, taken from a fresh one. */
let resetScript: Promise<string> | undefined;

async function takePGlite(): Promise<{ instance: PGlite; fresh: boolean }> {
  const idle = idlePGlites.pop();
  if (idle) return { instance: lentPGlite(idle), fresh: false };
  const { template, pglite } = await pgliteStartingPoint();
  const opened = await PGlite.create({ ...(template ? { loadDataDir: template } : {}), ...pglite });
  return { instance: lentPGlite(opened), fresh: true };
}

/**
 * The instance as its test sees it: closing it resets it and puts it back in the idle list (or
 * closes it when the reset fails or enough are idle), and once closed this view refuses every
 * call, so nothing a closed app left running can reach the next file's data.
 */
function lentPGlite(instance: PGlite): PGlite {
  let returned = false;
  const giveBack = async () => {
    if (returned) return;
    returned = true;
    try {
      if (idlePGlites.length >= MAX_IDLE_PGLITES) throw new Error('enough idle instances');
      await instance.exec(await resetScript!);
      await forgetNamedStatements(instance);
      idlePGlites.push(instance);
    } catch {
      if (!instance.closed) await instance.close();
    }
  };
  return new Proxy(instance, {
    get(target, property) {
      if (property === 'close') return giveBack;
      if (property === 'closed') return returned || target.closed;
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (returned) throw new Error('this test database was closed');
        return (value as (...args: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

/**
 * Puts back the template's tables: a table a test made (a month partition, a detached archive) is
 * dropped, and a month partition a test dropped is made again, empty.
 */
async function partitionsResetFrom(fresh: PGlite): Promise<string> {
  const literal = (text: string) => `'${text.replaceAll("'", "''")}'`;
  const { rows } = await fresh.query<{ name: string; parent: string | null; bound: string | null }>(`
    SELECT c.relname AS name, p.relname AS parent, pg_get_expr(c.relpartbound, c.oid) AS bound
    FROM pg_class c
    JOIN pg_namespace n ON n.oid = c.relnamespace
    LEFT JOIN pg_inherits i ON i.inhrelid = c.oid
    LEFT JOIN pg_class p ON p.oid = i.inhparent
    WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p')`);
  const names = rows.map((row) => literal(row.name)).join(', ');
  const remade = rows
    .filter((row) => row.parent && row.bound)
    .map(
      (row) =>
        `IF NOT EXISTS (SELECT 1 FROM pg_inherits WHERE inhrelid = to_regclass(${literal(`public.${row.name}`)})) THEN ` +
        `DROP TABLE IF EXISTS public.${JSON.stringify(row.name)}; CREATE TABLE public.${JSON.stringify(row.name)} PARTITION OF public.${JSON.stringify(row.parent)} ${row.bound}; END IF;`,
    );
  return `DO $reset$ DECLARE extra record; BEGIN
    FOR extra IN SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND c.relname NOT IN (${names}) LOOP
      EXECUTE format('DROP TABLE IF EXISTS public.%I', extra.relname);
    END LOOP;
    ${remade.join('\n    ')}
  END $reset$`;
}

/**
 * Empties every table but the migrations' list, then puts back the rows and sequence values the
 * migrations left (platform accounts, fee plans...), all in one transaction.
 */
async function resetScriptFrom(fresh: PGlite): Promise<string> {
  const literal = (text: string) => `'${text.replaceAll("'", "''")}'`;
  const tables = (
    await fresh.query<{ name: string; columns: string[] }>(`
      SELECT c.relname AS name, array_agg(quote_ident(a.attname) ORDER BY a.attnum) AS columns
      FROM pg_class c
      JOIN pg_namespace n ON n.oid = c.relnamespace
      JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
      WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND NOT c.relispartition
        AND c.relname <> 'schema_migrations'
      GROUP BY c.relname ORDER BY c.relname`)
  ).rows;
  const statements = [
    'BEGIN',
    `TRUNCATE ${tables.map((table) => `public.${JSON.stringify(table.name)}`).join(', ')}`,
    await partitionsResetFrom(fresh),
  ];
  for (const { name, columns } of tables) {
    const table = `public.${JSON.stringify(name)}`;
    const { rows } = await fresh.query<{ rows: string | null }>(`SELECT json_agg(t)::text AS rows FROM ${table} t`);
    const json = rows[0]?.rows;
    if (!json) continue;
    const list = columns.join(', ');
    statements.push(
      `INSERT INTO ${table} (${list}) OVERRIDING SYSTEM VALUE SELECT ${list} FROM json_populate_recordset(NULL::${table}, ${literal(json)}::json)`,
    );
  }
  const sequences = (
    await fresh.query<{ name: string }>(
      `SELECT quote_ident(c.relname) AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = 'public' AND c.relkind = 'S'`,
    )
  ).rows;
  for (const { name } of sequences) {
    const { rows } = await fresh.query<{ last_value: string; is_called: boolean }>(
      `SELECT last_value::text, is_called FROM public.${name}`,
    );
    const state = rows[0]!;
    statements.push(`SELECT setval(${literal(`public.${name}`)}, ${state.last_value}, ${state.is_called})`);
  }
  statements.push('COMMIT', 'RESET ALL', 'SELECT pg_advisory_unlock_all()');
  return `${statements.join(';\n')};`;
}
