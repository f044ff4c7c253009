/**
 * `npm run bench -- links [pglite|postgres]` (both without an argument): payment links (issue 50).
 *
 * (a) A payment through a link (POST /checkout/links/{slug}/pay: the intent made and paid in one
 * request) beside a plain intent's checkout (the merchant's POST /api/v1/dev/intents, then the
 * payer's POST /checkout/intents/{shortCode}/pay), and beside that checkout's payment alone (its
 * intents created through the API before the round), in rounds in turn (rounds.ts), with the CPU
 * each spends per payment. Every payment is a fresh funded wallet's (the checkout's limit of 20
 * attempts a minute per wallet is not what is measured) from an address of its own through
 * X-Forwarded-For (TRUST_PROXY=127.0.0.1; the limit of 120 a minute per address is a constant of
 * the checkout, not a setting), with its own idempotency key. Goal: a link payment at >= 0.9x the
 * checkout's throughput, <= 1.11x its CPU per payment.
 *
 * (b) 1,000 anonymous views of a link's JSON (GET /checkout/links/{slug}) and, when this build
 * serves it, of its page (GET /l/{slug}), each from an address of its own: every table's rows are
 * counted before and after, and none may be new. `links views` runs (b) alone.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { openDatabase } from '../src/db/connect.js';
import { randomBase62 } from '../src/lib/ids.js';
import { SANDBOX_WALLET_PIN } from '../src/modules/sandbox/sandbox.js';
import { ADMIN_TOKEN, createBusiness, keyOf } from './intents.js';
import { printCpuPerRequest, printThroughput } from './report.js';
import { createScratchDatabase, type ScratchDatabase } from './support/database.js';
import { sendRequest, type LoadRequest, type LoadResult } from './support/load.js';
import { startServer, withCpuPerRequest, type CpuPerRequest, type ServerProcess } from './support/processes.js';
import { inRounds, roundCount, roundDurationMs, roundRatios } from './support/rounds.js';
import { fundBenchWallets, type Queryable } from './support/sandbox.js';

const AMOUNT = 12_500;
const VIEWS = 1_000;
const WARMUP_MS = 2000;
/** The tables a visitor must not fill; every other table is counted too. */
const WATCHED = ['payment_intents', 'payments', 'events', 'idempotency_keys'];

