/**
 * `npm run bench -- payouts` (issue 35): money out, on PostgreSQL, each figure beside a baseline
 * of the same run.
 * - Single payouts (`POST /payouts`, 20 merchants, a few hundred sandbox phones) beside sandbox
 *   payments (`simulate`, as bench/pay.ts sends them) in alternating rounds on one API process:
 *   throughput, CPU per request, and the ratio (target >= 0.8x).
 * - One batch of 1,000 beside 1,000 single payouts one at a time and 16 at a time (wall time, CPU
 *   per payout), in rounds.
 * - Sending: a worker process started on the payouts left PENDING by the above sends 3,000
 *   (BENCH_PAYOUTS_SEND) of them (payouts/s, CPU per payout), beside a bare double-entry transfer
 *   one at a time (baseline-server.ts /bare/pay); and, first of all while the queue is empty, the
 *   time from the request to the last payout sent of one batch of 1,000 beside 1,000 single
 *   payouts (BENCH_PAYOUTS_SEND_ROUNDS rounds).
 * - The flood (payouts-flood.ts): another merchant's payouts sent and folded while one sandbox
 *   merchant sends 12 batches of 1,000 at once, beside the same on a quiet queue, through an API
 *   process with the default bound on pending sandbox payouts (the others have none: the figures
 *   above pile payouts up with no worker running).
 * - A month's statement of 100,000 transactions (`/balance/statements/{YYYY-MM}`, CSV and HTML)
 *   streamed by a fresh API process, its RSS growth beside the CSV export of the same rows.
 * The worker runs only while a figure needs it: payouts are sent by a loop of the worker process.
 * `npm run bench -- payouts pglite`: the flood and the sender keeping up, on PGlite (payouts-flood.ts).
 */
import { randomInt } from 'node:crypto';
import http from 'node:http';
import pg from 'pg';
import { randomBase62 } from '../src/lib/ids.js';
import { foldPendingMovements } from '../src/modules/payments/ledger.js';
import { ADMIN_TOKEN, createBusiness, keyOf } from './intents.js';
import { apiEnv } from './pay.js';
import { printCpuPerRequest, printThroughput } from './report.js';
import { createScratchDatabase } from './support/database.js';
import { fillTransactions } from './support/balance-rows.js';
import { runLoad, mergeLoads, sendRequest, type LoadRequest, type LoadResult } from './support/load.js';
import {
  cpuTimeMs,
  peakMemoryMb,
  postgresCpuMs,
  resetPeakMemory,
  startProcess,
  startServer,
  withCpuPerRequest,
  type CpuPerRequest,
  type ServerProcess,
  rssMb,
} from './support/processes.js';
import { inRounds, median, roundCount, roundDurationMs, roundRatios } from './support/rounds.js';
import {
  fundedMerchant,
  keepsUpWhileCreating,
  measureFlood,
  pgliteFloodSuite,
  postgresFloodSuite,
  printFlood,
} from './payouts-flood.js';
import { fundBenchWallets, insertPayableIntents } from './support/sandbox.js';

const MERCHANTS = 20;
const WALLETS = 200;
/** Sandbox phones the payouts go to: the first payout to each opens its wallet. */
const PAYOUT_PHONES = Number(process.env.BENCH_PAYOUT_PHONES ?? 300);
/** Each merchant's funding: one sandbox payment of the largest amount an intent takes. */
const FUNDING = 100_000_000;
/** The payout fee given to every merchant (admin fees route): a flat part and a rate. */
const PAYOUT_FEE = { payoutFeeFlat: 10, payoutFeeBps: 100 };
const BATCH = 1000;
const STATEMENT_ROWS = Number(process.env.BENCH_STATEMENT_ROWS ?? 100_000);
const STATEMENT_TARGET_RSS_GROWTH_MB = 50;
const API = '/api/v1/dev';

const met = (ok: boolean) => (ok ? 'met' : 'NOT MET');
const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

/** One request over a kept-alive connection: its status and body. */
const call = (base: string, request: LoadRequest) => sendRequest(agent, new URL(base), request);

