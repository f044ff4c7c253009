import http from 'node:http';
import pg from 'pg';
import { createBusiness, keyOf, ADMIN_TOKEN } from './intents.js';
import { printLatencies } from './report.js';
import { EXPORT_BATCH } from '../src/modules/payments/balance-transactions.js';
import { fillTransactions } from './support/balance-rows.js';
import { createScratchDatabase } from './support/database.js';
import { timeSamples } from './support/load.js';
import { peakMemoryMb, resetPeakMemory, startServer, rssMb } from './support/processes.js';

/**
 * `npm run bench -- balance` (issue 33): the balance transactions of one merchant that owns
 * BENCH_BALANCE_ROWS (1,000,000) of them in one environment, beside other merchants' rows in the
 * same table and index. Asked one request at a time through the API: page 1, a type filter, a
 * 30-day range, both, a deep page, and one transaction by id (what any request costs beside its
 * statement), each beside the bare indexed page 1 statement (no total) run from this process
 * through `pg` in the same loop; then the CSV export of every line, its lines per second beside
 * the same keyset batches read through `pg`, and the server's resident memory while it streams.
 */
const ROWS = Number(process.env.BENCH_BALANCE_ROWS ?? 1_000_000);
const SAMPLES = Number(process.env.BENCH_BALANCE_SAMPLES ?? 200);
const WARMUP = 20;
const DAYS = 300;
const PAGE_TARGET_P99_MS = 20;
const EXPORT_TARGET_LINES_PER_SECOND = 50_000;
const EXPORT_TARGET_RSS_GROWTH_MB = 50;

interface PageCase {
  name: string;
  path: string;
  /** What `total` must say, when known. */
  total?: number;
  target?: boolean;
}

/** GET `url`, streamed and dropped as it comes: its status, and how many bytes and newlines it had. */
function streamLines(url: string, authorization: string): Promise<{ status: number; lines: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { headers: { authorization } }, (response) => {
      let lines = 0;
      let bytes = 0;
      response.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) lines += 1;
      });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, lines, bytes }));
      response.on('error', reject);
    });
    request.on('error', reject);
  });
}

const met = (ok: boolean) => (ok ? 'met' : 'NOT MET');

