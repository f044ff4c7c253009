/**
 * `npm run bench -- ab BASE_REF`: the same payment-intent creates, GETs and sandbox payments sent
 * to two builds of the API in turn, A (BASE_REF, built in a temporary git worktree) and B (this
 * tree), each reading the CPU its API process and its PostgreSQL backends spent per request. CPU
 * per request moves far less than throughput on a machine whose speed drifts; the builds take
 * turns operation by operation, the order flipping each time (A B, B A, ...), so a drift does not
 * always land on one side.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { randomBase62 } from '../src/lib/ids.js';
import { ADMIN_TOKEN, createBusiness, keyOf } from './intents.js';
import { BENCH_DATABASE_URL } from './support/database.js';
import { cpuTimeMs, freePort } from './support/processes.js';
import { median } from './support/rounds.js';

const OPERATIONS = ['create', 'get', 'pay'] as const;
type Operation = (typeof OPERATIONS)[number];

/** Sandbox payers: enough that concurrent payments seldom wait on one wallet's lock. */
const PAYERS = Array.from({ length: 32 }, (_, i) => `+2223${String(i).padStart(7, '0')}`);

function positiveInteger(name: string, fallback: number): number {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a whole number >= 1`);
  return value;
}

function run(command: string, args: string[], cwd: string): void {
  const result = spawnSync(command, args, { cwd, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} (in ${cwd}) failed: ${result.stderr}`);
}

/**
 * BASE_REF checked out and built in a temporary worktree. Its node_modules is this tree's when the
 * lockfiles are the same (an install takes minutes), else installed with `npm ci`.
 */
function buildBase(ref: string): { dir: string; remove(): void } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ab-base-'));
  run('git', ['worktree', 'add', '--detach', dir, ref], process.cwd());
  const remove = () => {
    spawnSync('git', ['worktree', 'remove', '--force', dir], { stdio: 'ignore' });
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const sameLock =
      readFileSync(path.join(dir, 'package-lock.json'), 'utf8') === readFileSync('package-lock.json', 'utf8');
    if (sameLock) symlinkSync(path.resolve('node_modules'), path.join(dir, 'node_modules'), 'dir');
    else run('npm', ['ci', '--ignore-scripts', '--no-audit', '--no-fund'], dir);
    run('npm', ['run', 'build'], dir);
    if (!existsSync(path.join(dir, 'dist', 'server.js'))) throw new Error(`${ref} built no dist/server.js`);
    return { dir, remove };
  } catch (error) {
    remove();
    throw error;
  }
}

interface Build {
  label: 'A' | 'B';
  url: string;
  pid: number;
  database: string;
  secretKey: string;
  stop(): Promise<void>;
}

/** AB_ENV_A, AB_ENV_B: settings for one side only (`KEY=value KEY=value`), to compare one build with itself. */
function sideSettings(label: 'A' | 'B'): Record<string, string> {
  const settings = process.env[`AB_ENV_${label}`] ?? '';
  return Object.fromEntries(
    settings
      .split(/\s+/)
      .filter(Boolean)
      .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
  );
}