/** `count` requests, `concurrency` at a time: the wall time, and the answers that were not `expect`. */
async function sendAll(
  base: string,
  count: number,
  concurrency: number,
  expect: number,
  next: (client: number, n: number) => LoadRequest,
): Promise<{ ms: number; sent: number; errors: number; firstError?: string }> {
  let sequence = 0;
  let errors = 0;
  let firstError: string | undefined;
  const begun = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, client) => {
      while (sequence < count) {
        const answer = await call(base, next(client, sequence++));
        if (answer.status !== expect) {
          errors += 1;
          firstError ??= `${answer.status} ${answer.body.slice(0, 300)}`;
        }
      }
    }),
  );
  return {
    ms: Number(process.hrtime.bigint() - begun) / 1e6,
    sent: count,
    errors,
    ...(firstError ? { firstError } : {}),
  };
}

/** GET `url`, streamed and dropped as it comes: status, bytes, newlines and `<tr` (HTML rows) it had. */
function streamCounted(
  url: string,
  authorization: string,
): Promise<{ status: number; bytes: number; lines: number; rows: number }> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { headers: { authorization } }, (response) => {
      let bytes = 0;
      let lines = 0;
      let rows = 0;
      let tail = '';
      response.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) lines += 1;
        // `<tr` split over two chunks is still counted once: the last two characters carry over.
        const text = tail + chunk.toString('latin1');
        for (let at = text.indexOf('<tr'); at !== -1; at = text.indexOf('<tr', at + 3)) rows += 1;
        tail = text.slice(-2);
      });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, bytes, lines, rows }));
      response.on('error', reject);
    });
    request.on('error', reject);
  });
}

