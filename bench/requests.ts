/**
 * `npm run bench -- requests [pglite|postgres]` (both without an argument): payment requests (issue 51).
 *
 * (a) Request to approved through the API and the wallet app's HTTP endpoints: the merchant's
 * POST /api/v1/dev/intents, then POST /api/v1/dev/intents/{ref}/requests to a wallet, then the
 * payer's form POST /wallet/requests/{id}/approve with the PIN (the wallet signed in once
 * before, through the sign-in form, its session cookie and CSRF token kept), beside a sandbox
 * payment of an intent (POST /api/v1/dev/intents, then POST …/simulate) and beside the checkout's
 * payment of one (POST /api/v1/dev/intents, then POST /checkout/intents/{shortCode}/pay with the
 * PIN, from an address of its own), in rounds in turn (rounds.ts), with the CPU each spends per
 * payment. A request is more work than a simulate: a
 * third request, the PIN's hash checked again, a waiting payment written then ended, and the
 * approval answered with the wallet app's whole page (balance, pending requests, history). Goal
 * >= 0.8x the simulate's throughput. The house's abuse limits hold: a business asks one phone at
 * most 10 times an hour and a wallet answers at most 20 times a minute, so the flows go round
 * WALLETS signed-in wallets and BUSINESSES merchants.
 *
 * (b) The time from POST …/requests answering to the `request` event reaching an open wallet
 * stream (GET /wallet/events), one request at a time, nothing else running. On PostgreSQL the
 * stream is held by a second API process: the notice crosses processes through the database, as
 * behind a load balancer. Once on a quiet server, once while 16 clients pay by simulate. Goal
 * p99 <= 200 ms. An event may arrive before the POST's answer
 * (the notice leaves at the commit, the answer after it): counted as 0 then; the time from the
 * POST's start is printed too.
 */
import http from 'node:http';
import os from 'node:os';
import pg from 'pg';
import { randomBase62 } from '../src/lib/ids.js';
import { SANDBOX_WALLET_PIN } from '../src/modules/sandbox/sandbox.js';
import { createBusiness, keyOf } from './intents.js';
import { onPGlite as pgliteApi, runFlows, serverEnv, unexpected, type Bench as LinksBench } from './links.js';
import { printCpuPerRequest, printThroughput } from './report.js';
import { createScratchDatabase } from './support/database.js';
import { sendRequest, type LoadRequest } from './support/load.js';
import { startServer, withCpuPerRequest, type ServerProcess } from './support/processes.js';
import { recordTable } from './support/results.js';
import { inRounds, roundCount, roundDurationMs, roundRatios } from './support/rounds.js';
import { fundBenchWallets } from './support/sandbox.js';

const AMOUNT = 12_500;
const WALLETS = Number(process.env.BENCH_REQUEST_WALLETS ?? 300);
const BUSINESSES = 20;
/** A business asks one phone at most 10 times an hour (decision 077). */
const PER_PAIR = 10;
/** Latency samples per condition: two conditions x SAMPLES over BUSINESSES merchants stay within PER_PAIR. */
const SAMPLES = 100;

type Send = (request: LoadRequest) => Promise<{ status: number; body: string }>;

/** The API on one database (twice on PostgreSQL), and SQL beside it (PGlite has one owner). */
interface Bench extends LinksBench {
  /** Where the latency run's stream is held: another process on PostgreSQL. */
  streamApi(): ServerProcess;
}

async function onPostgres(): Promise<Bench> {
  const scratch = await createScratchDatabase();
  const client = new pg.Client({ connectionString: scratch.url });
  await client.connect();
  const start = () => startServer('src/server.ts', ['--api'], serverEnv({ DATABASE_URL: scratch.url }), '/ready');
  const api = await start();
  const second = await start();
  return {
    name: 'PostgreSQL scratch database',
    api: () => api,
    streamApi: () => second,
    withSql: (run) => run(client),
    async close() {
      await Promise.all([api.stop(), second.stop()]);
      await client.end();
      await scratch.drop();
    },
  };
}

async function onPGlite(): Promise<Bench> {
  const bench = await pgliteApi('requests');
  return { ...bench, streamApi: () => bench.api() };
}

interface Session {
  phone: string;
  cookie: string;
  csrf: string;
}

