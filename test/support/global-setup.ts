/**
 * Vitest's global setup for `npm test`: runs once, before any test file, in the main process.
 *
 * - A migrated database template every test database is copied from (test/support/database.ts):
 *   PostgreSQL when TEST_DATABASE_URL is set (a template database made for the run and dropped
 *   at the end), else PGlite (a data directory as a tar file, made once and cached, see
 *   pgliteTemplate).
 * - The tree compiled to JavaScript for the child processes tests start (servers, the admin CLI:
 *   test/support/node-entry.ts), so each child skips the TypeScript loader.
 *
 * It passes both to the test processes through the environment, which they inherit.
 */
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';
import pg from 'pg';
import { openDatabase } from '../../src/db/connect.js';
import { listMigrations, migrate } from '../../src/db/migrate.js';
import { randomBase62 } from '../../src/lib/ids.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const CACHE_DIR = path.join(ROOT, 'node_modules', '.cache', 'devapi-tests');
/** Where compileForTests writes the run's JavaScript (a cache directory: nothing in it is kept). */
const BUILD_DIR = path.join(CACHE_DIR, 'build');

function filesUnder(dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) found.push(...filesUnder(full));
    else found.push(full);
  }
  return found;
}

/**
 * src/ and test/ compiled file by file with esbuild (the compiler tsx itself uses, so the code runs
 * the same), their other files (SQL, templates) copied beside them and the rest of the repository
 * linked in, so a program finds what lies beside it as it would in the sources. Loading TypeScript
 * through tsx costs each child process about 2 s of CPU; compiling the tree takes under a second.
 */
async function compileForChildren(): Promise<string> {
  rmSync(BUILD_DIR, { recursive: true, force: true });
  const sources = [...filesUnder(path.join(ROOT, 'src')), ...filesUnder(path.join(ROOT, 'test'))];
  await build({
    entryPoints: sources.filter((file) => file.endsWith('.ts')),
    outdir: BUILD_DIR,
    outbase: ROOT,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: 'linked',
    logLevel: 'warning',
  });
  for (const file of sources.filter((name) => !name.endsWith('.ts'))) {
    const target = path.join(BUILD_DIR, path.relative(ROOT, file));
    mkdirSync(path.dirname(target), { recursive: true });
    copyFileSync(file, target);
  }
  for (const entry of readdirSync(ROOT)) {
    if (!['src', 'test', 'node_modules', '.git'].includes(entry))
      symlinkSync(path.join(ROOT, entry), path.join(BUILD_DIR, entry));
  }
  return BUILD_DIR;
}

/**
 * A migrated PGlite data directory as a tar file, kept under a hash of what shapes it (the
 * migrations, the migration runner, the PGlite version): making one costs a PGlite initdb, about
 * 10 s, which most runs need not pay.
 */
async function pgliteTemplate(): Promise<string> {
  const hash = createHash('sha256');
  const pglitePackage = path.join(ROOT, 'node_modules', '@electric-sql', 'pglite', 'package.json');
  hash.update((JSON.parse(readFileSync(pglitePackage, 'utf8')) as { version: string }).version);
  hash.update('wal-segsize=1');
  hash.update(readFileSync(path.join(ROOT, 'src', 'db', 'migrate.ts')));
  for (const migration of listMigrations()) hash.update(`${migration.version}\n${migration.sql}`);
  const file = path.join(CACHE_DIR, `pglite-template-${hash.digest('hex').slice(0, 16)}.tar`);
  if (existsSync(file)) return file;
  // A 1 MB WAL segment instead of 16 MB: most of a default template is its mostly empty WAL file.
  const template = await openDatabase({ kind: 'pglite', pglite: { initDbStartParams: ['--wal-segsize=1'] } });
  await migrate(template);
  const dump = await template.pglite!.dumpDataDir('none');
  await template.close();
  mkdirSync(CACHE_DIR, { recursive: true });
  for (const old of readdirSync(CACHE_DIR))
    if (old.startsWith('pglite-template-')) rmSync(path.join(CACHE_DIR, old), { force: true });
  // Written under a temporary name first, so a run stopped halfway leaves no broken template.
  const partial = `${file}.${process.pid}.partial`;
  writeFileSync(partial, Buffer.from(await dump.arrayBuffer()));
  renameSync(partial, file);
  return file;
}

/** A migrated template database on the run's PostgreSQL; answers its name and how to drop it. */
async function postgresTemplate(databaseUrl: string): Promise<{ name: string; drop: () => Promise<void> }> {
  const name = `devapi_template_${randomBase62(8).toLowerCase()}`;
  const admin = new pg.Client({ connectionString: databaseUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(databaseUrl);
  url.pathname = `/${name}`;
  const template = await openDatabase({ kind: 'postgres', url: url.toString(), poolSize: 1 });
  await migrate(template);
  await template.close();
  return {
    name,
    async drop() {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
      await admin.end();
    },
  };
}

export default async function setup(): Promise<() => Promise<void>> {
  const databaseUrl = process.env.TEST_DATABASE_URL;
  let teardown = async () => {};
  if (databaseUrl) {
    const template = await postgresTemplate(databaseUrl);
    process.env.TEST_PG_TEMPLATE = template.name;
    teardown = template.drop;
    process.stdout.write(`database: PostgreSQL (${new URL(databaseUrl).host}), template ${template.name}\n`);
  } else {
    process.env.TEST_PGLITE_TEMPLATE = await pgliteTemplate();
    process.stdout.write('database: PGlite (embedded)\n');
  }
  process.env.TEST_BUILD_DIR = await compileForChildren();
  return teardown;
}
