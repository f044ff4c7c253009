/**
 * `npm run bench -- embedded`: the API on its embedded default (PGlite), intent create and get by
 * reference, beside a bare Fastify + PGlite server doing the same SQL the plain way; and the API
 * process's memory under that load.
 */
import { randomInt } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBase62 } from '../src/lib/ids.js';
import { ADMIN_TOKEN, createBusiness, keyOf } from './intents.js';
import { printThroughput } from './report.js';
import { runLoad, type LoadRequest } from './support/load.js';
import { peakMemoryMb, resetPeakMemory, startServer } from './support/processes.js';
import { inRounds, roundCount, roundDurationMs, roundRatios } from './support/rounds.js';

export async function embeddedSuite(): Promise<void> {
  const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 16);
  const warmupMs = 2000;
  const rounds = roundCount();
  const durationMs = roundDurationMs();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'devapi-bench-'));
  const api = await startServer(
    'src/server.ts',
    ['--api'],
    {
      DATA_DIR: path.join(dir, 'api'),
      ADMIN_TOKEN,
      SEED_DEMO: 'false',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_LIVE_PER_MINUTE: '1000000000',
      RATE_LIMIT_TEST_PER_MINUTE: '1000000000',
    },
    '/ready',
  );
  const baseline = await startServer('bench/baseline-pglite.ts', [], { DATA_DIR: path.join(dir, 'bare') }, '/ready');
  console.log(
    `PGlite (embedded), app and baseline each in their own process with their own data directory; ` +
      `${concurrency} clients; ${rounds} rounds, each side in turn, of ${warmupMs / 1000} s warm-up then ${durationMs / 1000} s`,
  );
  try {
    const business = await createBusiness(api.url, 'Embedded bench shop');
    const live = `Bearer ${keyOf(business.keys, 'secret', 'live')}`;
    const body = JSON.stringify({ amount: 12_500, label: 'Bench order', metadata: { orderId: '42' } });
    const load = (url: string, status: number, next: (c: number, n: number) => LoadRequest) =>
      runLoad(url, { concurrency, durationMs, warmupMs, expectStatus: status }, next);

    resetPeakMemory(baseline.pid);
    resetPeakMemory(api.pid);
    const create = await inRounds(rounds, {
      baseline: async () => ({
        result: await load(baseline.url, 201, () => ({ method: 'POST', path: '/bare/intents', body })),
        cpu: undefined,
      }),
      ours: async () => {
        // Each round's requests number from 0 again: a key of its own keeps them creates, not replays.
        const batch = randomBase62(6);
        return {
          result: await load(api.url, 201, (_c, n) => ({
            method: 'POST',
            path: '/api/v1/dev/intents',
            headers: { authorization: live, 'x-idempotency-key': `bench-${batch}-${n}` },
            body,
          })),
          cpu: undefined,
        };
      },
    });
    const list = await fetch(`${api.url}/api/v1/dev/intents?limit=100`, { headers: { authorization: live } });
    const ours = ((await list.json()) as { data: { items: { referenceNumber: string }[] } }).data.items.map(
      (item) => item.referenceNumber,
    );
    const bare = (await (await fetch(`${baseline.url}/bare/references`)).json()) as string[];
    const get = await inRounds(rounds, {
      baseline: async () => ({
        result: await load(baseline.url, 200, () => ({
          method: 'GET',
          path: `/bare/intents/${bare[randomInt(bare.length)]}`,
        })),
        cpu: undefined,
      }),
      ours: async () => ({
        result: await load(api.url, 200, () => ({
          method: 'GET',
          path: `/api/v1/dev/intents/${ours[randomInt(ours.length)]}`,
          headers: { authorization: live },
        })),
        cpu: undefined,
      }),
    });
    const peakMb = peakMemoryMb(api.pid);
    const basePeakMb = peakMemoryMb(baseline.pid);
    printThroughput('Embedded (PGlite), baseline: bare Fastify + PGlite, same SQL', [
      {
        name: 'create (3-insert tx)',
        ours: create.ours.result,
        baseline: create.baseline.result,
        ratios: roundRatios(create.ours, create.baseline),
        target: 0.8,
      },
      {
        name: 'get by reference',
        ours: get.ours.result,
        baseline: get.baseline.result,
        ratios: roundRatios(get.ours, get.baseline),
        target: 0.8,
      },
    ]);
    console.log(
      `\nAPI process peak memory under this load: ${peakMb.toFixed(0)} MB (target <= 350 MB); ` +
        `bare Fastify + PGlite baseline: ${basePeakMb.toFixed(0)} MB`,
    );
  } finally {
    await api.stop();
    await baseline.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
