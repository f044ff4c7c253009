import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { complete, stalledDownload, type StalledDownload } from '../test/support/stalled-download.js';
import { ADMIN_TOKEN, createBusiness, keyOf } from './intents.js';
import { fillTransactions } from './support/balance-rows.js';
import { createScratchDatabase } from './support/database.js';
import { rssMb, startServer } from './support/processes.js';

/**
 * `npm run bench -- downloads` (issue 47 item 2): what clients that ask for a file and then read
 * nothing cost the server. Ten merchants with BENCH_DOWNLOAD_ROWS (60,000) balance transactions
 * each this month; each opens its four downloads at once (DOWNLOADS_PER_BUSINESS, default 4): the
 * balance export twice, the month's statement as CSV and as an Arabic page, and reads nothing
 * after the headers. The server's RSS and live heap (after a full GC) before and with the 40
 * stalled downloads, whether a 41st is refused, and how long until the server ends them
 * (DOWNLOAD_STALL_SECONDS, default 30).
 */
const ROWS = Number(process.env.BENCH_DOWNLOAD_ROWS ?? 60_000);
const MERCHANTS = 10;
const TARGET_MB = 20;

interface Memory {
  rss: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
}

const mb = (bytes: number) => bytes / 1024 / 1024;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The server's memory after a full GC (bench/support/heap-on-signal.mjs), in MB. */
async function memoryOf(pid: number, reportFile: string): Promise<Memory> {
  rmSync(reportFile, { force: true });
  process.kill(pid, 'SIGUSR2');
  for (let waited = 0; waited < 10_000; waited += 50) {
    try {
      const usage = JSON.parse(readFileSync(reportFile, 'utf8')) as NodeJS.MemoryUsage;
      return {
        rss: mb(usage.rss),
        heapUsed: mb(usage.heapUsed),
        external: mb(usage.external),
        arrayBuffers: mb(usage.arrayBuffers),
      };
    } catch {
      await sleep(50);
    }
  }
  throw new Error('the server wrote no memory report');
}

const openFiles = (pid: number) => readdirSync(`/proc/${pid}/fd`).length;

function line(label: string, memory: Memory): string {
  return (
    `  ${label.padEnd(34)} RSS ${memory.rss.toFixed(1).padStart(7)} MB   heap used ${memory.heapUsed.toFixed(1).padStart(6)} MB   ` +
    `external ${memory.external.toFixed(1).padStart(6)} MB`
  );
}

