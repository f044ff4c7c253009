/**
 * `npm run bench -- growth` (issue 55, item 1): how the cost of a payment grows with the data.
 * Two scratch databases on PostgreSQL, SMALL and LARGE (BENCH_GROWTH_SMALL, BENCH_GROWTH_LARGE:
 * ledger postings, default 1,000,000 and 5,000,000: about 27 minutes on 2 shared cores), each filled with BENCH_GROWTH_MONTHS (6)
 * months of history of BENCH_GROWTH_BUSINESSES (60) businesses, three large ones making a third
 * of it (support/growth-fill.ts: a template day written by the API and the worker, multiplied by
 * set-based inserts). At each size, with an API process and a worker on it: p50/p99 and CPU per
 * request of the API's hot paths for a large business, webhook first-attempt latency, bytes on
 * disk per payment (tables and indexes), the time of VACUUM (ANALYZE) and of each periodic task,
 * and payments' latency while the partition and retention tasks run (the longest lock wait seen).
 * Goal: every p99 at LARGE within 1.25x of SMALL; no payment held more than 100 ms by a task.
 */
import pg from 'pg';
import { createRuntime } from '../src/bootstrap.js';
import { loadConfig } from '../src/config.js';
import { EVENT_NAMES } from '../src/modules/events/catalog.js';
import { checkLedger } from '../src/modules/payments/ledger.js';
import { ADMIN_TOKEN, createBusiness, keyOf } from './intents.js';
import { apiEnv } from './pay.js';
import { printCpuPerRequest, printLatencies } from './report.js';
import { createScratchDatabase } from './support/database.js';
import { measureDisk, printDisk, type DiskFigures } from './support/growth-disk.js';
import { ensurePartitionsIfAny, keepTemplate, planCopies, settleCopies, writeCopies } from './support/growth-fill.js';
import { measureLocks, TASKS_APPLICATION, timeMaintenance, type LockFigures } from './support/growth-maintenance.js';
import { apiCaller, startGrowthReceiver, waitForQuiet, writeTemplateDay } from './support/growth-template.js';
import { timeSamples } from './support/load.js';
import { startProcess, startServer, withCpuPerRequest, type CpuPerRequest } from './support/processes.js';
import { fundBenchWallets } from './support/sandbox.js';

const SIZES = [
  { name: 'SMALL', postings: Number(process.env.BENCH_GROWTH_SMALL ?? 1_000_000) },
  { name: 'LARGE', postings: Number(process.env.BENCH_GROWTH_LARGE ?? 5_000_000) },
];
const MONTHS = Number(process.env.BENCH_GROWTH_MONTHS ?? 6);
const BUSINESSES = Number(process.env.BENCH_GROWTH_BUSINESSES ?? 60);
const SAMPLES = Number(process.env.BENCH_GROWTH_SAMPLES ?? 200);
const STATEMENT_SAMPLES = Number(process.env.BENCH_GROWTH_STATEMENT_SAMPLES ?? 5);
const TEMPLATE = { payments: 40, orders: 8 };
const WARMUP = 10;
const TARGET_RATIO = 1.25;

interface Timed {
  name: string;
  p50Ms: number;
  p99Ms: number;
  cpu: CpuPerRequest;
}

interface SizeFigures {
  name: string;
  fillSeconds: number;
  rows: Record<string, number>;
  timings: Timed[];
  disk: DiskFigures;
  maintenance: { name: string; ms: number }[];
  locks?: LockFigures;
}

