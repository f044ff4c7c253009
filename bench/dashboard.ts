/**
 * `npm run bench -- dashboard`: the merchant dashboard's pages for a business with 100,000 payment
 * intents (mixed statuses over 30 days, some refunded), signed in as its owner. Each page is asked
 * for one request at a time, alternating with the same server's sign-in page (a page with no query
 * behind it), so every row has a baseline measured under the same load. Target: p95 < 100 ms.
 *
 * Runs on PGlite (the embedded default) unless BENCH_DASHBOARD_DATABASE=postgres, which uses a
 * scratch PostgreSQL database (BENCH_DATABASE_URL) as the other suites do.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { openDatabase } from '../src/db/connect.js';
import { randomBase62 } from '../src/lib/ids.js';
import { ADMIN_TOKEN, createBusiness } from './intents.js';
import { createScratchDatabase } from './support/database.js';
import { startServer, type ServerProcess } from './support/processes.js';

const INTENTS = Number(process.env.BENCH_DASHBOARD_INTENTS ?? 100_000);
const REQUESTS = Number(process.env.BENCH_DASHBOARD_REQUESTS ?? 50);
const TARGET_P95_MS = 100;
const PASSWORD = 'bench dashboard password';

type Run = (text: string, params?: unknown[]) => Promise<{ rows: Record<string, unknown>[] }>;

/**
 * 100,000 intents of the session's environment (test) and their events, newest first over 30 days: 50% PAID (every
 * tenth of them partly refunded), 10% REFUNDED, 15% CANCELLED, 5% FAILED, 20% PENDING; every
 * fifth carries an orderId in its metadata.
 */
async function fillIntents(
  run: Run,
  businessId: string,
  count: number,
): Promise<{ reference: string; refunded: string }> {
  const tag = randomBase62(4);
  await run(
    `INSERT INTO payment_intents (reference_number, short_code, business_id, environment, amount_type, amount,
       label, metadata, status, expires_at, amount_paid, paid_at, payment_method, payer_phone,
       total_amount_refunded, cancel_reason, created_at, updated_at)
     SELECT 'PI-9' || lpad(g::text, 15, '0') || $2, 'dash-' || $2 || g, $1, 'test', 'FIXED', amount,
       'Order ' || g,
       CASE WHEN g % 5 = 0 THEN jsonb_build_object('orderId', 'ORD-' || g) ELSE '{}'::jsonb END,
       status, created_at + interval '1 day',
       CASE WHEN status IN ('PAID', 'REFUNDED') THEN amount END,
       CASE WHEN status IN ('PAID', 'REFUNDED') THEN created_at + interval '2 minutes' END,
       CASE WHEN status IN ('PAID', 'REFUNDED') THEN 'WALLET' END,
       CASE WHEN status IN ('PAID', 'REFUNDED') THEN '2224' || lpad((g % 10000)::text, 4, '0') END,
       CASE WHEN status = 'REFUNDED' THEN amount WHEN status = 'PAID' AND g % 100 = 1 THEN amount / 2 ELSE 0 END,
       CASE WHEN status = 'CANCELLED' THEN 'expiry' END, created_at, created_at
     FROM (
       SELECT g, 100 + (g * 37) % 50000 AS amount,
         now() - ((g::bigint * 2592000) / $3) * interval '1 second' AS created_at,
         CASE WHEN g % 20 < 10 THEN 'PAID' WHEN g % 20 < 12 THEN 'REFUNDED' WHEN g % 20 < 15 THEN 'CANCELLED'
              WHEN g % 20 < 16 THEN 'FAILED' ELSE 'PENDING' END AS status
       FROM generate_series(1, $3::int) g
     ) AS s`,
    [businessId, tag, count],
  );
  await run(
    `INSERT INTO refunds (id, intent_id, amount, reason, status, provider_ttc, tof, tte, created_at)
     SELECT 're_bench' || id, id, total_amount_refunded, 'bench', 'SUCCEEDED', 0, 0, 0, paid_at + interval '1 hour'
     FROM payment_intents WHERE business_id = $1 AND total_amount_refunded > 0`,
    [businessId],
  );
  // Their events, oldest first: payment.created for each, payment.confirmed for the paid ones.
  await run(
    `INSERT INTO events (id, business_id, environment, event, subject, body, created_at, sequence)
     SELECT 'evt_bench' || i.id || '_' || n, i.business_id, 'test', e.event, i.reference_number,
       json_build_object('event', e.event, 'reference_number', i.reference_number)::text, e.at, n
     FROM payment_intents i
     CROSS JOIN LATERAL (VALUES (1, 'payment.created', i.created_at), (2, 'payment.confirmed', i.paid_at))
       AS e (n, event, at)
     WHERE i.business_id = $1 AND e.at IS NOT NULL
     ORDER BY e.at`,
    [businessId],
  );
  await run('ANALYZE payment_intents');
  await run('ANALYZE refunds');
  await run('ANALYZE events');
  const pick = async (where: string) =>
    String(
      (
        await run(
          `SELECT reference_number FROM payment_intents WHERE business_id = $1 AND ${where}
           ORDER BY created_at DESC OFFSET 60 LIMIT 1`,
          [businessId],
        )
      ).rows[0]!.reference_number,
    );
  return { reference: await pick('true'), refunded: await pick(`status = 'REFUNDED'`) };
}

