import pg from 'pg';
import { createBusiness, keyOf, ADMIN_TOKEN } from './intents.js';
import { printLatencies } from './report.js';
import { createScratchDatabase } from './support/database.js';
import { timeSamples } from './support/load.js';
import { startServer } from './support/processes.js';

/**
 * `npm run bench -- lists` (issue 14, item 1): the intents, orders, products and webhook
 * deliveries lists of one merchant that owns BENCH_LIST_ROWS (1,000,000) rows of each, asked one
 * request at a time through the API: page 1 without a filter and with each status, a 30-day date
 * range, and a deep page. Every figure is beside a GET of one intent by reference through the same
 * server in the same loop (the cheapest authenticated read), and the intents' page 1 beside the
 * statement the list ran before the kept counts (count every row, then the page).
 */
const ROWS = Number(process.env.BENCH_LIST_ROWS ?? 1_000_000);
const SAMPLES = Number(process.env.BENCH_LIST_SAMPLES ?? 100);
const WARMUP = 10;
const DAYS = 365;

/**
 * Copies the seed row `seedWhere` of `table` `count` times, with `overrides` (column -> SQL over
 * the copy's number `g`) for the columns that must differ. Every other column is copied as is,
 * so the copies meet the same constraints as the row the API wrote.
 */
async function cloneRows(
  client: pg.Client,
  table: string,
  seedWhere: string,
  count: number,
  overrides: Record<string, string>,
): Promise<void> {
  const columns = (
    await client.query<{ column_name: string }>(
      `SELECT column_name FROM information_schema.columns
       WHERE table_name = $1 AND is_generated = 'NEVER' AND is_identity = 'NO' ORDER BY ordinal_position`,
      [table],
    )
  ).rows.map((row) => row.column_name);
  const values = columns.map((column) => overrides[column] ?? `seed.${column}`);
  // In slices, so one statement's transition table (the counting trigger's input) stays bounded.
  const slice = 250_000;
  for (let first = 1; first <= count; first += slice) {
    const last = Math.min(count, first + slice - 1);
    await client.query(
      `INSERT INTO ${table} (${columns.join(', ')})
       SELECT ${values.join(', ')} FROM (SELECT * FROM ${table} WHERE ${seedWhere}) AS seed
       CROSS JOIN generate_series(${first}, ${last}) AS g`,
    );
  }
  await client.query(`ANALYZE ${table}`);
}

/** Spread over DAYS days back from now, newest first as `g` grows. */
const CREATED_AT = `now() - ((g::bigint * ${DAYS * 86_400}) / ${ROWS}) * interval '1 second'`;

interface ListCase {
  name: string;
  path: string;
}

