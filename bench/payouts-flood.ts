/**
 * The payouts suite's flood (issue 47), through HTTP only so that it runs on either database:
 * another merchant's payouts, one every 250 ms, timed from their creation to their sending and to
 * the ledger fold of their reservation (`balanceAfter`), first on a quiet queue (the baseline),
 * then while one sandbox merchant sends 12 batches of 1,000 at once and one more a second.
 */
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBase62 } from '../src/lib/ids.js';
import { ADMIN_TOKEN, createBusiness, keyOf } from './intents.js';
import { sendRequest, type LoadRequest } from './support/load.js';
import pg from 'pg';
import { apiEnv } from './pay.js';
import { createScratchDatabase } from './support/database.js';
import { startProcess, startServer } from './support/processes.js';

const API = '/api/v1/dev';
const PROBES = Number(process.env.BENCH_FLOOD_PROBES ?? 20);
const PROBE_EVERY_MS = 250;
const FLOOD_BATCHES = 12;
const BATCH = 1000;
const TARGET_SENT_P99_MS = 2000;
const TARGET_FOLD_P99_MS = 1000;

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function call(base: string, request: LoadRequest): Promise<{ status: number; json: any }> {
  const answer = await sendRequest(agent, new URL(base), request);
  return { status: answer.status, json: answer.body ? JSON.parse(answer.body) : undefined };
}

async function expectOk(base: string, request: LoadRequest, status: number): Promise<any> {
  const answer = await call(base, request);
  if (answer.status !== status) {
    throw new Error(`${request.method} ${request.path} answered ${answer.status}: ${JSON.stringify(answer.json)}`);
  }
  return answer.json.data;
}

/** A business of its own, its test key, paid `amount` centimes by a sandbox wallet made for it. */
export async function fundedMerchant(base: string, name: string, amount: number): Promise<string> {
  const business = await createBusiness(base, name);
  const key = `Bearer ${keyOf(business.keys, 'secret', 'test')}`;
  const phone = `+2229${String(Math.floor(Math.random() * 1e7)).padStart(7, '0')}`;
  await expectOk(
    base,
    {
      method: 'POST',
      path: '/api/v1/admin/wallets',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      body: JSON.stringify({ phone, pin: '2468', balance: amount, environment: 'test' }),
    },
    201,
  );
  const idem = () => ({ authorization: key, 'x-idempotency-key': `fund-${randomBase62(12)}` });
  const intent = await expectOk(
    base,
    { method: 'POST', path: `${API}/intents`, headers: idem(), body: JSON.stringify({ amount, label: 'Funding' }) },
    201,
  );
  await expectOk(
    base,
    {
      method: 'POST',
      path: `${API}/intents/${intent.referenceNumber}/simulate`,
      headers: idem(),
      body: JSON.stringify({ payerPhone: phone }),
    },
    200,
  );
  return key;
}

const phone = () => `+2226${String(Math.floor(Math.random() * 1e7)).padStart(7, '0')}`;

interface Probe {
  sentMs: number;
  foldedMs: number;
}

/** One payout of `key`'s, timed from its answer to PAID and to its reservation folded. */
async function probe(base: string, key: string): Promise<Probe> {
  const created = await expectOk(
    base,
    {
      method: 'POST',
      path: `${API}/payouts`,
      headers: { authorization: key, 'x-idempotency-key': `probe-${randomBase62(12)}` },
      body: JSON.stringify({ amount: 500, destination: { type: 'WALLET', phone: phone() } }),
    },
    201,
  );
  const begun = Date.now();
  const reference: string = created.referenceNumber;
  let sentMs: number | undefined;
  let foldedMs: number | undefined;
  const deadline = begun + 300_000;
  while (sentMs === undefined || foldedMs === undefined) {
    if (Date.now() > deadline) throw new Error(`probe ${reference} not sent and folded within 5 minutes`);
    if (sentMs === undefined) {
      const payout = await expectOk(
        base,
        { method: 'GET', path: `${API}/payouts/${reference}`, headers: { authorization: key } },
        200,
      );
      if (payout.status !== 'PENDING') sentMs = Date.now() - begun;
    }
    if (foldedMs === undefined) {
      const own = await expectOk(
        base,
        {
          method: 'GET',
          path: `${API}/balance/transactions?source=${reference}&limit=10`,
          headers: { authorization: key },
        },
        200,
      );
      const items: { balanceAfter: number | null }[] = own.items;
      if (items.length > 0 && items.every((item) => item.balanceAfter !== null)) foldedMs = Date.now() - begun;
    }
    await sleep(10);
  }
  return { sentMs, foldedMs };
}

/** `PROBES` probes, one started every 250 ms, each followed to its end. */
async function probes(base: string, key: string): Promise<Probe[]> {
  const running: Promise<Probe>[] = [];
  for (let i = 0; i < PROBES; i++) {
    running.push(probe(base, key));
    await sleep(PROBE_EVERY_MS);
  }
  return Promise.all(running);
}

