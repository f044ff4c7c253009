/**
 * `npm test`: runs every test file under test/ with node's test runner, with a database of its own
 * per file copied from one migrated template (PostgreSQL: made here per run; PGlite: made once and
 * cached, see pgliteTemplate). PGlite by default; PostgreSQL when TEST_DATABASE_URL is set.
 * `npm test -- <part of a path>...` runs the matching files only.
 * The files run as JavaScript compiled once for the run (compileForTests), not through tsx, in a
 * few long-lived processes that each run their share of the files one after another (batches, see
 * scripts/test-batch.mjs), so the modules they share are loaded once per process, not per file.
 * At the end it prints the slowest files with their wall and CPU time.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { build } from 'esbuild';
import pg from 'pg';
import { openDatabase } from '../src/db/connect.js';
import { listMigrations, migrate } from '../src/db/migrate.js';
import { randomBase62 } from '../src/lib/ids.js';

const SLOWEST_SHOWN = 10;

/**
 * A fixed piece of CPU work (parsing a fixed 145 KB JSON document ten times), timed in CPU seconds
 * every few seconds of the run: this 2-core machine's CPU is not always as fast (the same suite
 * took 125 s one hour and 291 s the hour before, one test file 11.8 s of CPU then 24.8 s), and a
 * run's time means something only beside how fast the CPU was meanwhile. CPU time, not wall: the
 * test processes keep both cores busy, which stretches the sample's wall time, not its CPU time.
 */
const SPEED_SAMPLE = JSON.stringify(
  Array.from({ length: 2000 }, (_, i) => ({ id: `pi_${i}`, amount: i * 100, label: `Panier ${i}`, status: 'PENDING' })),
);
const SPEED_EVERY_MS = 5_000;

function sampleCpuSpeed(): number {
  const before = process.cpuUsage();
  for (let round = 0; round < 10; round++) JSON.parse(SPEED_SAMPLE);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}

function describeCpuSpeed(samples: number[]): string {
  const sorted = [...samples].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)]!;
  return `# CPU speed meanwhile: parsing the same JSON took ${median.toFixed(1)} ms of CPU (median of ${sorted.length} samples taken every ${SPEED_EVERY_MS / 1000} s, ${sorted[0]!.toFixed(1)} to ${sorted.at(-1)!.toFixed(1)} ms)`;
}

/**
 * Test processes run side by side: much of a file's time is waiting (on HTTP, on workers, on child
 * processes), so more processes than cores keep the CPU busy; but not many more: on 2 cores the
 * whole suite on PGlite took 157 s with 4 processes, 162 s with 3 and 197 s with 6, whose
 * processes (each with its PGlite instances) used a quarter more CPU for the same tests.
 * Override with TEST_CONCURRENCY.
 */
const DEFAULT_CONCURRENCY = 4;

/**
 * A test file with this comment runs in a process of its own instead of a batch: for a file that
 * changes what the whole process shares (environment, global dispatcher, process handlers).
 */
const OWN_PROCESS_MARK = '// test-runner: own-process';

/** Where compileForTests writes the run's JavaScript (a cache directory: nothing in it is kept). */
const BUILD_DIR = path.resolve('node_modules', '.cache', 'devapi-tests', 'build');

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
 * Compiles src/ and test/ to JavaScript under BUILD_DIR, file by file (esbuild, the compiler tsx
 * itself uses, so the code runs the same), with their other files (SQL, templates) beside them.
 * Loading TypeScript through tsx cost each test file's process about 2 s of CPU before its first
 * test; compiling the whole tree once takes well under a second. Types are checked by
 * `npm run typecheck`, not here.
 */