export async function listsSuite(): Promise<void> {
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
      WEBHOOK_ALLOW_PRIVATE: 'true',
      RATE_LIMIT_LIVE_PER_MINUTE: '1000000000',
      RATE_LIMIT_TEST_PER_MINUTE: '1000000000',
    },
    '/ready',
  );
  try {
    const business = await createBusiness(api.url, 'Million rows');
    const secret = `Bearer ${keyOf(business.keys, 'secret', 'test')}`;
    let sent = 0;
    const call = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${api.url}/api/v1/dev${path}`, {
        method,
        headers: {
          authorization: secret,
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
          ...(method !== 'GET' ? { 'x-idempotency-key': `bench-lists-${sent++}-${Date.now()}` } : {}),
        },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      const answer = (await response.json()) as { data: Record<string, unknown> & { referenceNumber?: string } };
      if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${JSON.stringify(answer)}`);
      return answer.data;
    };

    // Seeds written by the API, one per status the copies take.
    await call('POST', '/webhooks/endpoints', { url: 'http://127.0.0.1:9/hook', events: ['payment.created'] });
    const intent = await call('POST', '/intents', { amount: 1500 });
    const product = await call('POST', '/store/products', { name: 'Tea', price: 1000, status: 'ACTIVE' });
    const order = await call('POST', '/store/orders/simulate', {
      items: [{ productId: product.id, quantity: 1 }],
      customerName: 'Aicha',
    });
    const started = Date.now();
    console.log(`Filling ${ROWS.toLocaleString('en')} rows each of intents, orders, products and deliveries...`);
    await cloneRows(client, 'payment_intents', `reference_number = '${intent.referenceNumber}'`, ROWS, {
      reference_number: `'PI-7' || lpad(g::text, 15, '0')`,
      short_code: `'l' || g`,
      payment_code: 'NULL',
      created_at: CREATED_AT,
      // 60% CANCELLED, 25% PENDING, 15% FAILED (never paid: paid rows need payments and
      // postings that copies would not have; PAID is asked for below as an empty status).
      status: `CASE WHEN g % 20 < 12 THEN 'CANCELLED' WHEN g % 20 < 17 THEN 'PENDING' ELSE 'FAILED' END`,
      cancel_reason: `CASE WHEN g % 20 < 12 THEN 'expiry' END`,
    });
    await cloneRows(client, 'orders', `reference_number = '${String(order.referenceNumber)}'`, ROWS, {
      reference_number: `'ORD-L' || lpad(g::text, 12, '0')`,
      customer_ref: `'cr_l' || g`,
      created_at: CREATED_AT,
      status: `CASE WHEN g % 10 < 6 THEN 'NEW' WHEN g % 10 < 9 THEN 'PREPARING' ELSE 'READY' END`,
    });
    await cloneRows(client, 'products', `id = '${String(product.id)}'`, ROWS, {
      id: `'prd_l' || g`,
      name: `'Item ' || g`,
      search_name: `'item ' || g`,
      external_id: 'NULL',
      created_at: CREATED_AT,
      status: `CASE WHEN g % 10 < 8 THEN 'ACTIVE' ELSE 'DISABLED' END`,
    });
    const delivery = await client.query<{ id: string }>(
      `SELECT id FROM webhook_deliveries WHERE business_id = $1 AND event = 'payment.created'`,
      [business.id],
    );
    await cloneRows(client, 'webhook_deliveries', `id = '${delivery.rows[0]!.id}'`, ROWS, {
      id: `'whd_l' || g`,
      created_at: CREATED_AT,
      status: `CASE WHEN g % 10 < 8 THEN 'SUCCEEDED' WHEN g % 10 < 9 THEN 'DEAD' ELSE 'PENDING' END`,
      dead_reason: `CASE WHEN g % 10 = 8 THEN 'MAX_ATTEMPTS' END`,
      next_attempt_at: "now() + interval '1 year'",
    });
    console.log(`filled in ${((Date.now() - started) / 1000).toFixed(0)} s (PostgreSQL scratch database)`);

    const month = (from: number) => {
      const day = (offset: number) => new Date(Date.now() - offset * 86_400_000).toISOString();
      return `from=${day(from)}&to=${day(from - 30)}`;
    };
    const deep = `page=${Math.floor(ROWS / 2 / 100)}&limit=100`;
    const cases: ListCase[] = [
      { name: 'intents, page 1', path: '/intents' },
      ...['PENDING', 'CANCELLED', 'FAILED', 'PAID'].map((status) => ({
        name: `intents, ${status}`,
        path: `/intents?status=${status}`,
      })),
      { name: 'intents, 30 days', path: `/intents?${month(200)}` },
      { name: 'intents, PENDING, 30 days', path: `/intents?status=PENDING&${month(200)}` },
      { name: `intents, page ${deep.split('&')[0]!.slice(5)} of 100`, path: `/intents?${deep}` },
      { name: 'orders, page 1', path: '/store/orders' },
      ...['NEW', 'PREPARING', 'READY', 'DELIVERED'].map((status) => ({
        name: `orders, ${status}`,
        path: `/store/orders?status=${status}`,
      })),
      { name: 'orders, 30 days', path: `/store/orders?${month(200)}` },
      { name: 'orders, deep page', path: `/store/orders?${deep}` },
      { name: 'products, page 1', path: '/store/products' },
      { name: 'products, ACTIVE', path: '/store/products?status=ACTIVE' },
      { name: 'products, DISABLED', path: '/store/products?status=DISABLED' },
      { name: 'products, oldest first', path: '/store/products?sortBy=oldest' },
      { name: 'products, deep page', path: `/store/products?${deep}` },
      { name: 'deliveries, page 1', path: '/webhooks/events' },
      ...['SUCCEEDED', 'DEAD', 'PENDING'].map((status) => ({
        name: `deliveries, ${status}`,
        path: `/webhooks/events?status=${status}`,
      })),
      { name: 'deliveries, 30 days', path: `/webhooks/events?${month(200)}` },
      { name: 'deliveries, deep page', path: `/webhooks/events?${deep}` },
    ];

    const timedGet = async (path: string): Promise<number> => {
      const begun = process.hrtime.bigint();
      const response = await fetch(`${api.url}/api/v1/dev${path}`, { headers: { authorization: secret } });
      const text = await response.text();
      const took = Number(process.hrtime.bigint() - begun) / 1e6;
      if (response.status !== 200) throw new Error(`GET ${path} answered ${response.status}: ${text.slice(0, 300)}`);
      return took;
    };
    const lines = [];
    for (const item of cases) {
      const samples: number[] = [];
      const baseSamples: number[] = [];
      for (let i = 0; i < WARMUP + SAMPLES; i++) {
        const ours = await timedGet(item.path);
        const base = await timedGet(`/intents/${intent.referenceNumber}`);
        if (i >= WARMUP) {
          samples.push(ours);
          baseSamples.push(base);
        }
      }
      const ours = timeSamples(samples);
      const base = timeSamples(baseSamples);
      lines.push({ name: item.name, ...ours, baselineP50Ms: base.p50Ms, baselineP99Ms: base.p99Ms });
    }

    // The list's statement before the kept counts: count every row, then the page.
    const before: number[] = [];
    for (let i = 0; i < 12; i++) {
      const begun = process.hrtime.bigint();
      await client.query(
        `SELECT (SELECT count(*) FROM payment_intents WHERE business_id = $1 AND environment = 'test') AS total,
           (SELECT array_agg(reference_number) FROM (SELECT reference_number FROM payment_intents
             WHERE business_id = $1 AND environment = 'test' ORDER BY created_at DESC, reference_number DESC LIMIT 20) p)`,
        [business.id],
      );
      if (i >= 2) before.push(Number(process.hrtime.bigint() - begun) / 1e6);
    }
    const counted = timeSamples(before);
    lines.push({
      name: 'intents, page 1, counting rows (before)',
      ...counted,
      baselineP50Ms: Number.NaN,
      baselineP99Ms: Number.NaN,
    });
    printLatencies(
      `Lists of a merchant with ${ROWS.toLocaleString('en')} rows each, one client, ${SAMPLES} requests per line ` +
        '(targets: page 1 and status filters p99 <= 20 ms, date ranges p99 <= 100 ms)',
      'GET one intent',
      lines,
    );
  } finally {
    await api.stop();
    await client.end();
    await scratch.drop();
  }
}
