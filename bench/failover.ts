/**
 * `npm run bench -- failover [count]` (issue 39; BENCH_FAILOVERS, default 5): the HA layout of
 * scripts/ha/layout.sh (etcd, two Patroni members with a synchronous standby, HAProxy), one API
 * process and one worker on it through HAProxy, 16 clients each writing payments, refunds, orders
 * and payouts under keys of their own and recording every 2xx they got.
 * - Throughput: the same load on the layout and on a lone PostgreSQL with the same settings
 *   (`layout.sh single`, its own API and worker), in alternating rounds; target >= 0.7x.
 * - Failovers: mid-burst, the primary's machine is lost (its Patroni and PostgreSQL get SIGKILL);
 *   Patroni promotes the standby once the leader lock lapses, and HAProxy follows; then the machine
 *   comes back (Patroni started again) and rejoins as the synchronous standby. A client retries a write that got no answer, or a 503, under the same key until
 *   it is answered. Per failover: the unavailability window (first failed request to the first
 *   success of a request sent after it) and the time from the kill; the old primary rejoins as the
 *   synchronous standby before the next kill. Target: window <= 15 s.
 * - Faults: the standby's machine lost (Patroni and PostgreSQL killed) under load, then etcd's:
 *   failed requests (target 0) and the slowest write.
 * - Then, on the last primary: every acknowledged write is there (0 lost), none happened twice
 *   (each client's writes, counted, equal what it sent), `admin ledger check` passes, every event
 *   has one delivery per endpoint. Exits non-zero when a check fails.
 */
import { execFile } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';
import { promisify } from 'node:util';
import pg from 'pg';
import { openDatabase } from '../src/db/connect.js';
import { migrate } from '../src/db/migrate.js';
import { newId, randomBase62 } from '../src/lib/ids.js';
import { eventCatalog, EVENT_NAMES } from '../src/modules/events/catalog.js';
import { clusterEnv, startWorker } from './cluster.js';
import { ADMIN_TOKEN, createBusiness, keyOf } from './intents.js';
import { printThroughput } from './report.js';
import { HA_DIR, haUrl, layout, roles, singleUrl, waitHealthy } from '../test/hardening/ha-layout.js';
import { sendRequest, timeSamples, type LoadResult } from './support/load.js';
import { startServer, type ServerProcess } from './support/processes.js';
import { startReceiver } from './support/receiver.js';
import { inRounds, median, roundCount, roundDurationMs } from './support/rounds.js';