/** An address of its own for request `n`, as a proxy in front of the API would pass it on. */
const addressOf = (n: number) => `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;

/**
 * A closed loop of `concurrency` clients, each running `flow` (one payment: one request or
 * several) and the next, for `durationMs` after a warm-up; figures per flow, as runLoad's per
 * request. `flow` answers an error's description, or undefined.
 */
export async function runFlows(
  baseUrl: string,
  options: { concurrency: number; durationMs: number },
  flow: (send: (request: LoadRequest) => Promise<{ status: number; body: string }>) => Promise<string | undefined>,
): Promise<LoadResult> {
  const base = new URL(baseUrl);
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.concurrency });
  const send = (request: LoadRequest) => sendRequest(agent, base, request);
  const latencies: number[] = [];
  let errors = 0;
  let sent = 0;
  let firstError: string | undefined;
  const warmupEnds = Date.now() + WARMUP_MS;
  const ends = warmupEnds + options.durationMs;
  let measuredFrom = 0;
  const client = async () => {
    while (Date.now() < ends) {
      sent += 1;
      const started = process.hrtime.bigint();
      const error = await flow(send);
      const tookMs = Number(process.hrtime.bigint() - started) / 1e6;
      if (Date.now() < warmupEnds) continue;
      measuredFrom ||= Date.now();
      if (error === undefined) latencies.push(tookMs);
      else {
        errors += 1;
        firstError ??= error;
      }
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, client));
  const seconds = (Date.now() - measuredFrom) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const at = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? NaN;
  return {
    requests: latencies.length,
    sent,
    errors,
    perSecond: latencies.length / seconds,
    p50Ms: at(0.5),
    p99Ms: at(0.99),
    ...(firstError ? { firstError } : {}),
    seconds,
    latenciesMs: latencies,
  };
}

export const unexpected = (answer: { status: number; body: string }, status: number) =>
  answer.status === status ? undefined : `${answer.status} ${answer.body.slice(0, 300)}`;

/** Rows of every table of the public schema. */
async function countRows(sql: Queryable): Promise<Map<string, number>> {
  const { rows } = await sql.query(
    `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'
     ORDER BY table_name`,
  );
  const counts = new Map<string, number>();
  for (const { table_name: table } of rows as { table_name: string }[]) {
    const counted = await sql.query(`SELECT count(*)::int AS n FROM "${table}"`);
    counts.set(table, (counted.rows[0] as { n: number }).n);
  }
  return counts;
}

/** The API on one database, and SQL beside it (PGlite has one owner: the server stops meanwhile). */
export interface Bench {
  name: string;
  api(): ServerProcess;
  withSql<T>(run: (sql: Queryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** A bench's API server: the demo off, quiet, behind a trusted proxy, the API rate limits out of the way. */
export function serverEnv(database: Record<string, string>): Record<string, string> {
  return {
    ...database,
    ADMIN_TOKEN,
    SEED_DEMO: 'false',
    LOG_LEVEL: 'warn',
    TRUST_PROXY: '127.0.0.1',
    RATE_LIMIT_LIVE_PER_MINUTE: '1000000000',
    RATE_LIMIT_TEST_PER_MINUTE: '1000000000',
  };
}

async function onPostgres(): Promise<Bench> {
  const scratch: ScratchDatabase = await createScratchDatabase();
  const client = new pg.Client({ connectionString: scratch.url });
  await client.connect();
  const api = await startServer('src/server.ts', ['--api'], serverEnv({ DATABASE_URL: scratch.url }), '/ready');
  return {
    name: 'PostgreSQL scratch database',
    api: () => api,
    withSql: (run) => run(client),
    async close() {
      await api.stop();
      await client.end();
      await scratch.drop();
    },
  };
}

/** An API process on a PGlite data directory of its own, stopped while `withSql` reads it directly. */
export async function onPGlite(suite = 'links'): Promise<Bench> {
  const dir = mkdtempSync(path.join(os.tmpdir(), `devapi-bench-${suite}-`));
  const start = () => startServer('src/server.ts', ['--api'], serverEnv({ DATA_DIR: dir }), '/ready');
  let api: ServerProcess | undefined = await start();
  return {
    name: 'PGlite (embedded) data directory',
    api: () => api!,
    async withSql(run) {
      await api?.stop();
      api = undefined;
      const database = await openDatabase({ kind: 'pglite', dataDir: path.join(dir, 'pglite') });
      try {
        return await run(database.pglite!);
      } finally {
        await database.close();
        api = await start();
      }
    },
    async close() {
      await api?.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function linksSuite(args: string[]): Promise<void> {
  const which = args.filter((arg) => arg === 'pglite' || arg === 'postgres');
  for (const kind of which.length > 0 ? which : ['pglite', 'postgres']) {
    const bench = kind === 'pglite' ? await onPGlite() : await onPostgres();
    try {
      await linksOn(bench, !args.includes('views'));
    } finally {
      await bench.close();
    }
  }
}

async function linksOn(bench: Bench, payments: boolean): Promise<void> {
  const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 16);
  const rounds = roundCount();
  const durationMs = roundDurationMs();
  const walletCount = Number(process.env.BENCH_LINK_WALLETS ?? 10_000);
  const embedded = bench.name.startsWith('PGlite');

  const business = await createBusiness(bench.api().url, 'Links bench shop');
  const key = `Bearer ${keyOf(business.keys, 'secret', 'test')}`;
  const created = await fetch(`${bench.api().url}/api/v1/dev/payment-links`, {
    method: 'POST',
    headers: { authorization: key, 'content-type': 'application/json', 'x-idempotency-key': randomBase62(12) },
    body: JSON.stringify({ label: 'Bench plate', amountType: 'FIXED', amount: AMOUNT }),
  });
  if (created.status !== 201) throw new Error(`link create answered ${created.status}: ${await created.text()}`);
  const slug = ((await created.json()) as { data: { url: string } }).data.url.split('/l/')[1]!;

  let filled = performance.now();
  const { phones, before } = await bench.withSql(async (sql) => ({
    ...(await fundBenchWallets(sql, walletCount)),
    before: await countRows(sql),
  }));
  filled = (performance.now() - filled) / 1000;
  console.log(
    `\n## ${bench.name}; ${walletCount.toLocaleString('en')} funded wallets filled in ${filled.toFixed(1)} s; ` +
      `${concurrency} clients; ${rounds} rounds, each load in turn, of ${WARMUP_MS / 1000} s warm-up then ` +
      `${durationMs / 1000} s, after a warm-up of each; app and load share 2 cores ` +
      `(load average ${os.loadavg()[0]!.toFixed(1)} at the start: other work on the machine)`,
  );

  // (b) Anonymous views: nothing written.
  let viewer = 0;
  const probe = await fetch(`${bench.api().url}/l/${slug}`, { headers: { 'x-forwarded-for': addressOf(viewer++) } });
  const pageServed = probe.status === 200;
  const viewed = [`/checkout/links/${slug}`, ...(pageServed ? [`/l/${slug}`] : [])];
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  const viewLines: string[] = [];
  for (const page of viewed) {
    const statuses = new Map<number, number>();
    const started = performance.now();
    let left = VIEWS;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (left-- > 0) {
          const answer = await sendRequest(agent, new URL(bench.api().url), {
            method: 'GET',
            path: page,
            headers: { 'x-forwarded-for': addressOf(viewer++), 'accept-language': 'fr' },
          });
          statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const answered = [...statuses].map(([status, n]) => `${n} x ${status}`).join(', ');
    viewLines.push(`  GET ${page.replace(slug, '{slug}')}: ${answered} in ${seconds.toFixed(1)} s (8 clients)`);
  }
  agent.destroy();
  const after = await bench.withSql(countRows);
  const grown = [...after].filter(([table, n]) => n !== before.get(table));
  console.log(
    `\nAnonymous views of a link, each from its own address (${VIEWS.toLocaleString('en')} per URL)\n${viewLines.join('\n')}`,
  );
  if (!pageServed) console.log(`  GET /l/{slug}: ${probe.status} in this build, not counted`);
  console.log(
    `  new rows: ${WATCHED.map((table) => `${table} ${after.get(table)! - before.get(table)!}`).join(', ')}; ` +
      `every table: ${grown.length === 0 ? '0 new rows (met)' : `CHANGED ${grown.map(([t, n]) => `${t} ${n - before.get(t)!}`).join(', ')}`}`,
  );
  if (grown.length > 0) process.exitCode = 1;
  if (!payments) return;

  // (a) Payments: each one a fresh wallet's, from an address of its own.
  const api = bench.api();
  let payment = 0;
  const payer = () => {
    const n = payment++;
    return { phone: phones[n % phones.length]!, address: addressOf(viewer + n) };
  };
  const run = randomBase62(6);
  const payBody = (phone: string) => JSON.stringify({ phone, pin: SANDBOX_WALLET_PIN });
  const createIntent = (send: (request: LoadRequest) => Promise<{ status: number; body: string }>, n: string) =>
    send({
      method: 'POST',
      path: '/api/v1/dev/intents',
      headers: { authorization: key, 'x-idempotency-key': `create-${run}-${n}` },
      body: JSON.stringify({ amount: AMOUNT, label: 'Bench plate' }),
    });
  const payIntent = (
    send: (request: LoadRequest) => Promise<{ status: number; body: string }>,
    shortCode: string,
    n: string,
  ) => {
    const { phone, address } = payer();
    return send({
      method: 'POST',
      path: `/checkout/intents/${shortCode}/pay`,
      headers: { 'x-forwarded-for': address, 'x-idempotency-key': `pay-${run}-${n}` },
      body: payBody(phone),
    });
  };
  let sequence = 0;
  const options = { concurrency, durationMs };
  const measure = async (load: () => Promise<LoadResult>) => {
    const measured = await withCpuPerRequest([api.pid], load);
    // PGlite runs in the API's process: other PostgreSQL servers' work on this machine is not the run's.
    return embedded ? { ...measured, cpu: { ...measured.cpu, postgres: 0 } } : measured;
  };
  /** Intents made through the API before a round of the payment alone: enough for its fastest round so far. */
  let fastest = 50;
  const madeBefore = async (): Promise<string[]> => {
    const count = Math.ceil(fastest * ((WARMUP_MS + durationMs) / 1000) * 1.5);
    const codes: string[] = [];
    const base = new URL(api.url);
    const agentOf = new http.Agent({ keepAlive: true, maxSockets: 8 });
    let left = count;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (left-- > 0) {
          const answer = await createIntent((request) => sendRequest(agentOf, base, request), `pre-${sequence++}`);
          if (answer.status !== 201) throw new Error(`intent create answered ${unexpected(answer, 201)}`);
          codes.push((JSON.parse(answer.body) as { data: { shortCode: string } }).data.shortCode);
        }
      }),
    );
    agentOf.destroy();
    return codes;
  };

  const loads = {
    link: () =>
      measure(() =>
        runFlows(api.url, options, async (send) => {
          const { phone, address } = payer();
          const answer = await send({
            method: 'POST',
            path: `/checkout/links/${slug}/pay`,
            headers: { 'x-forwarded-for': address, 'x-idempotency-key': `link-${run}-${sequence++}` },
            body: payBody(phone),
          });
          return unexpected(answer, 200);
        }),
      ),
    checkout: () =>
      measure(() =>
        runFlows(api.url, options, async (send) => {
          const n = String(sequence++);
          const made = await createIntent(send, n);
          if (made.status !== 201) return unexpected(made, 201);
          const { shortCode } = (JSON.parse(made.body) as { data: { shortCode: string } }).data;
          return unexpected(await payIntent(send, shortCode, n), 200);
        }),
      ),
    payOnly: async () => {
      const codes = await madeBefore();
      let next = 0;
      const result = await measure(() =>
        runFlows(api.url, options, async (send) => {
          const shortCode = codes[next++];
          if (shortCode === undefined) return 'ran out of intents made before the round';
          return unexpected(await payIntent(send, shortCode, `only-${sequence++}`), 200);
        }),
      );
      fastest = Math.max(fastest, result.result.perSecond);
      return result;
    },
  };
  // A server just (re)started compiles and warms its paths on its first requests: not a payment's cost.
  for (const load of Object.values(loads)) await load();
  const { link, checkout, payOnly } = await inRounds(rounds, loads);
  printThroughput(`Payments through a link (${bench.name}), baseline: a plain intent's checkout in the same run`, [
    {
      name: 'link vs create + pay',
      ours: link.result,
      baseline: checkout.result,
      ratios: roundRatios(link, checkout),
      target: 0.9,
    },
    {
      name: 'link vs checkout pay alone',
      ours: link.result,
      baseline: payOnly.result,
      ratios: roundRatios(link, payOnly),
    },
  ]);
  const total = (cpu: CpuPerRequest) => cpu.server + cpu.postgres;
  const cpuRatio = total(link.cpu) / total(checkout.cpu);
  printCpuPerRequest('CPU per payment', [
    { name: 'link pay', cpu: link.cpu },
    { name: 'create + checkout pay', cpu: checkout.cpu },
    { name: 'checkout pay alone', cpu: payOnly.cpu },
  ]);
  console.log(
    `  link / (create + pay), server + PostgreSQL: ${cpuRatio.toFixed(2)}x (target <= 1.11x: ` +
      `${cpuRatio <= 1.11 ? 'met' : 'NOT MET'}); server alone: ${(link.cpu.server / checkout.cpu.server).toFixed(2)}x; ` +
      `link / pay alone: ${(total(link.cpu) / total(payOnly.cpu)).toFixed(2)}x`,
  );
  console.log(`  wallets used: ${payment.toLocaleString('en')} of ${phones.length.toLocaleString('en')}`);
}
