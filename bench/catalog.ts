import { randomInt } from 'node:crypto';
import pg from 'pg';
import { printThroughput } from './report.js';
import { createScratchDatabase } from './support/database.js';
import { runLoad } from './support/load.js';
import { peakMemoryMb, resetPeakMemory, startServer } from './support/processes.js';

const ADMIN_TOKEN = 'bench-admin-token-0123456789';
const PRODUCTS = 100_000;
const WORDS = [
  'mint',
  'tea',
  'coffee',
  'sugar',
  'lemon',
  'honey',
  'bread',
  'rice',
  'date',
  'milk',
  'camel',
  'goat',
  'spice',
  'pepper',
  'salt',
  'oil',
  'olive',
  'fish',
  'lamb',
  'beef',
  'chicken',
  'onion',
  'garlic',
  'tomato',
  'carrot',
  'potato',
  'melon',
  'mango',
  'banana',
  'orange',
  'apple',
  'grape',
  'peanut',
  'almond',
  'cashew',
  'sesame',
  'cumin',
  'ginger',
  'saffron',
  'vanilla',
  'cocoa',
  'butter',
  'cream',
  'cheese',
  'yogurt',
  'flour',
  'corn',
  'millet',
  'sorghum',
  'bean',
];

export async function catalogSuite(): Promise<void> {
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
      RATE_LIMIT_TEST_PER_MINUTE: '1000000000',
    },
    '/ready',
  );
  const created = (await (
    await fetch(`${api.url}/api/v1/admin/businesses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Catalog bench' }),
    })
  ).json()) as {
    data: {
      business: { id: string };
      shop: { id: string };
      keys: { key: string; kind: string; environment: string }[];
    };
  };
  const businessId = created.data.business.id;
  const shopId = created.data.shop.id;
  const key = created.data.keys.find((k) => k.kind === 'secret' && k.environment === 'test')!.key;
  const baseline = await startServer(
    'bench/baseline-server.ts',
    [],
    { DATABASE_URL: scratch.url, BENCH_BUSINESS_ID: businessId },
    '/ready',
  );
  try {
    const wordArray = `ARRAY[${WORDS.map((w) => `'${w}'`).join(',')}]`;
    await client.query(
      `INSERT INTO products (id, shop_id, business_id, environment, external_id, name, search_name, price, status, created_at, updated_at)
       SELECT 'prod_bench' || g, $1, $2, 'test', 'SKU-' || g, initcap(w1) || ' ' || w2 || ' ' || g, w1 || ' ' || w2 || ' ' || g,
         100 + g % 5000, 'ACTIVE', now() - g * interval '1 second', now()
       FROM (SELECT g, (${wordArray})[1 + g % ${WORDS.length}] AS w1, (${wordArray})[1 + (g / ${WORDS.length}) % ${WORDS.length}] AS w2
             FROM generate_series(1, ${PRODUCTS}) g) AS s`,
      [shopId, businessId],
    );
    await client.query('ANALYZE products');
    console.log(
      `PostgreSQL scratch database; ${PRODUCTS.toLocaleString('en')} products; app and baseline in their own processes; ` +
        'baseline: bare Fastify + pg with name ILIKE (no word index), and a parse-and-insert CSV load without checks',
    );

    const pick = () => WORDS[randomInt(WORDS.length)]!;
    const options = {
      concurrency: 8,
      durationMs: Number(process.env.BENCH_DURATION_MS ?? 8000),
      warmupMs: 2000,
      expectStatus: 200,
    };
    const ours = await runLoad(api.url, options, () => ({
      method: 'GET',
      path: `/api/v1/dev/store/products?search=${pick()}`,
      headers: { authorization: `Bearer ${key}` },
    }));
    const bare = await runLoad(baseline.url, options, () => ({
      method: 'GET',
      path: `/bare/products?shop=${shopId}&search=${pick()}`,
    }));
    printThroughput(
      `List with search on ${PRODUCTS.toLocaleString('en')} products, 8 clients (one word, ~4% of the catalog matches)`,
      [{ name: 'search, page 1 + total', ours, baseline: bare }],
    );

    const header = 'externalId,name,price,description,quantity,status,categoryId,costBasis';
    const csv = [
      header,
      ...Array.from(
        { length: 10_000 },
        (_, i) =>
          `IMP-${i},"Imported ${pick()}, ${i}",${100 + i},"A description, with a comma",${i % 40},ACTIVE,import,${50 + i}`,
      ),
    ].join('\n');
    const samples: { name: string; seconds: number; peakMb: number; baseSeconds: number; basePeakMb: number }[] = [];
    for (const round of [1, 2]) {
      resetPeakMemory(api.pid);
      let started = performance.now();
      const response = await fetch(`${api.url}/api/v1/dev/store/products/import`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'text/csv',
          'x-idempotency-key': `bench-import-${round}-${Date.now()}`,
        },
        body: csv,
      });
      const result = (await response.json()) as { data: { created: number; updated: number; unchanged: number } };
      const seconds = (performance.now() - started) / 1000;
      const peakMb = peakMemoryMb(api.pid);
      resetPeakMemory(baseline.pid);
      started = performance.now();
      const bareResponse = await fetch(`${baseline.url}/bare/products/import?shop=${shopId}&round=${round}`, {
        method: 'POST',
        headers: { 'content-type': 'text/csv' },
        body: csv.replaceAll('IMP-', `B${round}-`),
      });
      await bareResponse.json();
      samples.push({
        name: `10,000 rows, ${round === 1 ? 'all new' : 'all unchanged'} (${JSON.stringify(result.data).replace(/"/g, '')})`,
        seconds,
        peakMb,
        baseSeconds: (performance.now() - started) / 1000,
        basePeakMb: peakMemoryMb(baseline.pid),
      });
    }
    console.log('\nCSV import of 10,000 rows (one request; peak resident memory of the server process)');
    for (const sample of samples) {
      console.log(
        `${sample.name.padEnd(74)} ${sample.seconds.toFixed(2)} s  peak ${sample.peakMb.toFixed(0)} MB   ` +
          `baseline ${sample.baseSeconds.toFixed(2)} s  peak ${sample.basePeakMb.toFixed(0)} MB   ratio ${(sample.seconds / sample.baseSeconds).toFixed(2)}x time`,
      );
    }
  } finally {
    await api.stop();
    await baseline.stop();
    await client.end();
    await scratch.drop();
  }
}