/** Signs a wallet in through the wallet app's forms, from an address of its own. */
async function signIn(apiUrl: string, phone: string, address: string): Promise<Session> {
  const headers = { 'x-forwarded-for': address };
  const cookieOf = (response: Response, name: string) =>
    response.headers
      .getSetCookie()
      .map((line) => line.split(';')[0]!)
      .find((pair) => pair.startsWith(`${name}=`));
  const csrfOf = (html: string) => /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
  const page = await fetch(`${apiUrl}/wallet?mode=test`, { headers });
  const login = cookieOf(page, 'wallet_login');
  const form = new URLSearchParams({
    _csrf: csrfOf(await page.text()),
    phone,
    pin: SANDBOX_WALLET_PIN,
  });
  form.set('mode', 'test');
  const signed = await fetch(`${apiUrl}/wallet/sign-in`, {
    method: 'POST',
    headers: { ...headers, cookie: login ?? '', 'content-type': 'application/x-www-form-urlencoded' },
    body: form.toString(),
    redirect: 'manual',
  });
  const cookie = cookieOf(signed, 'wallet_session');
  if (signed.status !== 303 || !cookie)
    throw new Error(
      `sign-in of ${phone} answered ${signed.status}: ${(await signed.text())
        .replace(/<[^>]*>/g, ' ')
        .replace(/\s+/g, ' ')
        .slice(0, 600)}`,
    );
  const home = await fetch(`${apiUrl}/wallet`, { headers: { ...headers, cookie } });
  return { phone, cookie, csrf: csrfOf(await home.text()) };
}

/** An open GET /wallet/events: when each request's event arrived (ms, performance.now()). */
function openStream(apiUrl: string, session: Session): Promise<{ arrived: Map<string, number>; close(): void }> {
  const arrived = new Map<string, number>();
  return new Promise((resolve, reject) => {
    const request = http.get(`${apiUrl}/wallet/events`, { headers: { cookie: session.cookie } }, (response) => {
      if (response.statusCode !== 200) return reject(new Error(`the stream answered ${response.statusCode}`));
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        const at = performance.now();
        text += chunk;
        for (const match of text.matchAll(/event: request\ndata: \{"id":"(PR-\d+)"\}\n\n/g)) arrived.set(match[1]!, at);
        text = text.slice(text.lastIndexOf('\n\n') + 2);
      });
      resolve({ arrived, close: () => request.destroy() });
    });
    request.on('error', reject);
  });
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;

export async function requestsSuite(args: string[]): Promise<void> {
  const which = args.filter((arg) => arg === 'pglite' || arg === 'postgres');
  for (const kind of which.length > 0 ? which : ['pglite', 'postgres']) {
    const bench = kind === 'pglite' ? await onPGlite() : await onPostgres();
    try {
      await requestsOn(bench);
    } finally {
      await bench.close();
    }
  }
}