export async function downloadsSuite(): Promise<void> {
  const scratch = await createScratchDatabase();
  const client = new pg.Client({ connectionString: scratch.url });
  await client.connect();
  const reportDir = mkdtempSync(path.join(os.tmpdir(), 'bench-downloads-'));
  const reportFile = path.join(reportDir, 'memory.json');
  const nodeArgs = process.env.BENCH_NODE_ARGS;
  process.env.BENCH_NODE_ARGS = [
    nodeArgs ?? '',
    '--import',
    pathToFileURL(path.resolve('bench/support/heap-on-signal.mjs')).href,
  ]
    .join(' ')
    .trim();
  const api = await startServer(
    'src/server.ts',
    ['--api'],
    {
      DATABASE_URL: scratch.url,
      ADMIN_TOKEN,
      SEED_DEMO: 'false',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_TEST_PER_MINUTE: '1000000000',
      HEAP_REPORT_FILE: reportFile,
    },
    '/ready',
  );
  if (nodeArgs === undefined) delete process.env.BENCH_NODE_ARGS;
  else process.env.BENCH_NODE_ARGS = nodeArgs;
  try {
    const month = new Date().toISOString().slice(0, 7);
    const keys: string[] = [];
    const started = Date.now();
    console.log(
      `Filling ${ROWS.toLocaleString('en')} balance transactions this month for each of ${MERCHANTS} merchants...`,
    );
    for (let i = 0; i < MERCHANTS; i++) {
      const business = await createBusiness(api.url, `Stalled ${i}`);
      await fillTransactions(client, `d${i}`, business.id, 'test', ROWS, { span: 'current month' });
      keys.push(keyOf(business.keys, 'secret', 'test'));
    }
    await client.query('VACUUM (ANALYZE) balance_transactions');
    console.log(`filled in ${((Date.now() - started) / 1000).toFixed(0)} s (PostgreSQL scratch database)`);

    const base = `/api/v1/dev/balance`;
    const paths = [
      `${base}/transactions/export`,
      `${base}/statements/${month}?format=csv`,
      `${base}/statements/${month}?format=html&lang=ar`,
      `${base}/transactions/export`,
    ];
    // Each file once, read whole: code and caches that any download loads are not counted below.
    let fileBytes = 0;
    for (const filePath of paths.slice(0, 3)) {
      const response = await fetch(`${api.url}${filePath}`, { headers: { authorization: `Bearer ${keys[0]}` } });
      const bytes = (await response.arrayBuffer()).byteLength;
      if (response.status !== 200) throw new Error(`${filePath} answered ${response.status}`);
      console.log(`  ${filePath.split('/').at(-1)!.padEnd(40)} ${(bytes / 1e6).toFixed(1)} MB whole`);
      fileBytes = Math.max(fileBytes, bytes);
    }
    // And 40 small requests at once, each merchant's four: the database pool opens the connections
    // 40 downloads at once use, which stay open whatever the downloads hold.
    await Promise.all(
      keys.flatMap((key) =>
        [0, 1, 2, 3].map(async (i) => {
          const small = i % 2 ? `${base}/transactions/export?type=payout` : `${base}/statements/${month}`;
          const response = await fetch(`${api.url}${small}`, { headers: { authorization: `Bearer ${key}` } });
          await response.arrayBuffer();
        }),
      ),
    );
    await sleep(1_000);
    const before = await memoryOf(api.pid, reportFile);
    const filesBefore = openFiles(api.pid);

    const opened = Date.now();
    const stalled: StalledDownload[] = await Promise.all(
      keys.flatMap((key) =>
        paths.map((filePath) => stalledDownload(api.url, filePath, { authorization: `Bearer ${key}` })),
      ),
    );
    const answered = stalled.filter((download) => download.status === 200).length;
    const extra = await fetch(`${api.url}${paths[0]}`, { headers: { authorization: `Bearer ${keys[0]}` } });
    const extraBody = (await extra.json()) as { error?: { code?: string } };
    // Until every socket is full and every download waits on it: the peak, then what stays.
    await sleep(3_000);
    let rssMax = rssMb(api.pid);
    for (let sample = 0; sample < 20; sample++) {
      await sleep(100);
      rssMax = Math.max(rssMax, rssMb(api.pid));
    }
    await sleep(3_000);
    const held = await memoryOf(api.pid, reportFile);
    if (Date.now() - opened > 25_000) console.log('  ! measured more than 25 s after the downloads opened');

    let endedAt = 0;
    while (!endedAt && Date.now() - opened < 300_000) {
      if (openFiles(api.pid) <= filesBefore) endedAt = Date.now();
      else await sleep(100);
    }
    let cut = 0;
    for (const download of stalled) {
      if (download.status !== 200) download.close();
      else if (!complete(await download.readRest())) cut += 1;
    }
    await sleep(1_000);
    const after = await memoryOf(api.pid, reportFile);

    const growth = held.rss - before.rss;
    const live = held.heapUsed + held.external - (before.heapUsed + before.external);
    console.log(
      `\n40 stalled downloads (10 merchants x the balance export twice, the month's statement as CSV and as an ` +
        `Arabic page; ${ROWS.toLocaleString('en')} rows each, files of up to ${(fileBytes / 1e6).toFixed(0)} MB), ` +
        `target: < ${TARGET_MB} MB more; MALLOC_MMAP_THRESHOLD_ ${process.env.MALLOC_MMAP_THRESHOLD_ ?? 'unset'}`,
    );
    console.log(line('before (after a full GC)', before));
    console.log(line('40 stalled (after a full GC)', held));
    console.log(`  40 stalled, RSS sampled every 100 ms  max ${rssMax.toFixed(1)} MB over 2 s, 3 s after they opened`);
    console.log(line('after the server ended them', after));
    console.log(
      `  growth with 40 stalled: RSS ${growth.toFixed(1)} MB after a full GC (sampled peak ` +
        `${(rssMax - before.rss).toFixed(1)} MB); held live (heap used + external) ${live.toFixed(1)} MB, ` +
        `${((live * 1024) / 40).toFixed(0)} kB a download`,
    );
    console.log(
      `  answered 200: ${answered}/40; a 41st: ${extra.status} ${extraBody.error?.code ?? ''} ` +
        `(Retry-After ${extra.headers.get('retry-after') ?? '-'})`,
    );
    console.log(
      `  ended by the server after ${endedAt ? ((endedAt - opened) / 1000).toFixed(1) : '> 300'} s ` +
        `(DOWNLOAD_STALL_SECONDS 30); ${cut}/40 cut short`,
    );
    console.log(
      `  target < ${TARGET_MB} MB, RSS after a full GC: ${growth < TARGET_MB ? 'met' : 'NOT MET'} (${growth.toFixed(1)} MB)`,
    );
    console.log(
      `  target < ${TARGET_MB} MB, held live: ${live < TARGET_MB ? 'met' : 'NOT MET'} (${live.toFixed(1)} MB)`,
    );
  } finally {
    await api.stop();
    await client.end();
    await scratch.drop();
    rmSync(reportDir, { recursive: true, force: true });
  }
}
