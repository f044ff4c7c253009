import { randomInt } from 'node:crypto';
import pg from 'pg';
import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler } from 'kysely';
import { freeCode } from '../src/modules/intents/repo.js';
import { randomBase62 } from '../src/lib/ids.js';
import { printCpuPerRequest, printLatencies, printThroughput } from './report.js';
import { createScratchDatabase } from './support/database.js';
import { runLoad, timeSamples, type LoadRequest } from './support/load.js';
import { startServer, withCpuPerRequest } from './support/processes.js';
import { inRounds, roundCount, roundDurationMs, roundRatios } from './support/rounds.js';

export const ADMIN_TOKEN = 'bench-admin-token-0123456789';
const CODE_SPACE = 1_000_000;

interface IssuedKey {
  key: string;
  kind: string;
  environment: string;
}

export async function createBusiness(apiUrl: string, name: string): Promise<{ id: string; keys: IssuedKey[] }> {
  const response = await fetch(`${apiUrl}/api/v1/admin/businesses`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name, approveLive: true }),
  });
  const body = (await response.json()) as { data: { business: { id: string }; keys: IssuedKey[] } };
  return { id: body.data.business.id, keys: body.data.keys };
}

export const keyOf = (keys: IssuedKey[], kind: string, environment: string) =>
  keys.find((key) => key.kind === kind && key.environment === environment)!.key;

/** Inserts `count` intents straight into the table, without codes, spread over the last 30 days. */
async function fillIntents(client: pg.Client, businessId: string, environment: string, count: number): Promise<void> {
  await client.query(
    `INSERT INTO payment_intents (reference_number, short_code, business_id, environment, amount_type, amount,
       status, cancel_reason, expires_at, created_at, updated_at)
     SELECT 'PI-9' || lpad(g::text, 15, '0') || $3, 'fill-' || $3 || g, $1, $2, 'FIXED', 100 + g % 1000,
       'CANCELLED', 'expiry', now(), now() - (g % 2592000) * interval '1 second', now()
     FROM generate_series(1, $4::int) g`,
    [businessId, environment, randomBase62(4), count],
  );
}