export async function payoutsSuite(args: string[] = []): Promise<void> {
  if (args.includes('pglite')) return pgliteFloodSuite();
  if (args.includes('flood')) return postgresFloodSuite();
  const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 32);
  const batchConcurrency = Number(process.env.BENCH_PAYOUTS_CONCURRENCY ?? 16);
  const warmupMs = 2000;
  const rounds = roundCount();
  const durationMs = roundDurationMs();
  const scratch = await createScratchDatabase();
  const client = new pg.Client({ connectionString: scratch.url });
  await client.connect();
  // No bound on pending sandbox payouts here: payouts pile up while no worker runs (the flood's
  // API process keeps the default).
  const api = await startServer(
    'src/server.ts',
    ['--api'],
    { ...apiEnv(scratch.url), SANDBOX_PENDING_PAYOUTS_MAX: '1000000000' },
    '/ready',
  );
  let floodApi: ServerProcess | undefined;
  let worker: { pid: number; stop(): Promise<void> } | undefined;
  let baseline: ServerProcess | undefined;
  let statementApi: ServerProcess | undefined;
  const suiteBegun = Date.now();
  try {
    // Merchants with the payout fee, 200 funded payer wallets (pay.ts), each merchant funded by
    // one sandbox payment through the API: the ledger and the balance transactions agree.
    const merchants: { id: string; key: string }[] = [];
    for (let i = 0; i < MERCHANTS; i++) {
      const business = await createBusiness(api.url, `Payout merchant ${i}`);
      merchants.push({ id: business.id, key: `Bearer ${keyOf(business.keys, 'secret', 'test')}` });
      const fees = await call(api.url, {
        method: 'PUT',
        path: `/api/v1/admin/businesses/${business.id}/fees`,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
        body: JSON.stringify(PAYOUT_FEE),
      });
      if (fees.status !== 200) throw new Error(`setting the payout fee answered ${fees.status}: ${fees.body}`);
    }
    const { phones, walletAccounts } = await fundBenchWallets(client, WALLETS);
    const payoutPhones = Array.from({ length: PAYOUT_PHONES }, (_, i) => `+2227${String(i).padStart(7, '0')}`);

    /** Payable intents, spread over the merchants, inserted straight into the table (pay.ts). */
    const intentsFor = (count: number, amount?: number) =>
      insertPayableIntents(
        client,
        merchants.map((m) => m.id),
        count,
        amount,
      );
    const simulate = (intent: { reference: string; merchant: number }, key: string): LoadRequest => ({
      method: 'POST',
      path: `${API}/intents/${intent.reference}/simulate`,
      headers: { authorization: merchants[intent.merchant]!.key, 'x-idempotency-key': key },
      body: JSON.stringify({ payerPhone: phones[randomInt(WALLETS)] }),
    });
    for (const intent of await intentsFor(MERCHANTS, FUNDING)) {
      const paid = await call(api.url, simulate(intent, `fund-${intent.reference}`));
      if (paid.status !== 200) throw new Error(`funding a merchant answered ${paid.status}: ${paid.body}`);
    }
    /** What the worker does every second: the merchants' (and platform's) movements into their rows. */
    const fold = async () => {
      while ((await foldPendingMovements(scratch.database.db, 1000)) > 0);
    };
    await fold();

    const payout = (merchant: number, key: string, n: number): LoadRequest => ({
      method: 'POST',
      path: `${API}/payouts`,
      headers: { authorization: merchants[merchant]!.key, 'x-idempotency-key': key },
      body: JSON.stringify({
        amount: 100 + (n % 900),
        destination: { type: 'WALLET', phone: payoutPhones[randomInt(PAYOUT_PHONES)] },
      }),
    });

    const sendRoundCount = Number(process.env.BENCH_PAYOUTS_SEND_ROUNDS ?? 2);
    const drainCount = Number(process.env.BENCH_PAYOUTS_SEND ?? 3000);
    console.log(
      `PostgreSQL scratch database; ${MERCHANTS} merchants (payout fee ${PAYOUT_FEE.payoutFeeFlat} centimes + ` +
        `${PAYOUT_FEE.payoutFeeBps / 100}%), ${WALLETS} payer wallets, payouts to ${PAYOUT_PHONES} sandbox phones; ` +
        `API, worker, PostgreSQL and load share 2 cores. In the order they run: the worker sending a batch beside ` +
        `single payouts (the queue empty before each), a sandbox flood, single payouts beside payments, a batch beside single ` +
        `payouts, the worker sending ${drainCount.toLocaleString('en')} of the payouts left, a month's statement`,
    );

    // The worker runs only while a figure needs it (not while the API alone is measured, as in
    // bench/pay.ts).
    const startWorker = async () => {
      await client.query(`UPDATE periodic_tasks SET last_run_at = NULL WHERE name = 'list-count-fold'`);
      // Ready once its first run of the periodic tasks has come to the list-count fold.
      return startProcess('src/server.ts', ['--worker'], apiEnv(scratch.url), async () => {
        const ran = await client.query(
          `SELECT 1 FROM periodic_tasks WHERE name = 'list-count-fold' AND last_run_at IS NOT NULL`,
        );
        return ran.rows.length > 0;
      });
    };
    const pendingCount = async (where: string, values: unknown[]) =>
      Number(
        (
          await client.query<{ n: string }>(
            `SELECT count(*) AS n FROM payouts WHERE status = 'PENDING' AND ${where}`,
            values,
          )
        ).rows[0]!.n,
      );
    /** Now, and the CPU the worker and PostgreSQL have spent so far. */
    const mark = () => ({ at: new Date(), cpu: { worker: cpuTimeMs(worker!.pid), postgres: postgresCpuMs() } });
    /**
     * Waits, the worker running, until `limit` more payouts of `where` (all of them by default)
     * are no longer PENDING. Gives how long from `since` (the request that created them, or now) to
     * the first and the last of them sent (their paid_at or failed_at, set by the worker), the time
     * the worker sent none between them (gaps over 250 ms), and the CPU the worker and PostgreSQL
     * spent per payout from `since`.
     */
    const send = async (where: string, values: unknown[], limit = Number.POSITIVE_INFINITY, since = mark()) => {
      const pending = await pendingCount(where, values);
      const released = since.at;
      const deadline = Date.now() + 600_000;
      while (pending - (await pendingCount(where, values)) < Math.min(pending, limit)) {
        if (Date.now() > deadline) throw new Error(`payouts still PENDING after 10 minutes`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      // All of them: those sent before this call too.
      const count = Number.isFinite(limit)
        ? Math.min(pending, limit)
        : Number(
            (
              await client.query<{ n: string }>(
                `SELECT count(*) AS n FROM payouts
                 WHERE coalesce(paid_at, failed_at) >= $${values.length + 1} AND ${where}`,
                [...values, released],
              )
            ).rows[0]!.n,
          );
      const cpu = {
        worker: cpuTimeMs(worker!.pid) - since.cpu.worker,
        postgres: postgresCpuMs() - since.cpu.postgres,
      };
      const span = await client.query<{ first: Date; last: Date; paid: string; failed: string; idle: number }>(
        `WITH sent AS (
           SELECT status, coalesce(paid_at, failed_at) AS at FROM payouts
           WHERE coalesce(paid_at, failed_at) >= $${values.length + 1} AND ${where}
           ORDER BY at LIMIT $${values.length + 2}
         ),
         gaps AS (SELECT at - lag(at) OVER (ORDER BY at) AS gap FROM sent)
         SELECT min(at) AS first, max(at) AS last, count(*) FILTER (WHERE status = 'PAID') AS paid,
           count(*) FILTER (WHERE status = 'FAILED') AS failed,
           (SELECT coalesce(extract(epoch FROM sum(gap)), 0)::float8 * 1000 FROM gaps
            WHERE gap > interval '250 milliseconds') AS idle
         FROM sent`,
        [...values, released, count],
      );
      const row = span.rows[0]!;
      return {
        count,
        paid: Number(row.paid),
        failed: Number(row.failed),
        firstMs: row.first.getTime() - released.getTime(),
        lastMs: row.last.getTime() - released.getTime(),
        spanMs: row.last.getTime() - row.first.getTime(),
        idleMs: Number(row.idle),
        workerCpuMs: cpu.worker / (count || 1),
        postgresCpuMs: cpu.postgres / (count || 1),
      };
    };
    type Sent = Awaited<ReturnType<typeof send>>;
    const total = (cpu: CpuPerRequest) => cpu.server + cpu.postgres + cpu.load;

    // How a batch of 1,000 and 1,000 single payouts are created (3.): the batch and the
    // one-at-a-time singles from merchant 0, the clients of the concurrent singles from merchants
    // 0-15 (one merchant's payouts queue on its account's lock).
    const items = (n: number) =>
      Array.from({ length: BATCH }, (_, i) => ({
        amount: 100 + ((n + i) % 900),
        destination: { type: 'WALLET', phone: payoutPhones[(n + i) % PAYOUT_PHONES] },
      }));
    const batchIds: string[] = [];
    type Created = { ms: number; sent: number; errors: number; firstError?: string };
    const timeCreate = async (create: () => Promise<Created>) => {
      const measured = await withCpuPerRequest([api.pid], create);
      return { ...measured.result, cpu: measured.cpu };
    };
    const creators = {
      batch: () =>
        timeCreate(async () => {
          const begun = process.hrtime.bigint();
          const answer = await call(api.url, {
            method: 'POST',
            path: `${API}/payouts/batches`,
            headers: { authorization: merchants[0]!.key, 'x-idempotency-key': `pob-${randomBase62(10)}` },
            body: JSON.stringify({ items: items(randomInt(1000)) }),
          });
          const ms = Number(process.hrtime.bigint() - begun) / 1e6;
          const ok = answer.status === 201;
          if (ok) batchIds.push((JSON.parse(answer.body) as { data: { id: string } }).data.id);
          return {
            ms,
            sent: BATCH,
            errors: ok ? 0 : 1,
            ...(ok ? {} : { firstError: `${answer.status} ${answer.body.slice(0, 300)}` }),
          };
        }),
      sequential: () => {
        const run = randomBase62(6);
        return timeCreate(() => sendAll(api.url, BATCH, 1, 201, (_c, n) => payout(0, `pos-${run}-${n}`, n)));
      },
      concurrent: () => {
        const run = randomBase62(6);
        return timeCreate(() =>
          sendAll(api.url, BATCH, batchConcurrency, 201, (c, n) => payout(c % MERCHANTS, `poc-${run}-${n}`, n)),
        );
      },
    };

    // 3b. From the request to the last payout sent: one batch of 1,000 beside 1,000 single
    // payouts (16 at a time from 16 merchants), each alone in the queue, in rounds in turn, the
    // worker running. First, while the queue is empty.
    worker = await startWorker();
    const workerRuns: { batch: Sent[]; singles: Sent[] } = { batch: [], singles: [] };
    const sendRounds = {
      batch: async () => {
        const since = mark();
        const created = await creators.batch();
        if (created.errors > 0) throw new Error(`a batch was refused: ${created.firstError}`);
        const id = batchIds[batchIds.length - 1]!;
        const sent = await send('batch_id = $1', [id], Number.POSITIVE_INFINITY, since);
        const counts = await call(api.url, {
          method: 'GET',
          path: `${API}/payouts/batches/${id}`,
          headers: { authorization: merchants[0]!.key },
        });
        const data = (JSON.parse(counts.body) as { data: { counts: Record<string, number> } }).data;
        if (data.counts.PAID !== BATCH) console.log(`  ! batch ${id} counts: ${JSON.stringify(data.counts)}`);
        workerRuns.batch.push(sent);
      },
      singles: async () => {
        const since = mark();
        const created = await creators.concurrent();
        if (created.errors > 0) throw new Error(`single payouts were refused: ${created.firstError}`);
        workerRuns.singles.push(
          await send('batch_id IS NULL AND created_at >= $1', [since.at], Number.POSITIVE_INFINITY, since),
        );
      },
    };
    // Warm-up, not measured: the worker's first sends, and a wallet for each of the payout phones
    // (the first payout to a sandbox phone opens its wallet), so that no round pays for either.
    const warmup = await creators.batch();
    if (warmup.errors > 0) throw new Error(`a batch was refused: ${warmup.firstError}`);
    await send('batch_id = $1', [batchIds[batchIds.length - 1]]);
    for (let round = 0; round < sendRoundCount; round++) {
      const order: (keyof typeof sendRounds)[] = round % 2 === 0 ? ['batch', 'singles'] : ['singles', 'batch'];
      for (const name of order) {
        await fold();
        await sendRounds[name]();
      }
    }

    // The flood, the queue empty and the worker running: through an API process of its own with
    // the default bound on pending sandbox payouts.
    floodApi = await startServer('src/server.ts', ['--api'], apiEnv(scratch.url), '/ready');
    const flooder = await fundedMerchant(floodApi.url, 'Flood merchant', 50_000_000);
    const prober = await fundedMerchant(floodApi.url, 'Probe merchant', 10_000_000);
    printFlood(
      "A sandbox flood beside another merchant's payouts (PostgreSQL, one worker)",
      await measureFlood(floodApi.url, flooder, prober),
    );
    // The sender beside single payouts created at full speed, 8 merchants (within the bound).
    const creating = [flooder, prober];
    for (let i = 0; i < 6; i++) creating.push(await fundedMerchant(floodApi.url, `Creating merchant ${i}`, 10_000_000));
    await keepsUpWhileCreating(floodApi.url, creating);
    await floodApi.stop();
    floodApi = undefined;
    await worker.stop();
    worker = undefined;
    console.log(
      `\nThe worker sending ${BATCH.toLocaleString('en')} payouts alone in the queue: one batch, beside ` +
        `${BATCH.toLocaleString('en')} single payouts; ${sendRoundCount} rounds in turn (BENCH_PAYOUTS_SEND_ROUNDS); ` +
        `times from the request that created them, the worker running`,
    );
    console.log(
      `  ${''.padEnd(24)}${['first sent', 'last sent', 'first-last', 'idle', 'payouts/s', 'CPU/payout']
        .map((h) => h.padStart(11))
        .join('')}`,
    );
    const sendLine = (label: string, runs: Sent[]) => {
      const cpu = runs.reduce((sum, run) => sum + run.workerCpuMs + run.postgresCpuMs, 0) / runs.length;
      const last = median(runs.map((run) => run.lastMs));
      console.log(
        `  ${label.padEnd(24)}${[
          seconds(median(runs.map((run) => run.firstMs))),
          seconds(last),
          seconds(median(runs.map((run) => run.spanMs))),
          seconds(median(runs.map((run) => run.idleMs))),
          ((BATCH * 1000) / last).toFixed(0),
          cpu.toFixed(2),
        ]
          .map((cell) => cell.padStart(11))
          .join('')}`,
      );
      const failed = runs.reduce((sum, run) => sum + run.failed, 0);
      if (failed > 0) console.log(`  ! ${label}: ${failed} FAILED`);
    };
    sendLine('batch of 1,000', workerRuns.batch);
    sendLine('1,000 single (baseline)', workerRuns.singles);
    const sendRatio =
      median(workerRuns.singles.map((run) => run.lastMs)) / median(workerRuns.batch.map((run) => run.lastMs));
    console.log(
      `  medians of the rounds (idle: no payout sent for over 250 ms); CPU per payout: worker + PostgreSQL from ` +
        `the request (the creation's share of PostgreSQL included), ms; the batch's payouts/s over the singles': ${sendRatio.toFixed(2)}x; last sent, each ` +
        `round: batch ${workerRuns.batch.map((run) => seconds(run.lastMs)).join(', ')}; singles ` +
        `${workerRuns.singles.map((run) => seconds(run.lastMs)).join(', ')}`,
    );

    // 1. Single payouts beside sandbox payments, on the same API process, in alternating rounds.
    // Client c pays out for merchant c mod 20: a merchant's payouts queue on its account's lock,
    // so at most two clients wait on one merchant. Pending movements are folded before each round
    // (outside what is measured), as the worker does every second.
    const intentPool = Number(
      process.env.BENCH_PAY_INTENTS ?? Math.max(20_000, Math.ceil((warmupMs + durationMs) * 3)),
    );
    const single = await inRounds(rounds, {
      payouts: async () => {
        await fold();
        const run = randomBase62(6);
        return withCpuPerRequest([api.pid], () =>
          runLoad(api.url, { concurrency, durationMs, warmupMs, expectStatus: 201 }, (c, n) =>
            payout(c % MERCHANTS, `po-${run}-${n}`, n),
          ),
        );
      },
      payments: async () => {
        await fold();
        const intents = await intentsFor(intentPool);
        const run = randomBase62(6);
        return withCpuPerRequest([api.pid], () =>
          runLoad(api.url, { concurrency, durationMs, warmupMs, expectStatus: 200 }, (_c, n) =>
            simulate(intents[n % intents.length]!, `pay-${run}-${n}`),
          ),
        );
      },
    });
    printThroughput(
      `Single payouts (POST /payouts), baseline: sandbox payments (simulate) on the same API process; ${concurrency} ` +
        `clients; ${rounds} rounds, each load in turn, of ${warmupMs / 1000} s warm-up then ${durationMs / 1000} s`,
      [
        {
          name: 'payouts, 1 API process',
          ours: single.payouts.result,
          baseline: single.payments.result,
          ratios: roundRatios(single.payouts, single.payments),
          target: 0.8,
        },
      ],
    );
    printCpuPerRequest('CPU per request', [
      { name: 'payout', cpu: single.payouts.cpu },
      { name: 'payment (baseline)', cpu: single.payments.cpu },
    ]);
    const cpuRatio = total(single.payments.cpu) / total(single.payouts.cpu);
    console.log(
      `  payments' CPU over payouts' (API + PostgreSQL + load): ${cpuRatio.toFixed(2)}x; ` +
        `target >= 0.8x by CPU per request: ${met(cpuRatio >= 0.8)}`,
    );

    // 3a. A batch of 1,000 beside 1,000 single payouts, one at a time and 16 at a time, in rounds.
    const creations: Record<keyof typeof creators, (Created & { cpu: CpuPerRequest })[]> = {
      batch: [],
      sequential: [],
      concurrent: [],
    };
    const names = Object.keys(creators) as (keyof typeof creators)[];
    for (let round = 0; round < rounds; round++) {
      for (const name of round % 2 === 0 ? names : [...names].reverse()) {
        await fold();
        creations[name].push(await creators[name]());
      }
    }
    console.log(
      `\n${BATCH.toLocaleString('en')} payouts: one batch (POST /payouts/batches) beside ${BATCH.toLocaleString('en')} ` +
        `single payouts (POST /payouts), ${rounds} rounds in turn; CPU per payout (API + PostgreSQL + load), ms`,
    );
    console.log(
      `  ${''.padEnd(30)}${['median', 'best', 'worst', 'payouts/s', 'CPU/payout', 'vs batch'].map((h) => h.padStart(11)).join('')}`,
    );
    const creationLine = (label: string, runs: (Created & { cpu: CpuPerRequest })[], batchMs: number) => {
      const times = runs.map((run) => run.ms);
      const sent = runs.reduce((sum, run) => sum + run.sent, 0);
      const cpu = runs.reduce((sum, run) => sum + total(run.cpu) * run.sent, 0) / (sent || 1);
      console.log(
        `  ${label.padEnd(30)}${[
          seconds(median(times)),
          seconds(Math.min(...times)),
          seconds(Math.max(...times)),
          ((BATCH * 1000) / median(times)).toFixed(0),
          cpu.toFixed(3),
          `${(median(times) / batchMs).toFixed(1)}x`,
        ]
          .map((cell) => cell.padStart(11))
          .join('')}`,
      );
      const errors = runs.reduce((sum, run) => sum + run.errors, 0);
      const first = runs.find((run) => run.firstError)?.firstError;
      if (errors > 0) console.log(`  ! ${label}: ${errors} unexpected answers, first: ${first}`);
    };
    const batchMs = median(creations.batch.map((run) => run.ms));
    creationLine('one batch of 1,000', creations.batch, batchMs);
    creationLine('1,000 single, one at a time', creations.sequential, batchMs);
    creationLine(`1,000 single, ${batchConcurrency} at a time`, creations.concurrent, batchMs);
    console.log(
      `  (the batch and the one-at-a-time singles from one merchant; the ${batchConcurrency} clients from ` +
        `${Math.min(batchConcurrency, MERCHANTS)} merchants; "vs batch": the median wall time over the batch's)`,
    );

    // 2. Sending: a worker started on the payouts left PENDING above (it sends the 20 merchants'
    // in turns) is timed over BENCH_PAYOUTS_SEND (3,000) of them, beside a bare double-entry transfer one at a time
    // (bench/baseline-server.ts /bare/pay) before and after. The rest stay PENDING.
    baseline = await startServer('bench/baseline-server.ts', [], { DATABASE_URL: scratch.url }, '/ready');
    const bareOne = async () => {
      const intents = await intentsFor(10_000);
      const base = baseline!;
      return withCpuPerRequest([base.pid], () =>
        runLoad(base.url, { concurrency: 1, durationMs: 3000, warmupMs: 500, expectStatus: 200 }, (_c, n) => ({
          method: 'POST',
          path: `/bare/pay/${intents[n % intents.length]!.reference}?payer=${walletAccounts[randomInt(WALLETS)]}`,
        })),
      );
    };
    await fold();
    const bareBefore = await bareOne();
    worker = await startWorker();
    const drained = await send('true', [], drainCount);
    await worker.stop();
    worker = undefined;
    const bareAfter = await bareOne();
    await baseline.stop();
    baseline = undefined;
    const bare: LoadResult = mergeLoads([bareBefore.result, bareAfter.result]);
    const bareCpu =
      (bareBefore.cpu.server + bareBefore.cpu.postgres + bareAfter.cpu.server + bareAfter.cpu.postgres) / 2;
    const drainPerSecond = (drained.count * 1000) / drained.lastMs;
    const sendingPerSecond = (drained.count * 1000) / (drained.spanMs - drained.idleMs || 1);
    console.log(
      `\nSending: one worker, started on the PENDING payouts left above, timed over ${drained.count.toLocaleString('en')} of them ` +
        `above (${drained.paid.toLocaleString('en')} PAID, ${drained.failed} FAILED); baseline: a bare ` +
        `double-entry transfer, one at a time (baseline-server.ts /bare/pay, 1 client, before and after)`,
    );
    console.log(
      `  worker   ${drainPerSecond.toFixed(0).padStart(6)} payouts/s from the start of the measure to the last sent ` +
        `(${seconds(drained.lastMs)}; the first after ${seconds(drained.firstMs)}; idle ` +
        `${seconds(drained.idleMs)}); ${sendingPerSecond.toFixed(0)}/s while it sends`,
    );
    console.log(
      `  bare     ${bare.perSecond.toFixed(0).padStart(6)} transfers/s one at a time ` +
        `(${bareBefore.result.perSecond.toFixed(0)} before, ${bareAfter.result.perSecond.toFixed(0)} after); ` +
        `ratio ${(drainPerSecond / bare.perSecond).toFixed(2)}x`,
    );
    console.log(
      `  CPU per item, ms: worker ${drained.workerCpuMs.toFixed(2)} + PostgreSQL ${drained.postgresCpuMs.toFixed(2)} = ` +
        `${(drained.workerCpuMs + drained.postgresCpuMs).toFixed(2)}; bare server + PostgreSQL ${bareCpu.toFixed(2)} ` +
        `(the bare side's load generator not counted)`,
    );
    console.log(
      `  the API created single payouts at ${single.payouts.result.perSecond.toFixed(0)}/s above; the worker keeps up ` +
        `with that: ${drainPerSecond >= single.payouts.result.perSecond ? 'yes' : 'NO'} ` +
        `(${(drainPerSecond / single.payouts.result.perSecond).toFixed(2)}x; eight at a time)`,
    );

    // 4. A month's statement of STATEMENT_ROWS transactions, streamed by a fresh API process (its
    // RSS read every 25 ms while it streams), beside the CSV export of the same rows, in rounds.
    const owner = await createBusiness(api.url, 'Statement merchant');
    const ownerKey = `Bearer ${keyOf(owner.keys, 'secret', 'test')}`;
    const filled = Date.now();
    // The mix of bench/balance.ts over the current month (UTC), from its first second to now.
    await fillTransactions(client, randomBase62(4), owner.id, 'test', STATEMENT_ROWS, {
      span: 'current month',
      idPrefix: 'st',
      referencePrefix: 'S',
      referenceDigits: 12,
      slice: 50_000,
    });
    await client.query('VACUUM (ANALYZE) balance_transactions');
    const month = new Date().toISOString().slice(0, 7);
    console.log(
      `\nA month's statement: ${STATEMENT_ROWS.toLocaleString('en')} balance transactions of one merchant in ` +
        `${month} (filled by SQL in ${seconds(Date.now() - filled)}), streamed by a fresh API process; baseline: ` +
        `the CSV export of the same rows; ${rounds} rounds in turn`,
    );
    await api.stop();
    statementApi = await startServer('src/server.ts', ['--api'], apiEnv(scratch.url), '/ready');
    const server = statementApi;
    const streams = {
      export: `${API}/balance/transactions/export`,
      csv: `${API}/balance/statements/${month}?format=csv`,
      html: `${API}/balance/statements/${month}?format=html`,
    };
    type Streamed = Awaited<ReturnType<typeof streamCounted>> & { ms: number; growthMb: number; peakMb: number };
    const streamed: Record<keyof typeof streams, Streamed[]> = { export: [], csv: [], html: [] };
    const idleMb = rssMb(server.pid);
    /** The statement formats whose route answered 404 (not in this tree yet). */
    const absent = new Set<keyof typeof streams>();
    const kinds = Object.keys(streams) as (keyof typeof streams)[];
    for (let round = 0; round < rounds; round++) {
      for (const kind of round % 2 === 0 ? kinds : [...kinds].reverse()) {
        if (absent.has(kind)) continue;
        const before = rssMb(server.pid);
        let highest = before;
        resetPeakMemory(server.pid);
        const sampler = setInterval(() => (highest = Math.max(highest, rssMb(server.pid))), 25);
        const begun = process.hrtime.bigint();
        const result = await streamCounted(`${server.url}${streams[kind]}`, ownerKey);
        const ms = Number(process.hrtime.bigint() - begun) / 1e6;
        clearInterval(sampler);
        highest = Math.max(highest, rssMb(server.pid));
        if (kind !== 'export' && result.status === 404) {
          absent.add(kind);
          continue;
        }
        if (result.status !== 200) console.log(`  ! ${kind} answered ${result.status}`);
        streamed[kind].push({ ...result, ms, growthMb: highest - before, peakMb: peakMemoryMb(server.pid) - before });
      }
    }
    if (absent.has('csv') && absent.has('html')) console.log('  statement route not present: skipped');
    else for (const kind of absent) console.log(`  statement route not present for format=${kind}: skipped`);
    console.log(
      `  ${''.padEnd(18)}${['MB out', 'lines', '<tr', 'median', 'lines/s', 'RSS growth', 'peak mark']
        .map((h) => h.padStart(11))
        .join('')}  target`,
    );
    const streamLine = (label: string, runs: Streamed[], target: boolean) => {
      if (runs.length === 0) return;
      const ms = median(runs.map((run) => run.ms));
      const growth = Math.max(...runs.map((run) => run.growthMb));
      const last = runs[runs.length - 1]!;
      console.log(
        `  ${label.padEnd(18)}${[
          (last.bytes / 1e6).toFixed(1),
          last.lines.toLocaleString('en'),
          last.rows > 0 ? last.rows.toLocaleString('en') : '-',
          seconds(ms),
          Math.round((last.lines * 1000) / ms).toLocaleString('en'),
          `${growth.toFixed(1)} MB`,
          `${Math.max(...runs.map((run) => run.peakMb)).toFixed(1)} MB`,
        ]
          .map((cell) => cell.padStart(11))
          .join(
            '',
          )}  ${target ? `< ${STATEMENT_TARGET_RSS_GROWTH_MB} MB ${met(growth < STATEMENT_TARGET_RSS_GROWTH_MB)}` : ''}`,
      );
      console.log(
        `  ${''.padEnd(18)}RSS growth of each round: ${runs.map((run) => run.growthMb.toFixed(1)).join(', ')} MB`,
      );
    };
    streamLine('export (baseline)', streamed.export, false);
    streamLine('statement CSV', streamed.csv, true);
    streamLine('statement HTML', streamed.html, true);
    console.log(
      `  API process ${idleMb.toFixed(0)} MB after start; RSS growth: the most, over the rounds, above the RSS ` +
        `before the request (sampled every 25 ms); peak mark: VmHWM above the same`,
    );
    console.log(`\nsuite ran in ${seconds(Date.now() - suiteBegun)}`);
  } finally {
    await worker?.stop();
    await floodApi?.stop();
    await baseline?.stop();
    await statementApi?.stop();
    await api.stop();
    agent.destroy();
    await client.end();
    await scratch.drop();
  }
}
