/**
 * `npm run bench -- pay`: sandbox payments (`simulate`) from 200 wallets to 20 merchants on
 * PostgreSQL, beside a bare Fastify route doing the same double-entry transfer the plain way; then
 * the same load over two API processes, and the bare route over two processes (what a second
 * process can add on this machine at all); the CPU each side spends per payment; and the API
 * process's memory under that load; and payments of intents split between three sellers of their
 * merchant (issue 52: amounts, the fee spread over the shares, the worst case: every line bears
 * a fee) beside the unsplit ones, by 1 API process. Each load runs in rounds, in turn with the
 * others (rounds.ts).
 */
import { randomInt } from 'node:crypto';
import pg from 'pg';
import { randomBase62 } from '../src/lib/ids.js';
import { ADMIN_TOKEN, createBusiness, keyOf } from './intents.js';
import { printCpuPerRequest, printThroughput } from './report.js';
import { createScratchDatabase } from './support/database.js';
import { runLoad, type LoadResult } from './support/load.js';
import {
  peakMemoryMb,
  resetPeakMemory,
  startServer,
  withCpuPerRequest,
  type ServerProcess,
  rssMb,
} from './support/processes.js';
import { inRounds, roundCount, roundDurationMs, roundRatios } from './support/rounds.js';
import { fundBenchWallets, insertPayableIntents, type BenchSplit } from './support/sandbox.js';

const MERCHANTS = 20;
const WALLETS = 200;
/** Sellers per merchant a split payment shares between. */
const SELLERS = 3;

/** Merchant `index`'s three sellers, made through the API as a marketplace makes them. */
async function createSellers(apiUrl: string, key: string, index: number): Promise<[string, string, string]> {
  const ids: string[] = [];
  for (let s = 0; s < SELLERS; s++) {
    const response = await fetch(`${apiUrl}/api/v1/dev/sellers`, {
      method: 'POST',
      headers: { authorization: key, 'content-type': 'application/json', 'x-idempotency-key': `seller-${index}-${s}` },
      body: JSON.stringify({
        name: `Stall ${index}.${s}`,
        phone: `+2226${String(index * SELLERS + s).padStart(7, '0')}`,
      }),
    });
    const body = (await response.json()) as { data?: { id: string } };
    if (response.status !== 201 || !body.data)
      throw new Error(`seller create: ${response.status} ${JSON.stringify(body)}`);
    ids.push(body.data.id);
  }
  return ids as [string, string, string];
}

/** The API process's settings under load: no demo data, no rate limit. */
export function apiEnv(url: string): Record<string, string> {
  return {
    DATABASE_URL: url,
    ADMIN_TOKEN,
    SEED_DEMO: 'false',
    LOG_LEVEL: 'warn',
    RATE_LIMIT_LIVE_PER_MINUTE: '1000000000',
    RATE_LIMIT_TEST_PER_MINUTE: '1000000000',
  };
}