async function requestsOn(bench: Bench): Promise<void> {
  const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 16);
  const rounds = roundCount();
  const durationMs = roundDurationMs();
  const embedded = bench.name.startsWith('PGlite');
  const merchants: string[] = [];
  for (let i = 0; i < BUSINESSES; i++) {
    const business = await createBusiness(bench.api().url, `Requests bench shop ${i}`);
    merchants.push(`Bearer ${keyOf(business.keys, 'secret', 'test')}`);
  }
  // One wallet more than the flows use: the latency run's.
  const { phones } = await bench.withSql((sql) => fundBenchWallets(sql, WALLETS + 1));
  const api = bench.api();
  let address = 0;
  const nextAddress = () => `10.9.${(address >> 8) & 255}.${address++ & 255}`;
  const sessions: Session[] = [];
  let signedIn = performance.now();
  for (let i = 0; i < WALLETS; i += 8) {
    const batch = phones.slice(i, Math.min(i + 8, WALLETS));
    sessions.push(...(await Promise.all(batch.map((phone) => signIn(api.url, phone, nextAddress())))));
  }
  signedIn = (performance.now() - signedIn) / 1000;
  console.log(
    `\n## ${bench.name}; ${BUSINESSES} merchants, ${WALLETS} wallets signed in to the wallet app in ` +
      `${signedIn.toFixed(1)} s; ${concurrency} clients; ${rounds} rounds, each load in turn, of 2 s warm-up then ` +
      `${durationMs / 1000} s, after a warm-up of each; app and load share 2 cores ` +
      `(load average ${os.loadavg()[0]!.toFixed(1)} at the start: other work on the machine)`,
  );

  const run = randomBase62(6);
  let sequence = 0;
  const createIntent = (send: Send, key: string, n: number) =>
    send({
      method: 'POST',
      path: '/api/v1/dev/intents',
      headers: { authorization: key, 'x-idempotency-key': `create-${run}-${n}` },
      body: JSON.stringify({ amount: AMOUNT, label: 'Bench plate' }),
    });
  const referenceOf = (body: string) =>
    (JSON.parse(body) as { data: { referenceNumber: string } }).data.referenceNumber;

  // (b) POST …/requests answered → the event on an open stream; first on a quiet server.
  const watcher = await signIn(bench.streamApi().url, phones[WALLETS]!, nextAddress());
  const where = bench.streamApi() === api ? 'the same API process' : 'a second API process';
  let sample = 0;
  const sampleLatency = async (condition: string) => {
    const stream = await openStream(bench.streamApi().url, watcher);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 2 });
    const send: Send = (request) => sendRequest(agent, new URL(api.url), request);
    const afterAnswer: number[] = [];
    const afterStart: number[] = [];
    let missed = 0;
    for (let i = 0; i < SAMPLES; i++) {
      const n = sample++;
      const key = merchants[n % BUSINESSES]!;
      const made = await createIntent(send, key, sequence++);
      if (made.status !== 201) throw new Error(`intent create answered ${unexpected(made, 201)}`);
      const reference = referenceOf(made.body);
      const started = performance.now();
      const asked = await send({
        method: 'POST',
        path: `/api/v1/dev/intents/${reference}/requests`,
        headers: { authorization: key, 'x-idempotency-key': `ask-${run}-sample-${n}` },
        body: JSON.stringify({ phone: watcher.phone }),
      });
      const answered = performance.now();
      if (asked.status !== 201) throw new Error(`request create answered ${unexpected(asked, 201)}`);
      const id = (JSON.parse(asked.body) as { data: { id: string } }).data.id;
      const deadline = answered + 5000;
      while (!stream.arrived.has(id) && performance.now() < deadline) await new Promise((r) => setTimeout(r, 1));
      const at = stream.arrived.get(id);
      if (at === undefined) missed += 1;
      else {
        afterAnswer.push(Math.max(0, at - answered));
        afterStart.push(at - started);
      }
      // A phone holds at most 3 pending requests from one business: this one ends before the next.
      const cancelled = await send({
        method: 'POST',
        path: `/api/v1/dev/payment-requests/${id}/cancel`,
        headers: { authorization: key, 'x-idempotency-key': `cancel-${run}-${n}` },
      });
      if (cancelled.status !== 200) throw new Error(`cancel answered ${unexpected(cancelled, 200)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    stream.close();
    agent.destroy();
    afterAnswer.sort((a, b) => a - b);
    afterStart.sort((a, b) => a - b);
    const p99 = percentile(afterAnswer, 0.99);
    recordTable({
      kind: 'latencies',
      title: `Request to wallet stream, ${condition} (${bench.name})`,
      lines: [
        { name: 'after the POST answered', p50Ms: percentile(afterAnswer, 0.5), p99Ms: p99, missed },
        { name: 'after the POST started', p50Ms: percentile(afterStart, 0.5), p99Ms: percentile(afterStart, 0.99) },
      ],
    });
    const met = p99 <= 200 && missed === 0 ? 'met' : 'NOT MET';
    console.log(
      `\nPOST …/requests to the \`request\` event on an open wallet stream (${where}), ${condition}, ` +
        `${SAMPLES} one at a time\n` +
        `  after the POST answered: p50 ${percentile(afterAnswer, 0.5).toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, ` +
        `max ${afterAnswer[afterAnswer.length - 1]!.toFixed(1)} ms (target p99 <= 200 ms: ${met}); ` +
        `${afterAnswer.filter((ms) => ms === 0).length} arrived before the answer; ${missed} never arrived within 5 s\n` +
        `  after the POST started:  p50 ${percentile(afterStart, 0.5).toFixed(1)} ms, ` +
        `p99 ${percentile(afterStart, 0.99).toFixed(1)} ms`,
    );
  };
  await sampleLatency('quiet server');

  // (a) Request to approved, beside create + simulate. Flow k: wallet k mod WALLETS, its merchant
  // turning every WALLETS flows, so a pair (merchant, phone) comes back every WALLETS x BUSINESSES flows.
  let flow = 0;
  const capacity = WALLETS * BUSINESSES * PER_PAIR;
  const options = { concurrency, durationMs };
  const measure = async (load: () => ReturnType<typeof runFlows>) => {
    const measured = await withCpuPerRequest([api.pid], load);
    return embedded ? { ...measured, cpu: { ...measured.cpu, postgres: 0 } } : measured;
  };
  const loads = {
    request: () =>
      measure(() =>
        runFlows(api.url, options, async (send) => {
          const k = flow++;
          if (k >= capacity) return 'out of (merchant, phone) pairs under the hourly limit';
          const session = sessions[k % WALLETS]!;
          const key = merchants[Math.floor(k / WALLETS) % BUSINESSES]!;
          const n = sequence++;
          const made = await createIntent(send, key, n);
          if (made.status !== 201) return unexpected(made, 201);
          const asked = await send({
            method: 'POST',
            path: `/api/v1/dev/intents/${referenceOf(made.body)}/requests`,
            headers: { authorization: key, 'x-idempotency-key': `ask-${run}-${n}` },
            body: JSON.stringify({ phone: session.phone }),
          });
          if (asked.status !== 201) return unexpected(asked, 201);
          const id = (JSON.parse(asked.body) as { data: { id: string } }).data.id;
          const approved = await send({
            method: 'POST',
            path: `/wallet/requests/${id}/approve`,
            headers: { cookie: session.cookie, 'content-type': 'application/x-www-form-urlencoded' },
            // A form's own token, as the page gives each form (the wallet app's one write path).
            body: new URLSearchParams({
              _csrf: session.csrf,
              _idem: randomBase62(24),
              pin: SANDBOX_WALLET_PIN,
            }).toString(),
          });
          return unexpected(approved, 200);
        }),
      ),
    simulate: () =>
      measure(() =>
        runFlows(api.url, options, async (send) => {
          const n = sequence++;
          const key = merchants[n % BUSINESSES]!;
          const made = await createIntent(send, key, n);
          if (made.status !== 201) return unexpected(made, 201);
          const paid = await send({
            method: 'POST',
            path: `/api/v1/dev/intents/${referenceOf(made.body)}/simulate`,
            headers: { authorization: key, 'x-idempotency-key': `sim-${run}-${n}` },
            body: JSON.stringify({ payerPhone: phones[n % WALLETS] }),
          });
          return unexpected(paid, 200);
        }),
      ),
    checkout: () =>
      measure(() =>
        runFlows(api.url, options, async (send) => {
          const n = sequence++;
          const key = merchants[n % BUSINESSES]!;
          const made = await createIntent(send, key, n);
          if (made.status !== 201) return unexpected(made, 201);
          const { shortCode } = (JSON.parse(made.body) as { data: { shortCode: string } }).data;
          const paid = await send({
            method: 'POST',
            path: `/checkout/intents/${shortCode}/pay`,
            headers: { 'x-forwarded-for': nextAddress(), 'x-idempotency-key': `pay-${run}-${n}` },
            body: JSON.stringify({ phone: phones[n % WALLETS], pin: SANDBOX_WALLET_PIN }),
          });
          return unexpected(paid, 200);
        }),
      ),
  };
  // A server just started compiles and warms its paths on its first requests: not a payment's cost.
  for (const load of Object.values(loads)) await load();
  const { request, simulate, checkout } = await inRounds(rounds, loads);
  printThroughput(`Request to approved (${bench.name}), baseline: create + simulate in the same run`, [
    {
      name: 'request + approve vs simulate',
      ours: request.result,
      baseline: simulate.result,
      ratios: roundRatios(request, simulate),
      target: 0.8,
    },
    {
      name: 'request + approve vs checkout',
      ours: request.result,
      baseline: checkout.result,
      ratios: roundRatios(request, checkout),
    },
  ]);
  printCpuPerRequest('CPU per payment', [
    { name: 'create, request, approve', cpu: request.cpu },
    { name: 'create, simulate', cpu: simulate.cpu },
    { name: 'create, checkout pay', cpu: checkout.cpu },
  ]);
  // (b) again while 16 clients pay by simulate: the stream's notice behind a busy server.
  await Promise.all([sampleLatency('while 16 clients pay by simulate'), loads.simulate()]);
  const statuses = await bench.withSql(async (sql) => {
    const { rows } = await sql.query(`SELECT status, count(*)::int AS n FROM payment_requests GROUP BY status`);
    return (rows as { status: string; n: number }[]).map((row) => `${row.status} ${row.n}`).join(', ');
  });
  console.log(`  requests by status at the end: ${statuses}; flows run: ${flow.toLocaleString('en')} of ${capacity}`);
}