const pendingOf = async (base: string, key: string): Promise<number> =>
  (
    await expectOk(
      base,
      { method: 'GET', path: `${API}/payouts?status=PENDING&limit=1`, headers: { authorization: key } },
      200,
    )
  ).total;

export interface FloodFigures {
  quiet: Probe[];
  flood: Probe[];
  accepted: number;
  refused: number;
  /** The flooder's payouts still waiting when the last probe was sent. */
  waitingAtEnd: number;
  drainedMs: number;
}

/**
 * The baseline (probes on a quiet queue), then the flood: `FLOOD_BATCHES` batches at once, then
 * one a second while the probes run; then waits for the flood to be sent. The queue must be empty
 * at the start and a worker running.
 */
export async function measureFlood(base: string, flooderKey: string, probeKey: string): Promise<FloodFigures> {
  const quiet = await probes(base, probeKey);
  const batch = () =>
    call(base, {
      method: 'POST',
      path: `${API}/payouts/batches`,
      headers: { authorization: flooderKey, 'x-idempotency-key': `flood-${randomBase62(12)}` },
      body: JSON.stringify({
        items: Array.from({ length: BATCH }, () => ({ amount: 100, destination: { type: 'WALLET', phone: phone() } })),
      }),
    });
  const answers: { status: number }[] = [];
  let flooding = true;
  const flood = (async () => {
    answers.push(...(await Promise.all(Array.from({ length: FLOOD_BATCHES }, batch))));
    while (flooding) {
      answers.push(await batch());
      await sleep(1000);
    }
  })();
  // The probes start while the 12 batches are being created.
  await sleep(200);
  const flooded = await probes(base, probeKey);
  const waitingAtEnd = await pendingOf(base, flooderKey);
  flooding = false;
  await flood;
  const unexpected = answers.filter((answer) => answer.status !== 201 && answer.status !== 429);
  if (unexpected.length > 0) throw new Error(`flood batches answered ${unexpected.map((a) => a.status).join(', ')}`);
  const begun = Date.now();
  while ((await pendingOf(base, flooderKey)) > 0) await sleep(250);
  return {
    quiet,
    flood: flooded,
    accepted: answers.filter((answer) => answer.status === 201).length,
    refused: answers.filter((answer) => answer.status === 429).length,
    waitingAtEnd,
    drainedMs: Date.now() - begun,
  };
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
};
const ms = (value: number) => `${Math.round(value)} ms`;
const met = (ok: boolean) => (ok ? 'met' : 'NOT MET');

export function printFlood(title: string, figures: FloodFigures): void {
  console.log(`\n${title}`);
  console.log(
    `  flood: ${FLOOD_BATCHES} batches of ${BATCH.toLocaleString('en')} at once from one sandbox merchant, then one a ` +
      `second while the probes ran: ${figures.accepted} accepted, ${figures.refused} refused (429 ` +
      `TOO_MANY_PENDING_PAYOUTS); ${figures.waitingAtEnd.toLocaleString('en')} of its payouts still waiting after ` +
      `the last probe; the rest sent ${(figures.drainedMs / 1000).toFixed(1)} s after`,
  );
  console.log(
    `  another merchant's payouts, ${PROBES} one every ${PROBE_EVERY_MS} ms, from the answer to their creation; ` +
      `baseline: the same on a quiet queue, just before`,
  );
  console.log(
    `  ${''.padEnd(22)}${['sent p50', 'p99', 'max', 'folded p50', 'p99', 'max'].map((h) => h.padStart(11)).join('')}`,
  );
  const line = (label: string, runs: Probe[]) => {
    const sent = runs.map((run) => run.sentMs);
    const folded = runs.map((run) => run.foldedMs);
    console.log(
      `  ${label.padEnd(22)}${[
        percentile(sent, 50),
        percentile(sent, 99),
        Math.max(...sent),
        percentile(folded, 50),
        percentile(folded, 99),
        Math.max(...folded),
      ]
        .map((value) => ms(value).padStart(11))
        .join('')}`,
    );
  };
  line('quiet (baseline)', figures.quiet);
  line('during the flood', figures.flood);
  const sentP99 = percentile(
    figures.flood.map((run) => run.sentMs),
    99,
  );
  const foldP99 = percentile(
    figures.flood.map((run) => run.foldedMs),
    99,
  );
  console.log(
    `  sent p99 during the flood ${ms(sentP99)}: <= ${TARGET_SENT_P99_MS / 1000} s ${met(sentP99 <= TARGET_SENT_P99_MS)}; ` +
      `folded (balanceAfter) p99 ${ms(foldP99)}: <= ${TARGET_FOLD_P99_MS / 1000} s ${met(foldP99 <= TARGET_FOLD_P99_MS)} ` +
      `(the fold runs four times a second: the quiet baseline shows the lag it has without any flood)`,
  );
}