export async function growthSuite(): Promise<void> {
  const figures: SizeFigures[] = [];
  for (const size of SIZES) figures.push(await measureSize(size.name, size.postings, size.name === 'LARGE'));
  const [small, large] = figures as [SizeFigures, SizeFigures];
  printLatencies(
    `Growth: a large business's requests at ${large.name} beside ${small.name} (one client, ${SAMPLES} requests per ` +
      `line, statements ${STATEMENT_SAMPLES}; goal: p99 at ${large.name} <= ${TARGET_RATIO}x ${small.name})`,
    small.name,
    large.timings.map((line, i) => ({
      name: line.name,
      p50Ms: line.p50Ms,
      p99Ms: line.p99Ms,
      baselineP50Ms: small.timings[i]!.p50Ms,
      baselineP99Ms: small.timings[i]!.p99Ms,
    })),
  );
  for (const [i, line] of large.timings.entries()) {
    const ratio = line.p99Ms / small.timings[i]!.p99Ms;
    console.log(`  p99 ${line.name.padEnd(30)} ${ratio.toFixed(2)}x  ${ratio <= TARGET_RATIO ? 'met' : 'NOT MET'}`);
  }
  for (const size of figures) {
    printCpuPerRequest(
      `CPU per request at ${size.name}`,
      size.timings.map(({ name, cpu }) => ({ name, cpu })),
    );
  }
  for (const size of figures) {
    console.log(`\n${size.name}: filled in ${size.fillSeconds.toFixed(0)} s; rows: ${JSON.stringify(size.rows)}`);
    printDisk(size.name, size.disk);
    console.log(`\nVACUUM (ANALYZE) and one run of each periodic task at ${size.name}, ms`);
    for (const { name, ms } of size.maintenance) console.log(`  ${name.padEnd(40)} ${ms.toFixed(0).padStart(8)}`);
  }
  const locks = large.locks;
  if (locks) {
    console.log(
      `\nPayments at ${locks.perSecond}/s for ${locks.seconds} s at ${large.name}, without and with the tasks ` +
        `${locks.tasks.join(', ') || '(none)'} run again and again (${locks.taskRuns} runs); goal: no payment held > 100 ms by a task`,
    );
    for (const [label, run] of [
      ['without the tasks', locks.without],
      ['with the tasks', locks.with],
    ] as const) {
      console.log(
        `  ${label.padEnd(20)} p50 ${run.p50Ms.toFixed(1)} ms  p99 ${run.p99Ms.toFixed(1)} ms  max ${run.maxMs.toFixed(1)} ms  ` +
          `errors ${run.errors}; longest lock wait: any ${run.longestLockWaitMs.toFixed(1)} ms ` +
          `(${run.lockSamples} samples with a waiter), on a task's lock ${run.longestTaskLockWaitMs.toFixed(1)} ms`,
      );
      for (const blocker of run.slowBlockers) console.log(`    a wait > 100 ms behind: ${blocker}`);
    }
    const held = locks.with.longestTaskLockWaitMs;
    console.log(`  goal: longest wait on a task's lock ${held.toFixed(1)} ms: ${held <= 100 ? 'met' : 'NOT MET'}`);
  }
}