export const CLIENTS = 16;
const API = '/api/v1/dev';
/** Each merchant's funding for its payouts: one sandbox payment of the largest intent amount. */
const FUNDING = 100_000_000;
const WINDOW_TARGET_MS = 15_000;
const RATIO_TARGET = 0.7;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A fresh, migrated database on the server of `serverUrl`; no connection is kept open. Right after
 * `layout.sh up`, Patroni may still restart the primary once (a restore drill's run met it): the
 * creation is tried again for a minute.
 */
export async function scratchDatabase(serverUrl: string): Promise<string> {
  const name = `devapi_failover_${randomBase62(8).toLowerCase()}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      await queryOnce(serverUrl, `CREATE DATABASE ${name}`);
      break;
    } catch (error) {
      const exists = error instanceof Error && /already exists/.test(error.message);
      if (exists) break;
      if (Date.now() > deadline) throw error;
      await sleep(500);
    }
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const database = await openDatabase({ kind: 'postgres', url: url.toString(), poolSize: 2 });
  await migrate(database);
  await database.close();
  return url.toString();
}

/** A short-lived connection for one query (a kept one would die at each failover). */
export async function queryOnce<R extends pg.QueryResultRow>(url: string, text: string, values: unknown[] = []) {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => {});
  await client.connect();
  try {
    return (await client.query<R>(text, values)).rows;
  } finally {
    await client.end().catch(() => {});
  }
}

export interface Merchant {
  id: string;
  key: string;
  productId: string;
  payoutPhone: string;
}

/** What one client was answered 2xx, by kind of write: the references (or the count) it got. */
export interface Acknowledged {
  intents: Set<string>;
  paid: Set<string>;
  refunded: Set<string>;
  orders: Set<string>;
  accepted: Set<string>;
  payouts: Set<string>;
}

const newAcknowledged = (): Acknowledged => ({
  intents: new Set(),
  paid: new Set(),
  refunded: new Set(),
  orders: new Set(),
  accepted: new Set(),
  payouts: new Set(),
});

/** One request's times (ms since the epoch) and whether it got its expected answer. */
interface Answer {
  sentAt: number;
  answeredAt: number;
  ok: boolean;
}

class UnexpectedAnswer extends Error {}

/**
 * CPU time used so far (ms, Linux clock ticks of 10 ms) by a process and its children: for a
 * postmaster, every backend, the WAL sender or receiver and the startup process, those it has
 * reaped included (its children's time).
 */
export function treeCpuMs(pid: number | undefined): number {
  if (pid === undefined) return 0;
  let total = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const fields = readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]!.split(' ');
      const self = Number(entry) === pid;
      if (!self && Number(fields[1]) !== pid) continue;
      total += (Number(fields[11]) + Number(fields[12])) * 10;
      if (self) total += (Number(fields[13]) + Number(fields[14])) * 10;
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return total;
}

/** A pid from a pid file (a postmaster's first line), or undefined. */
export function pidIn(file: string): number | undefined {
  try {
    return Number(readFileSync(file, 'utf8').split('\n')[0]) || undefined;
  } catch {
    return undefined;
  }
}

/**
 * The layout's sides: which member is primary is read from `currentPrimary` (set before each
 * round), the other is the standby; HAProxy; Patroni (both members) and etcd.
 */
let currentPrimary: 'pg1' | 'pg2' = 'pg1';
function haCpu(apiPid: number, workerPid: number): CpuSides {
  const standby = currentPrimary === 'pg1' ? 'pg2' : 'pg1';
  return {
    'API + worker': treeCpuMs(apiPid) + treeCpuMs(workerPid),
    'PostgreSQL primary': treeCpuMs(pidIn(`${HA_DIR}/${currentPrimary}/data/postmaster.pid`)),
    'PostgreSQL standby': treeCpuMs(pidIn(`${HA_DIR}/${standby}/data/postmaster.pid`)),
    HAProxy: treeCpuMs(pidIn(`${HA_DIR}/pids/haproxy.pid`)),
    'Patroni + etcd':
      treeCpuMs(pidIn(`${HA_DIR}/pids/pg1.pid`)) +
      treeCpuMs(pidIn(`${HA_DIR}/pids/pg2.pid`)) +
      treeCpuMs(pidIn(`${HA_DIR}/pids/etcd.pid`)),
  };
}

/** CPU so far of each side of a target: the app's processes and, per database server role, its processes. */
type CpuSides = Record<string, number>;

/** The app on one database: its processes, its merchants (one per client), what they were answered. */
export interface Target {
  name: string;
  url: string;
  api: ServerProcess;
  worker: { pid: number; stop(): Promise<void> };
  merchants: Merchant[];
  acknowledged: Acknowledged[];
  agent: http.Agent;
  base: URL;
  /** Every answer while `recording`; `retries` counts writes sent again under their key. */
  answers: Answer[];
  recording: boolean;
  retries: number;
  unexpected: string[];
  /** CPU so far of each side (the throughput rounds add up their differences in `cpuSpent`). */
  cpu: () => CpuSides;
  cpuSpent: CpuSides;
  cpuWrites: number;
}

/**
 * Sends a write under its own idempotency key and, while it gets no answer (connection lost), a
 * 503 or a 409 IDEMPOTENCY_KEY_IN_PROGRESS (the first attempt still running), sends it again under
 * the same key. Answers the `data` of the expected status; anything else is a failure of the run.
 */
async function write(
  target: Target,
  merchant: Merchant,
  method: string,
  path: string,
  expect: number,
  body?: unknown,
): Promise<Record<string, unknown>> {
  const key = newId('idem');
  const text = body === undefined ? undefined : JSON.stringify(body);
  for (let attempt = 0; ; attempt++) {
    if (attempt > 0) target.retries += 1;
    const sentAt = Date.now();
    // No answer at all (the connection lost) counts as status 0.
    const { status, body: answer } = await sendRequest(target.agent, target.base, {
      method,
      path: `${API}${path}`,
      headers: { authorization: merchant.key, 'x-idempotency-key': key },
      ...(text === undefined ? {} : { body: text }),
    }).catch(() => ({ status: 0, body: '' }));
    const answeredAt = Date.now();
    if (target.recording) target.answers.push({ sentAt, answeredAt, ok: status === expect });
    if (status === expect) return (JSON.parse(answer) as { data: Record<string, unknown> }).data;
    const retryable =
      status === 0 || status === 503 || (status === 409 && answer.includes('IDEMPOTENCY_KEY_IN_PROGRESS'));
    if (!retryable) throw new UnexpectedAnswer(`${method} ${path} -> ${status} ${answer.slice(0, 200)}`);
    if (attempt > 2000) throw new UnexpectedAnswer(`${method} ${path}: no answer after 2000 attempts`);
    // Pacing a client's retries (as a client library backs off), not waiting for a state.
    await sleep(100);
  }
}

/** One round of client `c`: a payment, every third refunded in part, an order accepted or a payout. */
async function round(target: Target, c: number, n: number): Promise<number> {
  const merchant = target.merchants[c]!;
  const acked = target.acknowledged[c]!;
  // 1000-1299 centimes: never 1313, the sandbox amount that always fails.
  const intent = await write(target, merchant, 'POST', '/intents', 201, { amount: 1000 + (n % 300), label: 'HA' });
  const reference = String(intent.referenceNumber);
  acked.intents.add(reference);
  await write(target, merchant, 'POST', `/intents/${reference}/simulate`, 200, {});
  acked.paid.add(reference);
  let writes = 2;
  if (n % 3 === 0) {
    await write(target, merchant, 'POST', `/intents/${reference}/refund`, 200, { amount: 100 });
    acked.refunded.add(reference);
    writes += 1;
  }
  const order = await write(target, merchant, 'POST', '/store/orders/simulate', 201, {
    items: [{ productId: merchant.productId, quantity: 1 }],
    customerName: 'HA',
  });
  const orderReference = String(order.referenceNumber);
  acked.orders.add(orderReference);
  writes += 1;
  if (n % 2 === 0) {
    await write(target, merchant, 'POST', `/store/orders/${orderReference}/accept`, 200);
    acked.accepted.add(orderReference);
  } else {
    const payout = await write(target, merchant, 'POST', '/payouts', 201, {
      amount: 100,
      destination: { type: 'WALLET', phone: merchant.payoutPhone },
    });
    acked.payouts.add(String(payout.referenceNumber));
  }
  return writes + 1;
}

/**
 * The 16 clients, each looping over its rounds until `until()` says stop (a round under way is
 * finished: its writes are retried until answered). Answers the writes acknowledged and their
 * latencies (the answer of the attempt that succeeded, retries not included).
 */
export function runClients(target: Target, until: () => boolean, onWrites: (count: number) => void): Promise<void[]> {
  let sequence = 0;
  return Promise.all(
    Array.from({ length: CLIENTS }, async (_, c) => {
      while (!until()) {
        try {
          onWrites(await round(target, c, sequence++));
        } catch (error) {
          target.unexpected.push(String(error));
          if (target.unexpected.length > 20) return;
        }
      }
    }),
  );
}

export async function setUpTarget(name: string, serverUrl: string, receiverUrl: string): Promise<Target> {
  const url = await scratchDatabase(serverUrl);
  const env = clusterEnv(url, { RATE_LIMIT_TEST_PER_MINUTE: '1000000000', LOG_LEVEL: 'error' });
  const api = await startServer('src/server.ts', ['--api'], env, '/ready');
  const worker = await startWorker(env);
  const target: Target = {
    name,
    url,
    api,
    worker,
    merchants: [],
    acknowledged: Array.from({ length: CLIENTS }, newAcknowledged),
    agent: new http.Agent({ keepAlive: true, maxSockets: CLIENTS * 2 }),
    base: new URL(api.url),
    answers: [],
    recording: false,
    retries: 0,
    unexpected: [],
    cpu: () => ({}),
    cpuSpent: {},
    cpuWrites: 0,
  };
  target.cpu =
    name === 'single'
      ? () => ({
          'API + worker': treeCpuMs(api.pid) + treeCpuMs(worker.pid),
          PostgreSQL: treeCpuMs(pidIn(`${HA_DIR}/single/data/postmaster.pid`)),
        })
      : () => haCpu(api.pid, worker.pid);
  for (let c = 0; c < CLIENTS; c++) {
    const business = await createBusiness(api.url, `${name} merchant ${c}`);
    const merchant: Merchant = {
      id: business.id,
      key: `Bearer ${keyOf(business.keys, 'secret', 'test')}`,
      productId: '',
      payoutPhone: `+2227${String(c).padStart(7, '0')}`,
    };
    const product = await write(target, merchant, 'POST', '/store/products', 201, {
      name: `HA ${c}`,
      price: 700,
      quantity: 100_000_000,
      externalId: `HA-${c}`,
      status: 'ACTIVE',
    });
    merchant.productId = String(product.id);
    // Every event a secret key may subscribe to (not the key-management ones, which need
    // api_keys:write), so "every event has its deliveries" covers each kind the load makes.
    await write(target, merchant, 'POST', '/webhooks/endpoints', 201, {
      url: `${receiverUrl}/hook/${name}/${c}`,
      events: EVENT_NAMES.filter((event) => eventCatalog[event] !== 'api_keys:write'),
    });
    target.merchants.push(merchant);
    // The payouts' money: one large sandbox payment, acknowledged like the rest.
    const funding = await write(target, merchant, 'POST', '/intents', 201, { amount: FUNDING, label: 'Funding' });
    target.acknowledged[c]!.intents.add(String(funding.referenceNumber));
    await write(target, merchant, 'POST', `/intents/${String(funding.referenceNumber)}/simulate`, 200, {});
    target.acknowledged[c]!.paid.add(String(funding.referenceNumber));
  }
  return target;
}

/**
 * Writes acknowledged per second over `durationMs` after a 1 s warm-up: the answers of the
 * attempts that succeeded, sent and answered within the measured time, and their latencies.
 */
async function measure(target: Target, durationMs: number): Promise<LoadResult> {
  const warmupEnds = Date.now() + 1000;
  const ends = warmupEnds + durationMs;
  target.recording = true;
  const from = target.answers.length;
  const cpuBefore = target.cpu();
  let writes = 0;
  await runClients(
    target,
    () => Date.now() >= ends,
    (count) => (writes += count),
  );
  const cpuAfter = target.cpu();
  for (const [side, ms] of Object.entries(cpuAfter))
    target.cpuSpent[side] = (target.cpuSpent[side] ?? 0) + ms - (cpuBefore[side] ?? 0);
  target.cpuWrites += writes;
  target.recording = false;
  const answers = target.answers.slice(from);
  target.answers.length = from;
  const latencies = answers
    .filter((answer) => answer.ok && answer.sentAt >= warmupEnds && answer.answeredAt <= ends)
    .map((answer) => answer.answeredAt - answer.sentAt)
    .sort((a, b) => a - b);
  const { p50Ms, p99Ms } = timeSamples(latencies);
  return {
    requests: latencies.length,
    sent: answers.length,
    errors: answers.filter((answer) => !answer.ok).length,
    perSecond: latencies.length / (durationMs / 1000),
    p50Ms,
    p99Ms,
    seconds: durationMs / 1000,
    latenciesMs: latencies,
  };
}

/** The unavailability of one failover from the answers around the kill. */
function windowOf(answers: Answer[], killedAt: number): { windowMs: number; fromKillMs: number } | undefined {
  const firstFailure = answers
    .filter((a) => !a.ok && a.answeredAt >= killedAt)
    .reduce((min, a) => Math.min(min, a.answeredAt), Infinity);
  if (firstFailure === Infinity) {
    // No request failed (yet): unavailable for none of them once answers sent well after the kill succeed.
    const late = answers.find((a) => a.ok && a.sentAt >= killedAt + 20_000);
    return late ? { windowMs: 0, fromKillMs: 0 } : undefined;
  }
  const firstSuccess = answers
    .filter((a) => a.ok && a.sentAt >= firstFailure)
    .reduce((min, a) => Math.min(min, a.answeredAt), Infinity);
  if (firstSuccess === Infinity) return undefined;
  return { windowMs: firstSuccess - firstFailure, fromKillMs: firstSuccess - killedAt };
}

/**
 * Everything acknowledged is in the database, and nothing is there twice; the ledger check passes;
 * with `deliveries`, every event has one delivery per endpoint subscribed to it, all delivered.
 */
export async function verify(target: Target, { deliveries = true } = {}): Promise<string[]> {
  const failures: string[] = [];
  let lost = 0;
  let doubled = 0;
  let acknowledged = 0;
  for (let c = 0; c < CLIENTS; c++) {
    const acked = target.acknowledged[c]!;
    const business = target.merchants[c]!.id;
    acknowledged += Object.values(acked).reduce((sum, set) => sum + set.size, 0);
    const intents = await queryOnce<{ reference_number: string; status: string; refunds: string; confirmed: string }>(
      target.url,
      `SELECT i.reference_number, i.status,
         (SELECT count(*) FROM refunds r WHERE r.intent_id = i.id) AS refunds,
         (SELECT count(*) FROM events e WHERE e.subject = i.reference_number AND e.event = 'payment.confirmed') AS confirmed
       FROM payment_intents i WHERE i.business_id = $1`,
      [business],
    );
    const byReference = new Map(intents.map((row) => [row.reference_number, row]));
    for (const reference of acked.intents) if (!byReference.has(reference)) lost += 1;
    for (const reference of acked.paid) {
      const row = byReference.get(reference);
      if (!row || !['PAID', 'REFUNDED'].includes(row.status)) lost += 1;
      else if (Number(row.confirmed) !== 1) doubled += 1;
    }
    for (const reference of acked.refunded) {
      const refunds = Number(byReference.get(reference)?.refunds ?? 0);
      if (refunds === 0) lost += 1;
      if (refunds > 1) doubled += 1;
    }
    // Each write was sent under its key until answered: as many rows as writes, no more.
    doubled += Math.max(0, intents.length - acked.intents.size);
    doubled += intents.filter((row) => Number(row.refunds) > 0 && !acked.refunded.has(row.reference_number)).length;
    const orders = await queryOnce<{ reference_number: string; status: string }>(
      target.url,
      `SELECT reference_number, status FROM orders WHERE business_id = $1`,
      [business],
    );
    const orderStatus = new Map(orders.map((row) => [row.reference_number, row.status]));
    for (const reference of acked.orders) if (!orderStatus.has(reference)) lost += 1;
    for (const reference of acked.accepted) if (orderStatus.get(reference) === 'NEW') lost += 1;
    doubled += Math.max(0, orders.length - acked.orders.size);
    const payouts = await queryOnce<{ reference: string }>(
      target.url,
      `SELECT reference FROM payouts WHERE business_id = $1`,
      [business],
    );
    const payoutSet = new Set(payouts.map((row) => row.reference));
    for (const reference of acked.payouts) if (!payoutSet.has(reference)) lost += 1;
    doubled += Math.max(0, payouts.length - acked.payouts.size);
  }
  console.log(
    `  ${acknowledged} acknowledged writes: ${lost} lost, ${doubled} done twice ` +
      `(${target.retries} sent again under their key)`,
  );
  if (lost > 0) failures.push(`${lost} acknowledged writes lost`);
  if (doubled > 0) failures.push(`${doubled} writes done twice`);

  const ledger = await promisify(execFile)(process.execPath, ['dist/cli/admin.js', 'ledger', 'check'], {
    env: { ...process.env, ADMIN_URL: target.api.url, ADMIN_TOKEN },
  }).then(
    () => true,
    () => false,
  );
  console.log(`  admin ledger check: ${ledger ? 'passes' : 'FAILS'}`);
  if (!ledger) failures.push('ledger check fails');

  if (target.unexpected.length > 0) {
    failures.push(`${target.unexpected.length} unexpected answers`);
    for (const line of target.unexpected.slice(0, 5)) console.log(`  unexpected: ${line}`);
  }
  if (!deliveries) return failures;
  // Every event has one delivery per endpoint subscribed to it (the worker added them through
  // the failovers), and the queue drains.
  const deadline = Date.now() + 180_000;
  let counts: { events: string; deliveries: string; missing: string; pending: string };
  for (;;) {
    counts = (
      await queryOnce<typeof counts>(
        target.url,
        `SELECT (SELECT count(*) FROM events) AS events,
           (SELECT count(*) FROM webhook_deliveries) AS deliveries,
           (SELECT count(*) FROM webhook_deliveries WHERE status <> 'SUCCEEDED') AS pending,
           (SELECT count(*) FROM events ev JOIN webhook_endpoints e ON e.business_id = ev.business_id
              AND e.environment = ev.environment AND ev.event = ANY (e.events)
            WHERE NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = ev.id AND d.endpoint_id = e.id)
           ) AS missing`,
      )
    )[0]!;
    if ((Number(counts.pending) === 0 && Number(counts.missing) === 0) || Date.now() > deadline) break;
    await sleep(500);
  }
  console.log(
    `  events: ${counts.events}, deliveries: ${counts.deliveries} (${counts.missing} missing, ${counts.pending} not yet SUCCEEDED)`,
  );
  if (Number(counts.missing) > 0) failures.push(`${counts.missing} deliveries missing`);
  if (Number(counts.pending) > 0) failures.push(`${counts.pending} deliveries not delivered`);
  return failures;
}

/** Runs the clients on `target` while `phase` runs; answers the failed requests and the slowest write. */
async function underLoad(target: Target, phase: () => Promise<void>): Promise<{ failed: number; slowestMs: number }> {
  let stop = false;
  target.recording = true;
  const from = target.answers.length;
  const clients = runClients(
    target,
    () => stop,
    () => {},
  );
  try {
    await phase();
  } finally {
    stop = true;
    await clients;
    target.recording = false;
  }
  const answers = target.answers.slice(from);
  target.answers.length = from;
  return {
    failed: answers.filter((a) => !a.ok).length,
    slowestMs: answers.reduce((max, a) => Math.max(max, a.answeredAt - a.sentAt), 0),
  };
}

export async function failoverSuite(args: string[] = []): Promise<void> {
  const failovers = Number(args[0] ?? process.env.BENCH_FAILOVERS ?? 5);
  if (!Number.isInteger(failovers) || failovers < 1) throw new Error(`failover: count must be >= 1, not "${args[0]}"`);
  const rounds = roundCount();
  const roundMs = roundDurationMs();
  const failures: string[] = [];
  const receiver = await startReceiver();
  const targets: Target[] = [];
  console.log(
    `failover: ${CLIENTS} clients (payments, refunds, orders, payouts), 1 API process + 1 worker per database; ` +
      `the HA layout (etcd, Patroni primary + synchronous standby, HAProxy) beside a lone PostgreSQL with the same settings; ` +
      `${failovers} failovers (the primary's Patroni and PostgreSQL killed)`,
  );
  try {
    await layout('down');
    let began = Date.now();
    await layout('up');
    console.log(`layout up in ${((Date.now() - began) / 1000).toFixed(1)} s`);
    await layout('single', 'up');
    const ha = await setUpTarget('ha', haUrl(), receiver.url);
    targets.push(ha);
    const single = await setUpTarget('single', singleUrl(), receiver.url);
    targets.push(single);

    // 1. Throughput: synchronous replication beside the lone server, in alternating rounds.
    currentPrimary = await waitHealthy();
    const measured = await inRounds(rounds, {
      ha: async () => ({ result: await measure(ha, roundMs), cpu: undefined }),
      single: async () => ({ result: await measure(single, roundMs), cpu: undefined }),
    });
    const ratios = measured.ha.rounds.map((run, i) => run.perSecond / measured.single.rounds[i]!.perSecond);
    printThroughput(
      `writes acknowledged per second, ${CLIENTS} clients; ${rounds} rounds of ${roundMs / 1000} s in turn`,
      [
        {
          name: 'sync standby / single',
          ours: measured.ha.result,
          baseline: measured.single.result,
          ratios,
          target: RATIO_TARGET,
        },
      ],
    );
    console.log(`  rounds' ratios: ${ratios.map((r) => r.toFixed(2)).join(', ')}`);
    // CPU per write moves less than throughput on a shared machine: where the layout's cost goes.
    console.log(`CPU per acknowledged write, all rounds (ms; on one machine the standby's is the same cores'):`);
    for (const target of [ha, single]) {
      const per = Object.entries(target.cpuSpent).map(([side, ms]) => [side, ms / (target.cpuWrites || 1)] as const);
      const total = per.reduce((sum, [, ms]) => sum + ms, 0);
      console.log(
        `  ${target.name === 'ha' ? 'layout' : 'single'}: ${per.map(([side, ms]) => `${side} ${ms.toFixed(1)}`).join(', ')}; total ${total.toFixed(1)}`,
      );
    }
    await single.worker.stop();
    await single.api.stop();
    await layout('single', 'down');
    if (median(ratios) < RATIO_TARGET) failures.push(`throughput ratio ${median(ratios).toFixed(2)} < ${RATIO_TARGET}`);

    // 2. Failovers under load.
    console.log(
      `\nfailovers (the primary's machine lost mid-burst: SIGKILL to its Patroni and PostgreSQL; clients retry under the same keys):`,
    );
    let stop = false;
    let writes = 0;
    ha.recording = true;
    const clients = runClients(
      ha,
      () => stop,
      (count) => (writes += count),
    );
    const windows: number[] = [];
    try {
      for (let i = 1; i <= failovers; i++) {
        const primary = await waitHealthy();
        const before = writes;
        // Mid-burst: the clients have written a while on this primary.
        while (writes < before + 300) await sleep(50);
        const from = ha.answers.length;
        const killedAt = Date.now();
        // The primary's machine lost: Patroni and PostgreSQL killed (SIGKILL) together.
        await layout('stop', primary);
        let measuredWindow: ReturnType<typeof windowOf>;
        const deadline = killedAt + 120_000;
        while (!(measuredWindow = windowOf(ha.answers.slice(from), killedAt))) {
          if (Date.now() > deadline) throw new Error(`no success within 120 s of failover ${i}`);
          await sleep(50);
        }
        // The machine back: its Patroni recovers the crashed data directory, rewinds it onto the
        // new primary's timeline and follows it as the synchronous standby.
        await layout('start', primary);
        began = Date.now();
        const next = await waitHealthy();
        const { primary: now } = await roles();
        windows.push(measuredWindow.windowMs);
        console.log(
          `  ${i}: ${primary} lost; ${now ?? next} primary; unavailable ${(measuredWindow.windowMs / 1000).toFixed(2)} s ` +
            `(first failure to first success), ${(measuredWindow.fromKillMs / 1000).toFixed(2)} s from the kill; ` +
            `${primary} back as synchronous standby ${((Date.now() - began) / 1000).toFixed(1)} s later`,
        );
        if ((now ?? next) === primary) failures.push(`failover ${i}: ${primary} is primary again`);
        ha.answers.length = 0;
      }
    } finally {
      stop = true;
      await clients;
      ha.recording = false;
    }
    const sorted = [...windows].sort((a, b) => a - b);
    const max = sorted[sorted.length - 1]!;
    console.log(
      `unavailability over ${windows.length} failovers: p50 ${(median(sorted) / 1000).toFixed(2)} s, max ${(max / 1000).toFixed(2)} s ` +
        `(target <= ${WINDOW_TARGET_MS / 1000} s: ${max <= WINDOW_TARGET_MS ? 'met' : 'NOT MET'})`,
    );
    if (max > WINDOW_TARGET_MS) failures.push(`unavailability ${max} ms > ${WINDOW_TARGET_MS} ms`);

    // 3. Faults: the standby's machine lost, then etcd.
    console.log(`\nfaults under load:`);
    const { primary, syncStandby } = await roles();
    const standbyLost = await underLoad(ha, async () => {
      await sleep(2000);
      await layout('stop', syncStandby!);
      await sleep(10_000);
    });
    const alone = await roles();
    console.log(
      `  standby ${syncStandby} lost for 10 s: ${standbyLost.failed} failed requests, slowest write ${(standbyLost.slowestMs / 1000).toFixed(2)} s ` +
        `(commits wait until Patroni drops the standby from synchronous_standby_names); primary ${alone.primary}`,
    );
    if (standbyLost.failed > 0) failures.push(`${standbyLost.failed} requests failed with the standby down`);
    await layout('start', syncStandby!);
    await waitHealthy();
    const etcdLost = await underLoad(ha, async () => {
      await sleep(2000);
      await layout('stop', 'etcd');
      // Three times the leader lock's ttl (10 s): without failsafe_mode the primary would demote.
      await sleep(30_000);
    });
    const withoutEtcd = await roles();
    console.log(
      `  etcd lost for 30 s: ${etcdLost.failed} failed requests, slowest write ${(etcdLost.slowestMs / 1000).toFixed(2)} s; ` +
        `primary ${withoutEtcd.primary ?? 'none'} (was ${primary})`,
    );
    if (etcdLost.failed > 0) failures.push(`${etcdLost.failed} requests failed with etcd down`);
    if (withoutEtcd.primary !== primary) failures.push('the primary changed with etcd down');
    await layout('start', 'etcd');
    await waitHealthy();

    // 4. Nothing lost, nothing twice, the books balance, every event delivered.
    console.log(`\nchecks on the last primary:`);
    failures.push(...(await verify(ha)));
    console.log(failures.length === 0 ? '\nfailover: ok' : `\nfailover: FAILED (${failures.join('; ')})`);
    if (failures.length > 0) process.exitCode = 1;
  } finally {
    for (const target of targets) {
      target.agent.destroy();
      await target.worker.stop().catch(() => {});
      await target.api.stop().catch(() => {});
    }
    await receiver.close();
    if (!process.env.BENCH_HA_KEEP) {
      const logs = path.join(os.tmpdir(), 'commerce-ha-logs');
      await layout('down', { HA_KEEP_LOGS: logs });
      console.log(`the layout's logs (Patroni, PostgreSQL, etcd, HAProxy): ${logs}`);
    }
  }
}