async function compileForTests(): Promise<string> {
  rmSync(BUILD_DIR, { recursive: true, force: true });
  const sources = [...filesUnder('src'), ...filesUnder('test')];
  await build({
    entryPoints: sources.filter((file) => file.endsWith('.ts')),
    outdir: BUILD_DIR,
    outbase: '.',
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: 'linked',
    logLevel: 'warning',
  });
  for (const file of sources.filter((name) => !name.endsWith('.ts'))) {
    mkdirSync(path.dirname(path.join(BUILD_DIR, file)), { recursive: true });
    copyFileSync(file, path.join(BUILD_DIR, file));
  }
  // The rest of the repository (package.json, openapi.json, packages/, examples/...) is linked
  // in, so a test finds what lies beside it as it would in the sources: `../../openapi.json`.
  for (const entry of readdirSync('.')) {
    if (!['src', 'test', 'node_modules', '.git'].includes(entry))
      symlinkSync(path.resolve(entry), path.join(BUILD_DIR, entry));
  }
  return BUILD_DIR;
}

/** The test file a compiled file came from, for the summary: test/x.test.ts, not its .js copy. */
function sourceOf(file: string): string {
  const resolved = path.resolve(file);
  if (!resolved.startsWith(`${BUILD_DIR}${path.sep}`)) return path.relative(process.cwd(), resolved);
  return path.relative(BUILD_DIR, resolved).replace(/\.js$/, '.ts');
}

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

interface FileTimes {
  /** Each test file's wall time: its process's, or in a batch its suite's. */
  wall: Map<string, number>;
  /** Each test file's CPU: its process's, or in a batch what its suite used. */
  cpu: Map<string, number>;
  /** Each process's CPU, by the file it ran (a test file or a batch). */
  processCpu: Map<string, number>;
  /** Each batch process's wall time. */
  batches: Map<string, number>;
}

/**
 * The wall time of each file of the run (file-times-reporter.mjs) and the CPU it used
 * (file-cpu-preload.mjs, test-batch.mjs; child processes a test starts are not counted), by
 * source path.
 */
function readFileTimes(timesFile: string): FileTimes {
  const times: FileTimes = { wall: new Map(), cpu: new Map(), processCpu: new Map(), batches: new Map() };
  const lines = existsSync(timesFile) ? readFileSync(timesFile, 'utf8').split('\n').filter(Boolean) : [];
  for (const line of lines) {
    const [kind, text = '0', file = ''] = line.split('\t');
    const seconds = Number(text);
    if (kind === 'suite') times.wall.set(file, seconds);
    else if (kind === 'filecpu') times.cpu.set(file, seconds);
    else if (kind === 'cpu') {
      times.processCpu.set(sourceOf(file), seconds);
      if (!isBatch(file)) times.cpu.set(sourceOf(file), seconds);
    } else if (isBatch(file)) times.batches.set(sourceOf(file), seconds);
    else times.wall.set(sourceOf(file), seconds);
  }
  return times;
}

/** The slowest files of the run, with the CPU each used, so a slow test is seen at once. */
function printSlowestFiles({ wall, cpu, processCpu, batches }: FileTimes, fileCount: number, wallMs: number): void {
  const sum = (values: Iterable<number>) => [...values].reduce((total, seconds) => total + seconds, 0);
  const totalCpu = sum(processCpu.values());
  const out = [
    `\n# ${fileCount} test files in ${(wallMs / 1000).toFixed(1)} s wall, ${totalCpu.toFixed(0)} s CPU in the test processes; the slowest (wall, CPU):`,
  ];
  for (const [file, seconds] of [...wall].sort((a, b) => b[1] - a[1]).slice(0, SLOWEST_SHOWN))
    out.push(`#   ${seconds.toFixed(1).padStart(6)} s  ${(cpu.get(file) ?? 0).toFixed(1).padStart(5)} s  ${file}`);
  if (batches.size > 0) {
    const walls = [...batches.values()].sort((a, b) => a - b);
    const shared = totalCpu - sum(cpu.values());
    out.push(
      `# ${batches.size} batch processes, ${walls[0]!.toFixed(0)} to ${walls.at(-1)!.toFixed(0)} s wall; ${shared.toFixed(1)} s CPU outside the files' tests (loading, start-up)`,
    );
  }
  process.stdout.write(`${out.join('\n')}\n`);
}

let filesDone = 0;
let timesRead = 0;

/**
 * A line as each file of a batch finishes: node's reporter shows a process's tests when the whole
 * process is done, which for a batch is near the end of the run.
 */