async function measureSize(name: string, postings: number, withLocks: boolean): Promise<SizeFigures> {
  const scratch = await createScratchDatabase();
  const client = new pg.Client({ connectionString: scratch.url });
  await client.connect();
  const receiver = await startGrowthReceiver();
  const env = { ...apiEnv(scratch.url), WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_SCALE: '0.01' };
  const api = await startServer('src/server.ts', ['--api'], env, '/ready');
  const worker = await startProcess(
    'src/server.ts',
    ['--worker'],
    env,
    async () => (await client.query('SELECT 1 FROM periodic_tasks LIMIT 1')).rows.length > 0,
  );
  try {
    console.log(`\n## ${name}: ${postings.toLocaleString('en')} ledger postings over ${MONTHS} months`);
    console.log(`  ${await ensurePartitionsIfAny(scratch.database.db, MONTHS)}`);
    const started = Date.now();
    // The businesses: three large ones (20 shares each), the rest small; two endpoints for the
    // large ones and every other small one.
    const businesses: { id: string; key: string; weight: number; endpoints: string[] }[] = [];
    for (let i = 0; i <= BUSINESSES; i++) {
      const business = await createBusiness(api.url, i === BUSINESSES ? 'Template shop' : `Shop ${i}`);
      const key = `Bearer ${keyOf(business.keys, 'secret', 'test')}`;
      const call = apiCaller(api.url, key, `setup-${i}`);
      const endpoints: string[] = [];
      for (let e = 0; e < (i < 3 || i % 2 === 0 || i === BUSINESSES ? 2 : 1); e++) {
        const endpoint = await call('POST', '/webhooks/endpoints', {
          url: `${receiver.url}/b${i}/e${e}`,
          events: EVENT_NAMES.filter((event) => /^(payment|order|payout)\./.test(event)),
        });
        if (endpoint.status !== 201)
          throw new Error(`endpoint create answered ${endpoint.status}: ${JSON.stringify(endpoint.data)}`);
        endpoints.push(String(endpoint.data.id));
      }
      businesses.push({ id: business.id, key, weight: i < 3 ? 20 : 1, endpoints });
    }
    const template = businesses.pop()!;
    const { phones } = await fundBenchWallets(client, 200);
    const templateAt = new Date();
    await writeTemplateDay(apiCaller(api.url, template.key, 'template'), phones, TEMPLATE);
    await waitForQuiet(client);
    receiver.setFailEvery(0);
    const templateRows = await keepTemplate(client, template.id, new Date(templateAt.getTime() - 1000));
    const copies = Math.max(1, Math.ceil(postings / Math.max(1, templateRows.ledger_postings ?? 1)));
    console.log(`  template of one shop's day: ${JSON.stringify(templateRows)}; ${copies.toLocaleString('en')} copies`);
    await planCopies(client, {
      businesses,
      templateBusinessId: template.id,
      templateEndpoints: template.endpoints,
      templateAt,
      copies,
      months: MONTHS,
    });
    const slice = Math.max(1, Math.floor(200_000 / Math.max(1, templateRows.ledger_postings ?? 1)));
    const rows: Record<string, number> = {};
    for (let first = 1; first <= copies; first += slice) {
      await writeCopies(client, first, Math.min(copies, first + slice - 1), rows);
      if (Math.floor(first / slice) % 10 === 0)
        console.log(
          `  ${Math.min(copies, first + slice - 1)} of ${copies} copies, ${((Date.now() - started) / 1000).toFixed(0)} s`,
        );
    }
    await settleCopies(client);
    await client.query('ANALYZE');
    const fillSeconds = (Date.now() - started) / 1000;
    console.log(`  filled in ${fillSeconds.toFixed(0)} s: ${JSON.stringify(rows)}`);

    const large = businesses[0]!;
    const timings = await measureRequests(api.url, [api.pid, worker.pid], large, phones, client, receiver.arrivals);
    const disk = await measureDisk(client);
    // The tasks' own connections, named so that a lock wait can tell them from the API's.
    const tasksUrl = new URL(scratch.url);
    tasksUrl.searchParams.set('application_name', TASKS_APPLICATION);
    const runtime = await createRuntime(
      loadConfig({ ...process.env, ...env, DATABASE_URL: tasksUrl.toString(), REDIS_URL: '' }),
      { adminToken: ADMIN_TOKEN },
    );
    let locks: LockFigures | undefined;
    let maintenance: { name: string; ms: number }[];
    try {
      maintenance = await timeMaintenance(client, runtime);
      if (withLocks) locks = await measureLocks(client, runtime, api.url, large);
    } finally {
      await runtime.close();
    }
    const ledger = await checkLedger(scratch.database.db);
    console.log(
      `  ledger check: ${ledger.ok ? 'ok' : `FAILED: ${ledger.problems.slice(0, 5).join('; ')}`} (${ledger.postings.toLocaleString('en')} postings)`,
    );
    return { name, fillSeconds, rows, timings, disk, maintenance, ...(locks ? { locks } : {}) };
  } finally {
    await worker.stop();
    await api.stop();
    await receiver.close();
    await client.end();
    await scratch.drop();
  }
}

