/**
 * `npm test`: runs every test file under test/ with node's test runner, each file in its own
 * process with its own database copied from one migrated template made here first.
 * PGlite by default; PostgreSQL when TEST_DATABASE_URL is set.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { openDatabase } from '../src/db/connect.js';
import { migrate } from '../src/db/migrate.js';
import { randomBase62 } from '../src/lib/ids.js';

const SLOWEST_SHOWN = 10;

function testFiles(dir: string, filter: string[]): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir)) {
    const full = path.join(dir, entry);
    if (statSync(full).isDirectory()) found.push(...testFiles(full, filter));
    else if (entry.endsWith('.test.ts') && (filter.length === 0 || filter.some((f) => full.includes(f))))
      found.push(full);
  }
  return found.sort();
}

/** The slowest files of the run (from file-times-reporter.mjs), so a slow test is seen at once. */
function printSlowestFiles(timesFile: string, fileCount: number, wallMs: number): void {
  const times = existsSync(timesFile)
    ? readFileSync(timesFile, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => {
          const [seconds = '0', file = ''] = line.split('\t');
          return { seconds: Number(seconds), file: path.relative(process.cwd(), file) };
        })
    : [];
  times.sort((a, b) => b.seconds - a.seconds);
  const lines = [`\n# ${fileCount} test files in ${(wallMs / 1000).toFixed(1)} s wall; the slowest:`];
  for (const { seconds, file } of times.slice(0, SLOWEST_SHOWN))
    lines.push(`#   ${seconds.toFixed(1).padStart(6)} s  ${file}`);
  process.stdout.write(`${lines.join('\n')}\n`);
}

async function main(): Promise<number> {
  const startedAt = Date.now();
  const filter = process.argv.slice(2);
  const files = testFiles('test', filter);
  const env: NodeJS.ProcessEnv = { ...process.env };
  const cleanups: (() => Promise<void>)[] = [];
  const databaseUrl = process.env.TEST_DATABASE_URL;

  if (databaseUrl) {
    const name = `devapi_template_${randomBase62(8).toLowerCase()}`;
    const admin = new pg.Client({ connectionString: databaseUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    const url = new URL(databaseUrl);
    url.pathname = `/${name}`;
    const template = await openDatabase({ kind: 'postgres', url: url.toString(), poolSize: 1 });
    await migrate(template);
    await template.close();
    env.TEST_PG_TEMPLATE = name;
    cleanups.push(async () => {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    });
    process.stdout.write(`# database: PostgreSQL (${url.host}), template ${name}\n`);
  } else {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'devapi-test-'));
    const template = await openDatabase({ kind: 'pglite' });
    await migrate(template);
    const dump = await template.pglite!.dumpDataDir('none');
    await template.close();
    const file = path.join(dir, 'template.tar');
    writeFileSync(file, Buffer.from(await dump.arrayBuffer()));
    env.TEST_PGLITE_TEMPLATE = file;
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    process.stdout.write('# database: PGlite (embedded)\n');
  }

  const timesDir = mkdtempSync(path.join(os.tmpdir(), 'devapi-test-times-'));
  env.TEST_FILE_TIMES = path.join(timesDir, 'times.tsv');
  cleanups.push(async () => rmSync(timesDir, { recursive: true, force: true }));

  const concurrency = process.env.TEST_CONCURRENCY ?? '2';
  const code = await new Promise<number>((resolve) => {
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        '--test',
        '--test-force-exit',
        `--test-concurrency=${concurrency}`,
        '--test-reporter=spec',
        '--test-reporter-destination=stdout',
        `--test-reporter=${path.join(import.meta.dirname, 'file-times-reporter.mjs')}`,
        '--test-reporter-destination=stdout',
        ...files,
      ],
      { env, stdio: 'inherit' },
    );
    child.on('exit', (exitCode, signal) => resolve(exitCode ?? (signal ? 1 : 0)));
  });
  printSlowestFiles(env.TEST_FILE_TIMES, files.length, Date.now() - startedAt);
  for (const cleanup of cleanups) await cleanup().catch(() => {});
  return code;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`test runner failed: ${String(error)}\n`);
    process.exit(1);
  },
);