export async function paySuite(): Promise<void> {
  const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 32);
  const warmupMs = 2000;
  const rounds = roundCount();
  const durationMs = roundDurationMs();
  const scratch = await createScratchDatabase();
  const client = new pg.Client({ connectionString: scratch.url });
  await client.connect();
  const api = await startServer('src/server.ts', ['--api'], apiEnv(scratch.url), '/ready');
  let second: ServerProcess | undefined;
  let secondBaseline: ServerProcess | undefined;
  const baseline = await startServer('bench/baseline-server.ts', [], { DATABASE_URL: scratch.url }, '/ready');
  try {
    const merchants: { id: string; key: string }[] = [];
    for (let i = 0; i < MERCHANTS; i++) {
      const business = await createBusiness(api.url, `Pay merchant ${i}`);
      merchants.push({ id: business.id, key: `Bearer ${keyOf(business.keys, 'secret', 'test')}` });
    }
    const split: BenchSplit = {
      sellers: await Promise.all(merchants.map((m, i) => createSellers(api.url, m.key, i))),
      feeBearer: 'PROPORTIONAL',
    };
    // 200 funded sandbox wallets, one PIN hash for all (hashing is not what is measured).
    const { phones, walletAccounts } = await fundBenchWallets(client, WALLETS);
    /** Payable intents for one run, spread over the merchants, inserted straight into the table. */
    const intentsFor = (count: number, splitBy?: BenchSplit) =>
      insertPayableIntents(
        client,
        merchants.map((m) => m.id),
        count,
        undefined,
        splitBy,
      );

    // Fresh intents for every run: enough for 3,000 payments/s through the warm-up and the round.
    const pool = Number(process.env.BENCH_PAY_INTENTS ?? Math.max(20_000, Math.ceil((warmupMs + durationMs) * 3)));
    // The intents are inserted before the CPU is measured: their insert is not a payment's work.
    const pay = (urls: string[], intents: { reference: string; merchant: number }[]): Promise<LoadResult> => {
      const run = randomBase62(6);
      return runLoad(urls, { concurrency, durationMs, warmupMs, expectStatus: 200 }, (_c, n) => {
        const intent = intents[n % intents.length]!;
        return {
          method: 'POST',
          path: `/api/v1/dev/intents/${intent.reference}/simulate`,
          headers: { authorization: merchants[intent.merchant]!.key, 'x-idempotency-key': `pay-${run}-${n}` },
          body: JSON.stringify({ payerPhone: phones[randomInt(WALLETS)] }),
        };
      });
    };
    const bare = (urls: string[], intents: { reference: string }[]): Promise<LoadResult> =>
      runLoad(urls, { concurrency, durationMs, warmupMs, expectStatus: 200 }, (_c, n) => ({
        method: 'POST',
        path: `/bare/pay/${intents[n % intents.length]!.reference}?payer=${walletAccounts[randomInt(WALLETS)]}`,
      }));

    console.log(
      `PostgreSQL scratch database; ${MERCHANTS} merchants, ${WALLETS} wallets; ${concurrency} clients; ` +
        `${rounds} rounds, each load in turn, of ${warmupMs / 1000} s warm-up then ${durationMs / 1000} s; ` +
        `app, baseline and load share 2 cores`,
    );
    const idleMb = rssMb(api.pid);
    const baselineIdleMb = rssMb(baseline.pid);
    second = await startServer('src/server.ts', ['--api'], apiEnv(scratch.url), '/ready');
    secondBaseline = await startServer('bench/baseline-server.ts', [], { DATABASE_URL: scratch.url }, '/ready');
    const both = { api: [api, second], baseline: [baseline, secondBaseline] };
    // The peak of each round: how high the heap lets RSS climb before a major GC varies from one to the next.
    const peaksMb: number[] = [];
    const baselinePeaksMb: number[] = [];
    const measured = await inRounds(rounds, {
      baseOne: async () => {
        const intents = await intentsFor(pool);
        resetPeakMemory(baseline.pid);
        const run = await withCpuPerRequest([baseline.pid], () => bare([baseline.url], intents));
        baselinePeaksMb.push(peakMemoryMb(baseline.pid));
        return run;
      },
      ours: async () => {
        const intents = await intentsFor(pool);
        resetPeakMemory(api.pid);
        const run = await withCpuPerRequest([api.pid], () => pay([api.url], intents));
        peaksMb.push(peakMemoryMb(api.pid));
        return run;
      },
      split: async () => {
        const intents = await intentsFor(pool, split);
        return withCpuPerRequest([api.pid], () => pay([api.url], intents));
      },
      oursTwo: async () => {
        const intents = await intentsFor(pool);
        return withCpuPerRequest(
          both.api.map((server) => server.pid),
          () =>
            pay(
              both.api.map((server) => server.url),
              intents,
            ),
        );
      },
      baseTwo: async () => {
        const intents = await intentsFor(pool);
        return withCpuPerRequest(
          both.baseline.map((server) => server.pid),
          () =>
            bare(
              both.baseline.map((server) => server.url),
              intents,
            ),
        );
      },
    });
    const { baseOne, ours, split: splitPay, oursTwo, baseTwo } = measured;
    printThroughput('Sandbox payments (simulate), baseline: bare Fastify + pg double-entry transfer', [
      {
        name: 'pay, 1 API process',
        ours: ours.result,
        baseline: baseOne.result,
        ratios: roundRatios(ours, baseOne),
        target: 0.8,
      },
      {
        name: `split pay, ${SELLERS} sellers`,
        ours: splitPay.result,
        baseline: ours.result,
        ratios: roundRatios(splitPay, ours),
        target: 0.85,
      },
      {
        name: 'pay, 2 API processes',
        ours: oursTwo.result,
        baseline: ours.result,
        ratios: roundRatios(oursTwo, ours),
        target: 1.6,
      },
      {
        name: 'bare, 2 processes',
        ours: baseTwo.result,
        baseline: baseOne.result,
        ratios: roundRatios(baseTwo, baseOne),
      },
    ]);
    console.log(
      `  (split pay's baseline is pay by 1 API process, the same run's unsplit payments; ` +
        `the last two lines' baseline is the same setup with 1 process: what a second process adds on this ` +
        `machine, to the app and to the bare route; >= 1,000 payments/s targeted: ` +
        `${ours.result.perSecond >= 1000 ? 'met' : 'NOT MET'})`,
    );
    printCpuPerRequest('CPU per payment', [
      { name: 'pay, 1 API process', cpu: ours.cpu },
      { name: 'bare, 1 process', cpu: baseOne.cpu },
      { name: `split pay, ${SELLERS} sellers`, cpu: splitPay.cpu },
      { name: 'pay, 2 API processes', cpu: oursTwo.cpu },
      { name: 'bare, 2 processes', cpu: baseTwo.cpu },
    ]);
    console.log(
      `\nAPI process memory: ${idleMb.toFixed(0)} MB after start, ${Math.max(...peaksMb).toFixed(0)} MB peak under ` +
        `the pay load (target <= 200 MB); the peak of each round: ${peaksMb.map((mb) => mb.toFixed(0)).join(', ')} MB`,
    );
    // The bare route's process runs the benchmark's TypeScript through tsx, whose loader it also holds.
    console.log(
      `bare route's process: ${baselineIdleMb.toFixed(0)} MB after start, ${Math.max(...baselinePeaksMb).toFixed(0)} MB ` +
        `peak under its load; the peak of each round: ${baselinePeaksMb.map((mb) => mb.toFixed(0)).join(', ')} MB`,
    );
    // Every split payment gave each of its three sellers a share: the split was paid, not skipped.
    const shared = await client.query<{ paid: number; shared: number }>(
      `SELECT count(*)::int AS paid, count(*) FILTER (WHERE jsonb_array_length(split_shares) = ${SELLERS})::int AS shared
       FROM payment_intents WHERE split IS NOT NULL AND status = 'PAID'`,
    );
    console.log(
      `split payments paid: ${shared.rows[0]!.paid}, with a share for each of the ${SELLERS} sellers: ${shared.rows[0]!.shared}`,
    );
    const folded = await client.query(`SELECT count(*)::int AS n FROM ledger_pending_movements`);
    console.log(`pending ledger movements left for the worker to fold: ${folded.rows[0].n}`);
  } finally {
    await second?.stop();
    await secondBaseline?.stop();
    await api.stop();
    await baseline.stop();
    await client.end();
    await scratch.drop();
  }
}