/** The large business's requests, one at a time, each line's CPU measured over its samples. */
async function measureRequests(
  apiUrl: string,
  pids: number[],
  business: { id: string; key: string },
  phones: string[],
  client: pg.Client,
  arrivals: Map<string, number>,
): Promise<Timed[]> {
  const call = apiCaller(apiUrl, business.key, `measure-${Date.now()}`);
  const created: string[] = [];
  const lines: Timed[] = [];
  const measure = async (name: string, samples: number, request: (i: number) => Promise<unknown>) => {
    const took: number[] = [];
    const { cpu } = await withCpuPerRequest(pids, async () => {
      for (let i = 0; i < WARMUP + samples; i++) {
        const begun = process.hrtime.bigint();
        await request(i);
        if (i >= WARMUP) took.push(Number(process.hrtime.bigint() - begun) / 1e6);
      }
      return { sent: WARMUP + samples };
    });
    lines.push({ name, ...timeSamples(took), cpu });
  };
  const ok = async (answer: Promise<{ status: number; data: Record<string, unknown> }>) => {
    const { status, data } = await answer;
    if (status >= 300) throw new Error(`answered ${status}: ${JSON.stringify(data).slice(0, 300)}`);
    return data;
  };
  await measure('create intent', SAMPLES, async () => {
    created.push(String((await ok(call('POST', '/intents', { amount: 1000 }))).referenceNumber));
  });
  const paidFrom = new Date();
  await measure('pay (simulate)', SAMPLES, (i) =>
    ok(call('POST', `/intents/${created[i]}/simulate`, { payerPhone: phones[i % phones.length] })),
  );
  await measure('GET intent', SAMPLES, (i) => ok(call('GET', `/intents/${created[i]}`)));
  await measure('intents, page 1', SAMPLES, () => ok(call('GET', '/intents')));
  await measure('balance transactions, page 1', SAMPLES, () => ok(call('GET', '/balance/transactions')));
  await measure('events, page 1', SAMPLES, () => ok(call('GET', '/events')));
  const recent = await client.query<{ id: string }>(
    `SELECT id FROM events WHERE business_id = $1 AND environment = 'test' ORDER BY seq DESC OFFSET 10 LIMIT 1`,
    [business.id],
  );
  await measure('events, after= (10 newer)', SAMPLES, () => ok(call('GET', `/events?after=${recent.rows[0]!.id}`)));
  await measure('webhook deliveries, page 1', SAMPLES, () => ok(call('GET', '/webhooks/events')));
  const now = new Date();
  const lastMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1)).toISOString().slice(0, 7);
  const download = async (path: string) => {
    const response = await fetch(`${apiUrl}/api/v1/dev${path}`, { headers: { authorization: business.key } });
    const text = await response.text();
    if (response.status !== 200) throw new Error(`${path} answered ${response.status}: ${text.slice(0, 300)}`);
    return text.length;
  };
  const statementLines = (await download(`/balance/statements/${lastMonth}?format=csv`)) > 0;
  await measure(`statement ${lastMonth} (JSON)`, STATEMENT_SAMPLES, () => download(`/balance/statements/${lastMonth}`));
  await measure(`statement ${lastMonth} (CSV)`, STATEMENT_SAMPLES, () =>
    download(`/balance/statements/${lastMonth}?format=csv`),
  );
  if (!statementLines) console.log('  ! an empty statement');
  // Webhook first-attempt latency: each pay's events, from their commit to the receiver.
  await new Promise((resolve) => setTimeout(resolve, 3000));
  const events = await client.query<{ id: string; created_at: Date }>(
    `SELECT id, created_at FROM events WHERE business_id = $1 AND created_at >= $2`,
    [business.id, paidFrom],
  );
  const latencies = events.rows
    .map((event) => (arrivals.has(event.id) ? arrivals.get(event.id)! - event.created_at.getTime() : Number.NaN))
    .filter((ms) => Number.isFinite(ms));
  console.log(`  webhook first attempts measured: ${latencies.length} of ${events.rows.length} events`);
  lines.push({ name: 'webhook first attempt', ...timeSamples(latencies), cpu: { server: 0, postgres: 0, load: 0 } });
  return lines;
}