export async function intentsSuite(): Promise<void> {
  const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 32);
  const durationMs = Number(process.env.BENCH_DURATION_MS ?? 8000);
  const warmupMs = 2000;
  const rounds = roundCount();
  const roundMs = roundDurationMs();
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
  const business = await createBusiness(api.url, 'Bench shop');
  const baseline = await startServer(
    'bench/baseline-server.ts',
    [],
    { DATABASE_URL: scratch.url, BENCH_BUSINESS_ID: business.id },
    '/ready',
  );
  console.log(
    `PostgreSQL scratch database; app and baseline each in their own process; ${concurrency} clients, ` +
      `${warmupMs / 1000} s warm-up then ${durationMs / 1000} s per figure; create and get in ${rounds} rounds of ` +
      `${roundMs / 1000} s each side, in turn; LOG_LEVEL=warn for the app (the baseline has no logger)`,
  );

  try {
    const live = `Bearer ${keyOf(business.keys, 'secret', 'live')}`;
    const livePublishable = `Bearer ${keyOf(business.keys, 'publishable', 'live')}`;
    const body = JSON.stringify({ amount: 12_500, label: 'Bench order', metadata: { orderId: '42' } });
    const load = (url: string, status: number, next: (c: number, n: number) => LoadRequest, clients = concurrency) =>
      runLoad(url, { concurrency: clients, durationMs, warmupMs, expectStatus: status }, next);
    const round = (url: string, status: number, next: (c: number, n: number) => LoadRequest) =>
      runLoad(url, { concurrency, durationMs: roundMs, warmupMs, expectStatus: status }, next);

    const create = await inRounds(rounds, {
      baseline: () =>
        withCpuPerRequest([baseline.pid], () =>
          round(baseline.url, 201, () => ({ method: 'POST', path: '/bare/intents', body })),
        ),
      ours: () => {
        // Each round's requests number from 0 again: a key of its own keeps them creates, not replays.
        const batch = randomBase62(6);
        return withCpuPerRequest([api.pid], () =>
          round(api.url, 201, (_c, n) => ({
            method: 'POST',
            path: '/api/v1/dev/intents',
            headers: { authorization: live, 'x-idempotency-key': `bench-${batch}-${n}` },
            body,
          })),
        );
      },
    });

    const { rows } = await client.query<{ reference_number: string }>(
      `SELECT reference_number FROM payment_intents WHERE business_id = $1 AND payment_code IS NOT NULL LIMIT 5000`,
      [business.id],
    );
    const refs = rows.map((row) => row.reference_number);
    const pick = () => refs[randomInt(refs.length)]!;
    const get = await inRounds(rounds, {
      baseline: () =>
        withCpuPerRequest([baseline.pid], () =>
          round(baseline.url, 200, () => ({ method: 'GET', path: `/bare/intents/${pick()}` })),
        ),
      ours: () =>
        withCpuPerRequest([api.pid], () =>
          round(api.url, 200, () => ({
            method: 'GET',
            path: `/api/v1/dev/intents/${pick()}`,
            headers: { authorization: livePublishable },
          })),
        ),
    });
    const baseList = await load(baseline.url, 200, () => ({
      method: 'GET',
      path: `/bare/intents?business=${business.id}`,
    }));
    const ourList = await load(api.url, 200, () => ({
      method: 'GET',
      path: '/api/v1/dev/intents',
      headers: { authorization: livePublishable },
    }));
    const owned = Number(
      (await client.query('SELECT count(*) FROM payment_intents WHERE business_id = $1', [business.id])).rows[0].count,
    );
    printThroughput(`Throughput, ${concurrency} concurrent clients (baseline: bare Fastify + pg, same database)`, [
      // Issue 18's targets on PostgreSQL: the create was one statement, 1.1-1.4x, before it became
      // an ordinary handler in a transaction; the get was 0.74-0.87x.
      {
        name: 'create (3-insert tx)',
        ours: create.ours.result,
        baseline: create.baseline.result,
        ratios: roundRatios(create.ours, create.baseline),
        target: 1.2,
      },
      {
        name: 'get by reference',
        ours: get.ours.result,
        baseline: get.baseline.result,
        ratios: roundRatios(get.ours, get.baseline),
        target: 1.0,
      },
      { name: `list, page 1 (${owned} intents)`, ours: ourList, baseline: baseList },
    ]);
    printCpuPerRequest('CPU per request', [
      { name: 'create', cpu: create.ours.cpu },
      { name: 'create, baseline', cpu: create.baseline.cpu },
      { name: 'get by reference', cpu: get.ours.cpu },
      { name: 'get, baseline', cpu: get.baseline.cpu },
    ]);

    // Code allocation: the allocation query alone, with the code space partly taken, beside a
    // unique-index point lookup on the same table (the cheapest read there is). Each environment's
    // codes are filled the way its allocator places them: `test` by the previous walk-only
    // allocator (random start, first free code at or after it: runs of taken codes build up),
    // `live` by the current one (32 random probes, then the walk).
    const filler = await createBusiness(api.url, 'Code filler');
    // The service's own allocation SQL, compiled once and run as a named prepared statement.
    const compiler = new Kysely<object>({
      dialect: {
        createAdapter: () => new PostgresAdapter(),
        createDriver: () => new DummyDriver(),
        createIntrospector: (db) => new PostgresIntrospector(db),
        createQueryCompiler: () => new PostgresQueryCompiler(),
      },
    });
    const CANDIDATES = 32;
    const randomCodes = (count: number) => Array.from({ length: count }, () => randomInt(CODE_SPACE));
    const walkOnly = (start: number) => freeCode([start], 'test', CODE_SPACE).compile(compiler);
    const probing = (codes: number[]) => freeCode(codes, 'live', CODE_SPACE).compile(compiler);
    const walkStatement = { name: 'bench_allocate_walk', text: walkOnly(0).sql };
    const probeStatement = { name: 'bench_allocate_probe', text: probing(randomCodes(CANDIDATES)).sql };
    const lookup = { name: 'bench_lookup', text: 'SELECT id FROM payment_intents WHERE reference_number = $1' };
    const takenBy = { walk: new Uint8Array(CODE_SPACE), probe: new Uint8Array(CODE_SPACE) };
    const takenCount = { walk: 0, probe: 0 };
    const nextFree = (taken: Uint8Array, start: number) => {
      let code = start;
      while (taken[code]) code = (code + 1) % CODE_SPACE;
      return code;
    };
    const place = (policy: 'walk' | 'probe', count: number): number[] => {
      const taken = takenBy[policy];
      const codes: number[] = [];
      for (let i = 0; i < count; i++) {
        const tries = policy === 'walk' ? [randomInt(CODE_SPACE)] : randomCodes(CANDIDATES);
        const code = tries.find((c) => !taken[c]) ?? nextFree(taken, tries[0]!);
        taken[code] = 1;
        takenCount[policy] += 1;
        codes.push(code);
      }
      return codes;
    };
    const insertCodes = async (environment: string, codes: number[]) => {
      for (let i = 0; i < codes.length; i += 100_000) {
        await client.query(
          `INSERT INTO payment_intents (reference_number, short_code, business_id, environment, amount_type, amount,
             status, payment_code, expires_at, created_at, updated_at)
           SELECT 'PI-8' || $2 || lpad(c::text, 14, '0'), 'fill-c' || $2 || c, $1, $2, 'FIXED', 100, 'PENDING', c,
             now() + interval '1 day', now(), now()
           FROM unnest($3::int[]) AS c`,
          [filler.id, environment, codes.slice(i, i + 100_000)],
        );
      }
    };
    // Codes the create load above took are taken for the fill too.
    for (const [policy, environment] of [
      ['walk', 'test'],
      ['probe', 'live'],
    ] as const) {
      const { rows: inUse } = await client.query<{ payment_code: number }>(
        'SELECT payment_code FROM payment_intents WHERE environment = $1 AND payment_code IS NOT NULL',
        [environment],
      );
      for (const row of inUse) takenBy[policy][row.payment_code] = 1;
      takenCount[policy] = inUse.length;
    }
    const allocationLines = [];
    for (const target of [0, 500_000, 900_000, 990_000]) {
      if (target > 0) {
        await insertCodes('test', place('walk', target - takenCount.walk));
        await insertCodes('live', place('probe', target - takenCount.probe));
        await client.query('VACUUM ANALYZE payment_intents');
      }
      const walkSamples: number[] = [];
      const probeSamples: number[] = [];
      const baseSamples: number[] = [];
      for (let i = 0; i < 3000; i++) {
        let started = process.hrtime.bigint();
        await client.query({ ...probeStatement, values: [...probing(randomCodes(CANDIDATES)).parameters] });
        probeSamples.push(Number(process.hrtime.bigint() - started) / 1e6);
        started = process.hrtime.bigint();
        await client.query({ ...walkStatement, values: [...walkOnly(randomInt(CODE_SPACE)).parameters] });
        walkSamples.push(Number(process.hrtime.bigint() - started) / 1e6);
        started = process.hrtime.bigint();
        await client.query({ ...lookup, values: [pick()] });
        baseSamples.push(Number(process.hrtime.bigint() - started) / 1e6);
      }
      const base = timeSamples(baseSamples.slice(500));
      for (const [name, samples, inUse] of [
        ['probes+walk', probeSamples, takenCount.probe],
        ['walk (before)', walkSamples, takenCount.walk],
      ] as const) {
        const ours = timeSamples(samples.slice(500));
        allocationLines.push({
          name: `${name}, ${inUse.toLocaleString('en')} taken`,
          p50Ms: ours.p50Ms,
          p99Ms: ours.p99Ms,
          baselineP50Ms: base.p50Ms,
          baselineP99Ms: base.p99Ms,
        });
      }
    }
    printLatencies(
      'Code allocation of 1,000,000 codes (one client, 2,500 samples each, taken codes placed by each allocator)',
      'point lookup',
      allocationLines,
    );
    // The code fills (two environments of up to 990,000) leave, so the list figures below read the
    // table they always have: a million intents, most of them one merchant's.
    await client.query('DELETE FROM payment_intents WHERE business_id = $1', [filler.id]);
    await client.query('VACUUM ANALYZE payment_intents');

    // List with a million intents in the table: a merchant owning most of them (exact totals
    // count them all), and the bench merchant among them.
    const big = await createBusiness(api.url, 'Big merchant');
    const inTable = Number((await client.query('SELECT count(*) FROM payment_intents')).rows[0].count);
    await fillIntents(client, big.id, 'live', Math.max(0, 1_000_000 - inTable));
    await client.query('ANALYZE payment_intents');
    const total = Number((await client.query('SELECT count(*) FROM payment_intents')).rows[0].count);
    const bigOwned = Number(
      (await client.query('SELECT count(*) FROM payment_intents WHERE business_id = $1', [big.id])).rows[0].count,
    );
    const bigKey = `Bearer ${keyOf(big.keys, 'publishable', 'live')}`;
    const listClients = 4;
    const bigList = await load(
      api.url,
      200,
      () => ({ method: 'GET', path: '/api/v1/dev/intents', headers: { authorization: bigKey } }),
      listClients,
    );
    const bigBase = await load(
      baseline.url,
      200,
      () => ({ method: 'GET', path: `/bare/intents?business=${big.id}` }),
      listClients,
    );
    const smallList = await load(
      api.url,
      200,
      () => ({
        method: 'GET',
        path: '/api/v1/dev/intents?status=PENDING&limit=100',
        headers: { authorization: livePublishable },
      }),
      listClients,
    );
    const smallBase = await load(
      baseline.url,
      200,
      () => ({ method: 'GET', path: `/bare/intents?business=${business.id}&status=PENDING&limit=100` }),
      listClients,
    );
    printThroughput(`List with ${total.toLocaleString('en')} intents in the table, ${listClients} clients`, [
      { name: `page 1 of ${bigOwned.toLocaleString('en')}`, ours: bigList, baseline: bigBase },
      { name: `PENDING, limit 100, of ${owned}`, ours: smallList, baseline: smallBase },
    ]);
  } finally {
    await api.stop();
    await baseline.stop();
    await client.end();
    await scratch.drop();
  }
}