function reportProgress(timesFile: string, fileCount: number): void {
  if (!existsSync(timesFile)) return;
  const text = readFileSync(timesFile, 'utf8');
  const complete = text.slice(timesRead, text.lastIndexOf('\n') + 1);
  timesRead += complete.length;
  for (const line of complete.split('\n')) {
    const [kind, seconds, file = ''] = line.split('\t');
    const finished = kind === 'filecpu' ? file : kind === 'cpu' && !isBatch(file) ? sourceOf(file) : undefined;
    if (finished) process.stdout.write(`# finished ${finished} (${++filesDone} of ${fileCount}, ${seconds} s CPU)\n`);
  }
}

/** Each file's wall time in earlier runs on this checkout, to start the longest files first. */
const PAST_TIMES_FILE = path.resolve('node_modules', '.cache', 'devapi-tests', 'file-times.json');
/**
 * Each file's wall time in a whole run on PGlite on a 2-core machine, kept in the repository: a
 * fresh clone has no times of its own, and guessing from file sizes left one process running
 * alone for the last ~70 s of a run. `npm run test:times` writes it from this checkout's times.
 */
const KNOWN_TIMES_FILE = path.resolve('scripts', 'test-file-times.json');

function readTimes(file: string): Record<string, number> {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Record<string, number>;
  } catch {
    return {};
  }
}

function pastWallTimes(): Record<string, number> {
  return { ...readTimes(KNOWN_TIMES_FILE), ...readTimes(PAST_TIMES_FILE) };
}

function rememberWallTimes(wall: Map<string, number>): void {
  mkdirSync(path.dirname(PAST_TIMES_FILE), { recursive: true });
  writeFileSync(
    PAST_TIMES_FILE,
    JSON.stringify({ ...readTimes(PAST_TIMES_FILE), ...Object.fromEntries(wall) }, null, 1),
  );
}

/** Where a run's batch files are written: `<BUILD_DIR>/test-batches/batch-N.mjs`. */
const BATCH_DIR = path.join(BUILD_DIR, 'test-batches');

function isBatch(file: string): boolean {
  return path.resolve(file).startsWith(`${BATCH_DIR}${path.sep}`);
}

/**
 * The files split into `count` batches of about the same length (longest file first, each to the
 * batch with the least so far), by the wall times of earlier runs, so that no process is left
 * running alone at the end. A file not timed yet is guessed from its size (on a fresh clone, the
 * best guess there is: about 1 s per KB). Within a batch the longest files run first.
 */
function batches(files: string[], count: number): string[][] {
  const past = pastWallTimes();
  const weight = (file: string) => past[file] ?? statSync(file).size / 1000;
  const lanes = Array.from({ length: Math.min(count, files.length) }, () => ({ files: [] as string[], load: 0 }));
  for (const file of [...files].sort((a, b) => weight(b) - weight(a))) {
    const lane = lanes.reduce((least, candidate) => (candidate.load < least.load ? candidate : least));
    lane.files.push(file);
    lane.load += weight(file);
  }
  return lanes.map((lane) => lane.files);
}

/** The batch files for the run (see scripts/test-batch.mjs), each running its files in order. */
function writeBatches(groups: string[][], buildDir: string): string[] {
  mkdirSync(BATCH_DIR, { recursive: true });
  const runner = path.join(import.meta.dirname, 'test-batch.mjs');
  return groups.map((group, index) => {
    const file = path.join(BATCH_DIR, `batch-${index + 1}.mjs`);
    const compiled = group.map((source) => path.join(buildDir, source.replace(/\.ts$/, '.js')));
    writeFileSync(
      file,
      `import { runFiles } from ${JSON.stringify(runner)};\nrunFiles(${JSON.stringify(buildDir)}, ${JSON.stringify(compiled, null, 1)});\n`,
    );
    return file;
  });
}

/**
 * A migrated PGlite data directory as a tar file, made once and kept in node_modules/.cache
 * under a hash of what shapes it (the migrations, the migration runner, the PGlite version):
 * creating one costs a PGlite initdb, about 10 s, which most runs need not pay.
 */