export async function balanceSuite(): Promise<void> {
  const scratch = await createScratchDatabase();
  const client = new pg.Client({ connectionString: scratch.url });
  await client.connect();
  const api = await startServer(
    'src/server.ts',
    ['--api'],
    {
      DATABASE_URL: scratch.url,
      ADMIN_TOKEN,
      SEED_DEMO: 'false',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_LIVE_PER_MINUTE: '1000000000',
      RATE_LIMIT_TEST_PER_MINUTE: '1000000000',
    },
    '/ready',
  );
  try {
    const business = await createBusiness(api.url, 'Million movements');
    const neighbour = await createBusiness(api.url, 'Neighbour');
    const other = await createBusiness(api.url, 'Other');
    const secret = `Bearer ${keyOf(business.keys, 'secret', 'test')}`;

    // The merchant's million in test; its live rows and two other merchants' rows share the
    // table and its indexes, over the same days.
    const others = Math.round(ROWS / 4);
    const started = Date.now();
    const overDays = { span: { daysBack: DAYS } };
    console.log(
      `Filling ${ROWS.toLocaleString('en')} balance transactions of one merchant (test), ` +
        `and ${(3 * others).toLocaleString('en')} of its live environment and two other merchants...`,
    );
    await fillTransactions(client, '1', business.id, 'test', ROWS, overDays);
    await fillTransactions(client, '2', business.id, 'live', others, overDays);
    await fillTransactions(client, '3', neighbour.id, 'test', others, overDays);
    await fillTransactions(client, '4', other.id, 'live', others, overDays);
    // What autovacuum would have done by the time a table is this big: statistics, hint bits.
    await client.query('VACUUM (ANALYZE) balance_transactions');
    await client.query('ANALYZE list_counts');
    console.log(`filled in ${((Date.now() - started) / 1000).toFixed(0)} s (PostgreSQL scratch database)`);

    const day = (offset: number) => new Date(Date.now() - offset * 86_400_000).toISOString();
    const month = `from=${day(200)}&to=${day(170)}`;
    const deepPage = Math.floor(ROWS / 2 / 100);
    const cases: PageCase[] = [
      { name: 'page 1', path: '/balance/transactions', total: ROWS, target: true },
      { name: 'type=refund', path: '/balance/transactions?type=refund', total: ROWS / 10, target: true },
      { name: '30 days', path: `/balance/transactions?${month}`, target: true },
      { name: 'type=refund, 30 days', path: `/balance/transactions?type=refund&${month}`, target: true },
      { name: `page ${deepPage} of 100`, path: `/balance/transactions?page=${deepPage}&limit=100`, total: ROWS },
      // The cheapest authenticated read of the same rows: what any request costs beside its statement.
      {
        name: 'one transaction by id',
        path: `/balance/transactions/txn_1${String(Math.floor(ROWS / 2)).padStart(10, '0')}`,
      },
    ];

    const get = async (path: string) => {
      const begun = process.hrtime.bigint();
      const response = await fetch(`${api.url}/api/v1/dev${path}`, { headers: { authorization: secret } });
      const text = await response.text();
      const took = Number(process.hrtime.bigint() - begun) / 1e6;
      if (response.status !== 200) throw new Error(`GET ${path} answered ${response.status}: ${text.slice(0, 300)}`);
      return { took, text };
    };
    const bare = async () => {
      const begun = process.hrtime.bigint();
      await client.query(
        `SELECT * FROM balance_transactions WHERE business_id = $1 AND environment = $2
         ORDER BY created_at DESC, id DESC LIMIT 20`,
        [business.id, 'test'],
      );
      return Number(process.hrtime.bigint() - begun) / 1e6;
    };

    const lines = [];
    for (const item of cases) {
      const first = JSON.parse((await get(item.path)).text) as { data: { total?: number; items?: unknown[] } };
      if (item.total !== undefined && first.data.total !== item.total) {
        console.log(`  ! ${item.name}: total ${first.data.total}, expected ${item.total}`);
      }
      if (first.data.items?.length === 0) console.log(`  ! ${item.name}: an empty page`);
      const samples: number[] = [];
      const baseSamples: number[] = [];
      for (let i = 0; i < WARMUP + SAMPLES; i++) {
        const ours = (await get(item.path)).took;
        const base = await bare();
        if (i >= WARMUP) {
          samples.push(ours);
          baseSamples.push(base);
        }
      }
      const ours = timeSamples(samples);
      const base = timeSamples(baseSamples);
      lines.push({
        name: first.data.total === undefined ? item.name : `${item.name} (${first.data.total.toLocaleString('en')})`,
        ...ours,
        baselineP50Ms: base.p50Ms,
        baselineP99Ms: base.p99Ms,
        target: item.target,
      });
    }
    printLatencies(
      `Balance transactions of a merchant with ${ROWS.toLocaleString('en')} of them (and ` +
        `${(3 * others).toLocaleString('en')} other rows in the table), one client, ${SAMPLES} requests per line, ` +
        `the total in brackets (target: page 1 and filtered pages p99 <= ${PAGE_TARGET_P99_MS} ms)`,
      'bare SQL',
      lines,
    );
    console.log('  bare SQL: the page 1 statement without a total, from this process through pg, after each request');
    for (const line of lines.filter((line) => line.target)) {
      console.log(
        `  target p99 <= ${PAGE_TARGET_P99_MS} ms, ${line.name}: ${met(line.p99Ms <= PAGE_TARGET_P99_MS)} ` +
          `(${line.p99Ms.toFixed(2)} ms)`,
      );
    }

    // Baseline of the export: the same keyset batches of every row, read through pg.
    let begun = process.hrtime.bigint();
    let baseRows = 0;
    let cursor: { created_at: Date; id: string } | undefined;
    for (;;) {
      const batch = await client.query<{ created_at: Date; id: string }>(
        `SELECT * FROM balance_transactions WHERE business_id = $1 AND environment = $2
         ${cursor ? 'AND (created_at, id) < ($4::timestamptz, $5)' : ''}
         ORDER BY created_at DESC, id DESC LIMIT $3`,
        [business.id, 'test', EXPORT_BATCH, ...(cursor ? [cursor.created_at, cursor.id] : [])],
      );
      baseRows += batch.rows.length;
      if (batch.rows.length < EXPORT_BATCH) break;
      const last = batch.rows[batch.rows.length - 1]!;
      cursor = { created_at: last.created_at, id: last.id };
    }
    const baseSeconds = Number(process.hrtime.bigint() - begun) / 1e9;

    // The export through the API, streamed and counted; the server's RSS read while it streams.
    const rssBefore = rssMb(api.pid);
    let rssMax = rssBefore;
    resetPeakMemory(api.pid);
    const sampler = setInterval(() => (rssMax = Math.max(rssMax, rssMb(api.pid))), 25);
    begun = process.hrtime.bigint();
    const exported = await streamLines(`${api.url}/api/v1/dev/balance/transactions/export`, secret);
    const seconds = Number(process.hrtime.bigint() - begun) / 1e9;
    clearInterval(sampler);
    rssMax = Math.max(rssMax, rssMb(api.pid));
    const peakMb = peakMemoryMb(api.pid);
    if (exported.status !== 200) throw new Error(`the export answered ${exported.status}`);
    const rowsOut = exported.lines - 1; // the header
    if (rowsOut !== ROWS) console.log(`  ! the export gave ${rowsOut} lines, expected ${ROWS}`);
    const perSecond = rowsOut / seconds;
    const growthMb = rssMax - rssBefore;
    console.log(
      `\nCSV export of all ${ROWS.toLocaleString('en')} transactions (one request, streamed and counted, ` +
        `targets: >= ${EXPORT_TARGET_LINES_PER_SECOND.toLocaleString('en')} lines/s, server RSS growth < ${EXPORT_TARGET_RSS_GROWTH_MB} MB)`,
    );
    console.log(
      `  export      ${rowsOut.toLocaleString('en').padStart(10)} lines  ${seconds.toFixed(2).padStart(6)} s  ` +
        `${Math.round(perSecond).toLocaleString('en').padStart(8)} lines/s  ${(exported.bytes / 1e6).toFixed(0)} MB of CSV`,
    );
    console.log(
      `  bare pg     ${baseRows.toLocaleString('en').padStart(10)} rows   ${baseSeconds.toFixed(2).padStart(6)} s  ` +
        `${Math.round(baseRows / baseSeconds)
          .toLocaleString('en')
          .padStart(8)} rows/s   (the same keyset batches of ${EXPORT_BATCH.toLocaleString('en')}, from this process)`,
    );
    console.log(
      `  ratio ${(perSecond / (baseRows / baseSeconds)).toFixed(2)}x; server RSS ${rssBefore.toFixed(0)} MB before, ` +
        `${rssMax.toFixed(0)} MB at most while streaming (sampled every 25 ms; peak mark ${peakMb.toFixed(0)} MB)`,
    );
    console.log(
      `  target >= ${EXPORT_TARGET_LINES_PER_SECOND.toLocaleString('en')} lines/s: ` +
        `${met(perSecond >= EXPORT_TARGET_LINES_PER_SECOND)} (${Math.round(perSecond).toLocaleString('en')})`,
    );
    console.log(
      `  target RSS growth < ${EXPORT_TARGET_RSS_GROWTH_MB} MB: ${met(growthMb < EXPORT_TARGET_RSS_GROWTH_MB)} ` +
        `(${growthMb.toFixed(1)} MB; peak mark ${(peakMb - rssBefore).toFixed(1)} MB above the RSS before)`,
    );
  } finally {
    await api.stop();
    await client.end();
    await scratch.drop();
  }
}