/**
 * `npm run bench -- payouts flood`: the flood alone on PostgreSQL, an API process and a worker
 * process on a scratch database (the full suite measures it too, after its batch figures).
 */
export async function postgresFloodSuite(): Promise<void> {
  const scratch = await createScratchDatabase();
  const api = await startServer('src/server.ts', ['--api'], apiEnv(scratch.url), '/ready');
  const client = new pg.Client({ connectionString: scratch.url });
  await client.connect();
  // Ready once it has run its first ledger fold.
  const worker = await startProcess('src/server.ts', ['--worker'], apiEnv(scratch.url), async () => {
    const ran = await client.query(
      `SELECT 1 FROM periodic_tasks WHERE name = 'ledger-fold' AND last_run_at IS NOT NULL`,
    );
    return ran.rows.length > 0;
  });
  try {
    console.log('PostgreSQL scratch database; one API process, one worker process');
    const flooder = await fundedMerchant(api.url, 'Flood merchant', 50_000_000);
    const other = await fundedMerchant(api.url, 'Probe merchant', 10_000_000);
    printFlood(
      "A sandbox flood beside another merchant's payouts (PostgreSQL, one worker)",
      await measureFlood(api.url, flooder, other),
    );
  } finally {
    await worker.stop();
    await api.stop();
    agent.destroy();
    await client.end();
    await scratch.drop();
  }
}

/**
 * `npm run bench -- payouts pglite`: the flood, and the sender keeping up with single payouts
 * created at full speed beside it, on the embedded default (PGlite): one process, API and worker.
 */
export async function pgliteFloodSuite(): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'devapi-bench-payouts-'));
  const server = await startServer(
    'src/server.ts',
    [],
    {
      DATA_DIR: dir,
      ADMIN_TOKEN,
      SEED_DEMO: 'false',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_LIVE_PER_MINUTE: '1000000000',
      RATE_LIMIT_TEST_PER_MINUTE: '1000000000',
    },
    '/ready',
  );
  try {
    console.log('PGlite (embedded): one process, API and worker, its own data directory');
    const flooder = await fundedMerchant(server.url, 'Flood merchant', 50_000_000);
    const other = await fundedMerchant(server.url, 'Probe merchant', 10_000_000);
    printFlood(
      "A sandbox flood beside another merchant's payouts (PGlite)",
      await measureFlood(server.url, flooder, other),
    );
    const creating = [flooder, other];
    for (let i = 0; i < 6; i++) creating.push(await fundedMerchant(server.url, `Creating merchant ${i}`, 10_000_000));
    await keepsUpWhileCreating(server.url, creating);
  } finally {
    await server.stop();
    agent.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Single payouts created by `BENCH_CONCURRENCY` (16) clients for `BENCH_DURATION_MS` (8 s) with
 * the worker sending beside them: created and sent per second over the same time, and the
 * backlog left (PGlite has one session: what the API takes, the sender has not).
 */
export async function keepsUpWhileCreating(base: string, keys: string[]): Promise<void> {
  const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 16);
  const durationMs = Number(process.env.BENCH_DURATION_MS ?? 8000);
  const pending = async () => {
    let total = 0;
    for (const key of keys) total += await pendingOf(base, key);
    return total;
  };
  const before = await pending();
  let created = 0;
  let errors = 0;
  const begun = Date.now();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, client) => {
      while (Date.now() - begun < durationMs) {
        const answer = await call(base, {
          method: 'POST',
          path: `${API}/payouts`,
          headers: { authorization: keys[client % keys.length]!, 'x-idempotency-key': `ku-${randomBase62(12)}` },
          body: JSON.stringify({ amount: 100, destination: { type: 'WALLET', phone: phone() } }),
        });
        if (answer.status === 201) created += 1;
        else errors += 1;
      }
    }),
  );
  const seconds = (Date.now() - begun) / 1000;
  const left = await pending();
  const sent = before + created - left;
  const drainBegun = Date.now();
  while ((await pending()) > 0) await sleep(100);
  const drainedS = (Date.now() - drainBegun) / 1000;
  console.log(
    `\nThe sender beside single payouts created by ${concurrency} clients of ${keys.length} merchants for ` +
      `${seconds.toFixed(1)} s; baseline: the create rate over the same time`,
  );
  console.log(
    `  created ${(created / seconds).toFixed(0)}/s, sent ${(sent / seconds).toFixed(0)}/s over the same time ` +
      `(${(sent / (created || 1)).toFixed(2)}x); ${left.toLocaleString('en')} left waiting, sent ${drainedS.toFixed(1)} s ` +
      `after (${(left / (drainedS || 1)).toFixed(0)}/s alone)${errors > 0 ? `; ${errors} creates refused` : ''}`,
  );
}