async function pgliteTemplate(): Promise<string> {
  const hash = createHash('sha256');
  const pgliteVersion = (
    JSON.parse(readFileSync('node_modules/@electric-sql/pglite/package.json', 'utf8')) as { version: string }
  ).version;
  hash.update(pgliteVersion);
  hash.update('wal-segsize=1');
  hash.update(readFileSync('src/db/migrate.ts'));
  for (const migration of listMigrations()) hash.update(`${migration.version}\n${migration.sql}`);
  const dir = path.join('node_modules', '.cache', 'devapi-tests');
  const file = path.resolve(dir, `pglite-template-${hash.digest('hex').slice(0, 16)}.tar`);
  if (existsSync(file)) return file;
  // A 1 MB WAL segment instead of 16 MB: each test database unpacks the template, and most of a
  // default one is the mostly empty WAL file (a template of 31 MB instead of 40, opened faster).
  const template = await openDatabase({ kind: 'pglite', pglite: { initDbStartParams: ['--wal-segsize=1'] } });
  await migrate(template);
  const dump = await template.pglite!.dumpDataDir('none');
  await template.close();
  mkdirSync(dir, { recursive: true });
  for (const old of readdirSync(dir))
    if (old.startsWith('pglite-template-')) rmSync(path.join(dir, old), { force: true });
  // Written under a temporary name first, so a run stopped halfway leaves no broken template.
  const partial = `${file}.${process.pid}.partial`;
  writeFileSync(partial, Buffer.from(await dump.arrayBuffer()));
  renameSync(partial, file);
  return file;
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
    env.TEST_PGLITE_TEMPLATE = await pgliteTemplate();
    process.stdout.write('# database: PGlite (embedded)\n');
  }

  const buildDir = await compileForTests();
  env.TEST_BUILD_DIR = buildDir;

  const timesDir = mkdtempSync(path.join(os.tmpdir(), 'devapi-test-times-'));
  env.TEST_FILE_TIMES = path.join(timesDir, 'times.tsv');
  cleanups.push(async () => rmSync(timesDir, { recursive: true, force: true }));

  const concurrency = Number(process.env.TEST_CONCURRENCY ?? DEFAULT_CONCURRENCY);
  const ownProcess = files.filter((file) => readFileSync(file, 'utf8').includes(OWN_PROCESS_MARK));
  const batchFiles = writeBatches(
    batches(
      files.filter((file) => !ownProcess.includes(file)),
      Math.max(1, concurrency - ownProcess.length),
    ),
    buildDir,
  );
  const progress = setInterval(() => reportProgress(env.TEST_FILE_TIMES!, files.length), 2000);
  const speedSamples = [sampleCpuSpeed()];
  const speed = setInterval(() => speedSamples.push(sampleCpuSpeed()), SPEED_EVERY_MS);
  const code = await new Promise<number>((resolve) => {
    const child = spawn(
      process.execPath,
      [
        // V8's optimizing compile of PGlite's large WebAssembly module (in background threads)
        // costs more CPU than it saves in a test process: baseline code only.
        '--liftoff-only',
        '--enable-source-maps',
        '--import',
        path.join(import.meta.dirname, 'file-cpu-preload.mjs'),
        '--test',
        '--test-force-exit',
        `--test-concurrency=${concurrency}`,
        '--test-reporter=spec',
        '--test-reporter-destination=stdout',
        `--test-reporter=${path.join(import.meta.dirname, 'file-times-reporter.mjs')}`,
        '--test-reporter-destination=stdout',
        ...ownProcess.map((file) => path.join(buildDir, file.replace(/\.ts$/, '.js'))),
        ...batchFiles,
      ],
      { env, stdio: 'inherit' },
    );
    child.on('exit', (exitCode, signal) => resolve(exitCode ?? (signal ? 1 : 0)));
  });
  clearInterval(progress);
  clearInterval(speed);
  speedSamples.push(sampleCpuSpeed());
  if (process.env.TEST_KEEP_TIMES) copyFileSync(env.TEST_FILE_TIMES, process.env.TEST_KEEP_TIMES);
  const times = readFileTimes(env.TEST_FILE_TIMES);
  printSlowestFiles(times, files.length, Date.now() - startedAt);
  process.stdout.write(`${describeCpuSpeed(speedSamples)}\n`);
  rememberWallTimes(times.wall);
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