/** A fresh database, and the build's API (`--api`, as `npm run start:api` runs it) on it; it migrates on start. */
async function startBuild(label: 'A' | 'B', dir: string, admin: pg.Client): Promise<Build> {
  const database = `devapi_ab_${label.toLowerCase()}_${randomBase62(8).toLowerCase()}`;
  await admin.query(`CREATE DATABASE ${database}`);
  const url = new URL(BENCH_DATABASE_URL);
  url.pathname = `/${database}`;
  const scripts = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')).scripts as Record<string, string>;
  const flags = scripts.start!.split(/\s+/).filter((arg) => arg.startsWith('--'));
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, [...flags, 'dist/server.js', '--api'], {
    cwd: dir,
    env: {
      ...process.env,
      DATABASE_URL: url.toString(),
      ADMIN_TOKEN,
      SEED_DEMO: 'false',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_LIVE_PER_MINUTE: '1000000000',
      RATE_LIMIT_TEST_PER_MINUTE: '1000000000',
      PORT: String(port),
      HOST: '127.0.0.1',
      ...sideSettings(label),
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`build ${label} exited: ${stderr}`);
    if (
      await fetch(`${base}/ready`).then(
        (response) => response.ok,
        () => false,
      )
    )
      break;
    if (Date.now() > deadline) throw new Error(`build ${label} did not start: ${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const business = await createBusiness(base, `A/B shop ${label}`);
  return {
    label,
    url: base,
    pid: child.pid!,
    database,
    secretKey: `Bearer ${keyOf(business.keys, 'secret', 'test')}`,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    },
  };
}

/**
 * CPU so far of every backend connected to `database`, by pid (utime + stime from /proc): only
 * this build's work, though other databases of the same server are busy. Background processes
 * (WAL writer, checkpointer) are shared and not counted.
 */
async function backendCpu(admin: pg.Client, database: string): Promise<Map<number, number>> {
  const { rows } = await admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1', [
    database,
  ]);
  const cpu = new Map<number, number>();
  for (const { pid } of rows) {
    try {
      cpu.set(pid, cpuTimeMs(pid));
    } catch {
      // The backend ended between the query and the read.
    }
  }
  return cpu;
}

/** CPU spent between two readings; a backend that started in between counts from zero. */
function spentBetween(before: Map<number, number>, after: Map<number, number>): number {
  let total = 0;
  for (const [pid, ms] of after) total += ms - (before.get(pid) ?? 0);
  return total;
}

/** Sends `count` requests, `concurrency` at a time; any answer but `status` stops the run. */
async function send(
  count: number,
  concurrency: number,
  status: number,
  request: (n: number) => { method: string; url: string; headers: Record<string, string>; body?: string },
): Promise<unknown[]> {
  const answers: unknown[] = new Array(count);
  let next = 0;
  const client = async () => {
    while (next < count) {
      const n = next++;
      const { method, url, headers, body } = request(n);
      const response = await fetch(url, {
        method,
        headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body }),
      });
      const text = await response.text();
      if (response.status !== status) throw new Error(`${method} ${url}: ${response.status} ${text.slice(0, 300)}`);
      answers[n] = JSON.parse(text);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, client));
  return answers;
}

interface RoundCpu {
  api: number;
  postgres: number;
}

/**
 * One round's work on one build, an operation at a time: `count` creates, then GETs of them, then
 * a payment of each. Each call runs the next operation and answers the CPU it cost per request.
 */
function roundOn(build: Build, admin: pg.Client, count: number, concurrency: number) {
  const batch = randomBase62(6);
  const headers = { authorization: build.secretKey };
  let references: string[] = [];
  const operations: Record<Operation, () => Promise<void>> = {
    create: async () => {
      const created = (await send(count, concurrency, 201, (n) => ({
        method: 'POST',
        url: `${build.url}/api/v1/dev/intents`,
        headers: { ...headers, 'x-idempotency-key': `ab-${batch}-${n}` },
        body: JSON.stringify({ amount: 1_000 + (n % 500), label: 'A/B order', metadata: { n: String(n) } }),
      }))) as { data: { referenceNumber: string } }[];
      references = created.map((answer) => answer.data.referenceNumber);
    },
    get: async () => {
      await send(count, concurrency, 200, (n) => ({
        method: 'GET',
        url: `${build.url}/api/v1/dev/intents/${references[n]}`,
        headers,
      }));
    },
    pay: async () => {
      await send(count, concurrency, 200, (n) => ({
        method: 'POST',
        url: `${build.url}/api/v1/dev/intents/${references[n]}/simulate`,
        headers: { ...headers, 'x-idempotency-key': `ab-pay-${batch}-${n}` },
        body: JSON.stringify({ payerPhone: PAYERS[n % PAYERS.length] }),
      }));
    },
  };
  return async (operation: Operation): Promise<RoundCpu> => {
    const api = cpuTimeMs(build.pid);
    const backends = await backendCpu(admin, build.database);
    await operations[operation]();
    return {
      api: (cpuTimeMs(build.pid) - api) / count,
      postgres: spentBetween(backends, await backendCpu(admin, build.database)) / count,
    };
  };
}

/**
 * One round on both builds, interleaved by operation (A's creates, B's creates, B's GETs, A's
 * GETs...): the two figures of a pair are taken seconds apart, so a machine whose load changes
 * by the minute weighs on both alike. `flip` starts with B.
 */
async function round(
  builds: Build[],
  admin: pg.Client,
  count: number,
  concurrency: number,
  flip: boolean,
): Promise<Record<'A' | 'B', Record<Operation, RoundCpu>>> {
  const next = new Map(builds.map((build) => [build, roundOn(build, admin, count, concurrency)]));
  const cpu = { A: {}, B: {} } as Record<'A' | 'B', Record<Operation, RoundCpu>>;
  for (const [i, operation] of OPERATIONS.entries()) {
    for (const build of (i % 2 === 1) !== flip ? [...builds].reverse() : builds) {
      cpu[build.label][operation] = await next.get(build)!(operation);
    }
  }
  return cpu;
}

const format = (ms: number) => ms.toFixed(3).padStart(7);

export async function abSuite(args: string[]): Promise<void> {
  const ref = args[0];
  if (!ref) throw new Error('usage: npm run bench -- ab BASE_REF');
  const count = positiveInteger('AB_REQUESTS', 1000);
  const rounds = positiveInteger('AB_ROUNDS', 5);
  const concurrency = positiveInteger('AB_CONCURRENCY', 4);
  const admin = new pg.Client({ connectionString: BENCH_DATABASE_URL });
  await admin.connect();
  const base = buildBase(ref);
  const builds: Build[] = [];
  let cleaned: Promise<void> | undefined;
  // The servers, their databases and the worktree go on every way out, Ctrl-C included.
  const cleanUp = () =>
    (cleaned ??= (async () => {
      for (const build of builds) await build.stop().catch((error: unknown) => console.error(error));
      await admin.end();
      base.remove();
    })());
  const interrupted = () => void cleanUp().finally(() => process.exit(130));
  process.once('SIGINT', interrupted).once('SIGTERM', interrupted);
  try {
    builds.push(await startBuild('A', base.dir, admin));
    builds.push(await startBuild('B', process.cwd(), admin));
    console.log(
      `A = ${ref} (${spawnSync('git', ['rev-parse', '--short', ref], { encoding: 'utf8' }).stdout.trim()}), ` +
        `B = this tree${process.env.AB_ENV_A ? `; A with ${process.env.AB_ENV_A}` : ''}` +
        `${process.env.AB_ENV_B ? `; B with ${process.env.AB_ENV_B}` : ''}; ${rounds} rounds of ${count} creates, GETs and payments per build, ${concurrency} at a ` +
        `time, after a warm-up of ${Math.ceil(count / 5)}; CPU from /proc (10 ms ticks)`,
    );
    // Unmeasured: JIT, connections, prepared statements and the sandbox wallets' creation.
    await round(builds, admin, Math.ceil(count / 5), concurrency, false);
    const measured: Record<'A' | 'B', Record<Operation, RoundCpu>[]> = { A: [], B: [] };
    for (let i = 0; i < rounds; i++) {
      const cpu = await round(builds, admin, count, concurrency, i % 2 === 1);
      measured.A.push(cpu.A);
      measured.B.push(cpu.B);
    }
    console.log('\nCPU ms per request, median over rounds; B/A is the ratio of the medians');
    const perRound: string[] = [];
    console.log(
      `${'operation'.padEnd(9)} ${'API A'.padStart(7)}  ${'API B'.padStart(7)}  B/A   ${'PG A'.padStart(7)}  ${'PG B'.padStart(7)}  B/A`,
    );
    for (const operation of OPERATIONS) {
      const side = (label: 'A' | 'B', of: keyof RoundCpu) => measured[label].map((cpu) => cpu[operation][of]);
      const ratios = (of: keyof RoundCpu) =>
        side('B', of)
          .map((b, i) => (b / side('A', of)[i]!).toFixed(2))
          .join(' ');
      const [apiA, apiB, pgA, pgB] = [
        side('A', 'api'),
        side('B', 'api'),
        side('A', 'postgres'),
        side('B', 'postgres'),
      ].map(median) as [number, number, number, number];
      console.log(
        `${operation.padEnd(9)} ${format(apiA)}  ${format(apiB)}  ${(apiB / apiA).toFixed(2)}  ` +
          `${format(pgA)}  ${format(pgB)}  ${(pgB / pgA).toFixed(2)}`,
      );
      perRound.push(`${operation}: API ${ratios('api')}; PostgreSQL ${ratios('postgres')}`);
    }
    console.log(`B/A of each round: ${perRound.join('; ')}`);
  } finally {
    process.off('SIGINT', interrupted).off('SIGTERM', interrupted);
    await cleanUp();
  }
}