/** Signs in through the form, as a browser without JavaScript would, and returns its cookie header. */
async function signIn(baseUrl: string, email: string): Promise<string> {
  const cookies = new Map<string, string>();
  const remember = (response: Response) => {
    for (const line of response.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const at = pair.indexOf('=');
      cookies.set(pair.slice(0, at), pair.slice(at + 1));
    }
  };
  const header = () => [...cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  const page = await fetch(`${baseUrl}/dashboard/login`);
  remember(page);
  const csrf = /name="_csrf" value="([^"]*)"/.exec(await page.text())?.[1];
  if (!csrf) throw new Error('no _csrf field on the sign-in page');
  const answer = await fetch(`${baseUrl}/dashboard/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: header() },
    body: new URLSearchParams({ _csrf: csrf, email, password: PASSWORD }).toString(),
  });
  remember(answer);
  if (answer.status !== 303)
    throw new Error(`sign-in answered ${answer.status}: ${(await answer.text()).slice(0, 300)}`);
  return header();
}

async function timed(url: string, cookie?: string): Promise<number> {
  const started = process.hrtime.bigint();
  const response = await fetch(url, { redirect: 'manual', ...(cookie ? { headers: { cookie } } : {}) });
  const body = await response.text();
  const tookMs = Number(process.hrtime.bigint() - started) / 1e6;
  if (response.status !== 200) throw new Error(`${url} answered ${response.status}: ${body.slice(0, 300)}`);
  return tookMs;
}

function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

export async function dashboardSuite(): Promise<void> {
  const onPostgres = process.env.BENCH_DASHBOARD_DATABASE === 'postgres';
  const dir = mkdtempSync(path.join(os.tmpdir(), 'devapi-bench-dashboard-'));
  const scratch = onPostgres ? await createScratchDatabase() : undefined;
  const serverEnv = {
    ...(scratch ? { DATABASE_URL: scratch.url } : { DATA_DIR: dir }),
    ADMIN_TOKEN,
    SEED_DEMO: 'false',
    LOG_LEVEL: 'warn',
  };
  const start = () => startServer('src/server.ts', ['--api'], serverEnv, '/ready');
  let api: ServerProcess | undefined = await start();
  try {
    const business = await createBusiness(api.url, 'Dashboard bench');
    const email = `owner-${randomBase62(6).toLowerCase()}@example.com`;
    const created = await fetch(`${api.url}/api/v1/admin/users`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ businessId: business.id, email, password: PASSWORD, role: 'owner' }),
    });
    if (created.status !== 201) throw new Error(`user create answered ${created.status}: ${await created.text()}`);

    let filled = performance.now();
    let picked: { reference: string; refunded: string };
    if (scratch) {
      const client = new pg.Client({ connectionString: scratch.url });
      await client.connect();
      picked = await fillIntents((text, params) => client.query(text, params), business.id, INTENTS);
      await client.end();
    } else {
      // PGlite has one owner: the server stops while the fill writes into its data directory.
      await api.stop();
      api = undefined;
      const database = await openDatabase({ kind: 'pglite', dataDir: path.join(dir, 'pglite') });
      picked = await fillIntents((text, params) => database.pglite!.query(text, params), business.id, INTENTS);
      await database.close();
      api = await start();
    }
    filled = (performance.now() - filled) / 1000;

    const cookie = await signIn(api.url, email);
    const { reference, refunded } = picked;
    console.log(
      `${onPostgres ? 'PostgreSQL scratch database' : 'PGlite (embedded) data directory'}; ` +
        `${INTENTS.toLocaleString('en')} intents filled in ${filled.toFixed(1)} s; one client, ${REQUESTS} requests per page ` +
        `(after 5 warm-up), each followed by one to the baseline: the same server's sign-in page (no query)`,
    );
    const pages: [string, string][] = [
      ['home', '/dashboard'],
      ['payments, page 1', '/dashboard/payments'],
      ['payments, status=PAID', '/dashboard/payments?status=PAID'],
      ['payments, status=FAILED', '/dashboard/payments?status=FAILED'],
      ['payments, search by reference', `/dashboard/payments?q=${encodeURIComponent(reference)}`],
      ['payment page (refunded)', `/dashboard/payments/${encodeURIComponent(refunded)}`],
      ['developers (API keys)', '/dashboard/developers/keys'],
      ['deliveries log', '/dashboard/developers/deliveries'],
      ['event log (160k events)', '/dashboard/developers/events'],
      ['orders list', '/dashboard/orders'],
      ['products list', '/dashboard/products'],
      ['settings', '/dashboard/settings'],
    ];
    const widths = [32, 9, 9, 12, 9, 14];
    const row = (cells: string[]) =>
      cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ');
    console.log(`\nDashboard pages, ${INTENTS.toLocaleString('en')} intents, signed in as the owner`);
    console.log(row(['', 'p50 ms', 'p95 ms', 'base p50', 'p95 ms', 'target']));
    const baseline = `${api.url}/dashboard/login`;
    for (const [name, page] of pages) {
      const ours: number[] = [];
      const bare: number[] = [];
      for (let i = 0; i < REQUESTS + 5; i++) {
        const took = await timed(`${api.url}${page}`, cookie);
        const baseTook = await timed(baseline);
        if (i < 5) continue;
        ours.push(took);
        bare.push(baseTook);
      }
      const p95 = percentile(ours, 95);
      console.log(
        row([
          name,
          percentile(ours, 50).toFixed(1),
          p95.toFixed(1),
          percentile(bare, 50).toFixed(1),
          percentile(bare, 95).toFixed(1),
          `< ${TARGET_P95_MS} ${p95 < TARGET_P95_MS ? 'met' : 'NOT MET'}`,
        ]),
      );
    }
  } finally {
    await api?.stop();
    await scratch?.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}
