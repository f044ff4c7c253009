/**
 * `npm run bench -- bouncer` (issue 55, decision 095): PgBouncer in the HA layout of
 * scripts/ha/layout.sh. Two sides in one run, each 8 API processes and 1 worker with
 * DB_POOL_SIZE=10 (90 client connections), each on a database of its own on the layout's primary:
 * - pooled: DATABASE_URL through PgBouncer (transaction pooling, at most 50 server connections per
 *   database), DB_PREPARED_STATEMENTS=false, DATABASE_LISTEN_URL through HAProxy;
 * - direct: DATABASE_URL through HAProxy, prepared statements on (the layout before PgBouncer).
 * Create-and-pay load (64 clients) on each side in alternating rounds: throughput (target >=
 * 0.9x direct), latencies, CPU per request of each process group, and the most server
 * connections each database had (pg_stat_activity, sampled every 100 ms). Then on each side:
 * `admin ledger check` passes and every event's deliveries reached the receiver, once. The layout
 * is brought up at the start and torn down at the end. Exits non-zero when a check fails.
 */
import { execFile } from 'node:child_process';
import http from 'node:http';
import { promisify } from 'node:util';
import pg from 'pg';
import { LISTENER_APPLICATION_NAME } from '../src/db/connect.js';
import { clusterEnv, startWorker } from './cluster.js';
import { pidIn, queryOnce, scratchDatabase, treeCpuMs } from './failover.js';
import { ADMIN_TOKEN, createBusiness, keyOf } from './intents.js';
import { printThroughput } from './report.js';
import { HA_DIR, haUrl, layout, waitHealthy } from '../test/hardening/ha-layout.js';
import { sendRequest, timeSamples, type LoadResult } from './support/load.js';
import { startServer, type ServerProcess } from './support/processes.js';
import { startReceiver } from './support/receiver.js';
import { inRounds, median, roundCount, roundDurationMs } from './support/rounds.js';

const PROCESSES = 8;
const POOL_SIZE = 10;
const CLIENTS = Number(process.env.BENCH_BOUNCER_CLIENTS ?? 64);
/** The layout's PgBouncer ceiling (scripts/ha/layout.sh, HA_PGBOUNCER_SERVER_CONNECTIONS). */
const SERVER_CONNECTIONS = Number(process.env.HA_PGBOUNCER_SERVER_CONNECTIONS ?? 50);
const PGBOUNCER_PORT = Number(process.env.HA_PGBOUNCER_PORT ?? 5446);
const RATIO_TARGET = 0.9;
const API = '/api/v1/dev';
/** What creating and paying an intent sends (a sandbox payment may also fail). */
const PAYMENT_EVENTS = ['payment.created', 'payment.confirmed', 'payment.failed'];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Side {
  name: 'pooled' | 'direct';
  database: string;
  /** PostgreSQL through HAProxy: the checks' queries, never pooled. */
  directUrl: string;
  apis: ServerProcess[];
  worker: { pid: number; stop(): Promise<void> };
  keys: string[];
  agent: http.Agent;
  cpuSpent: Record<string, number>;
  sent: number;
  /** The most server connections of the app's pools seen at once (the listener's aside). */
  maxConnections: number;
}

/** The URL of `database` on the layout's server behind `port` (HAProxy's or PgBouncer's). */
function urlOf(database: string, port?: number): string {
  const url = new URL(haUrl());
  url.pathname = `/${database}`;
  if (port !== undefined) url.port = String(port);
  return url.toString();
}

/** CPU so far of each process group of a side (both sides share PostgreSQL, HAProxy and PgBouncer). */
function cpuOf(side: Side, primary: string): Record<string, number> {
  const standby = primary === 'pg1' ? 'pg2' : 'pg1';
  return {
    'API + worker': side.apis.reduce((sum, api) => sum + treeCpuMs(api.pid), treeCpuMs(side.worker.pid)),
    'PostgreSQL primary': treeCpuMs(pidIn(`${HA_DIR}/${primary}/data/postmaster.pid`)),
    'PostgreSQL standby': treeCpuMs(pidIn(`${HA_DIR}/${standby}/data/postmaster.pid`)),
    PgBouncer: treeCpuMs(pidIn(`${HA_DIR}/pids/pgbouncer.pid`)),
    HAProxy: treeCpuMs(pidIn(`${HA_DIR}/pids/haproxy.pid`)),
  };
}

async function startSide(name: Side['name'], receiverUrl: string): Promise<Side> {
  const directUrl = await scratchDatabase(haUrl());
  const database = new URL(directUrl).pathname.slice(1);
  const settings =
    name === 'pooled'
      ? { DB_PREPARED_STATEMENTS: 'false', DATABASE_LISTEN_URL: directUrl }
      : ({} as Record<string, string>);
  const env = clusterEnv(name === 'pooled' ? urlOf(database, PGBOUNCER_PORT) : directUrl, {
    ...settings,
    DB_POOL_SIZE: String(POOL_SIZE),
    RATE_LIMIT_TEST_PER_MINUTE: '1000000000',
    LOG_LEVEL: 'error',
  });
  const apis: ServerProcess[] = [];
  for (let i = 0; i < PROCESSES; i++) apis.push(await startServer('src/server.ts', ['--api'], env, '/ready'));
  const worker = await startWorker(env);
  const keys: string[] = [];
  // One merchant per API process, each with an endpoint taking the payments' events.
  for (let i = 0; i < PROCESSES; i++) {
    const business = await createBusiness(apis[i]!.url, `${name} merchant ${i}`);
    const key = `Bearer ${keyOf(business.keys, 'secret', 'test')}`;
    const response = await fetch(`${apis[i]!.url}${API}/webhooks/endpoints`, {
      method: 'POST',
      headers: { authorization: key, 'content-type': 'application/json', 'x-idempotency-key': `hook-${name}-${i}` },
      body: JSON.stringify({ url: `${receiverUrl}/hook/${name}/${i}`, events: PAYMENT_EVENTS }),
    });
    if (response.status !== 201) throw new Error(`endpoint: ${response.status} ${await response.text()}`);
    keys.push(key);
  }
  return {
    name,
    database,
    directUrl,
    apis,
    worker,
    keys,
    agent: new http.Agent({ keepAlive: true, maxSockets: CLIENTS }),
    cpuSpent: {},
    sent: 0,
    maxConnections: 0,
  };
}

/**
 * Create-and-pay for `durationMs` after a 1 s warm-up: each client creates an intent with the key
 * of its API process's merchant, then pays it (sandbox simulation), and again. Every answer
 * after the warm-up counts; a status other than the expected one is an error.
 */
async function measure(side: Side, durationMs: number, primary: string): Promise<LoadResult> {
  const warmupEnds = Date.now() + 1000;
  const ends = warmupEnds + durationMs;
  const latencies: number[] = [];
  let sent = 0;
  let errors = 0;
  let firstError: string | undefined;
  const cpuBefore = cpuOf(side, primary);
  const call = async (base: URL, key: string, path: string, body: unknown, expect: number) => {
    const started = Date.now();
    sent += 1;
    const { status, body: text } = await sendRequest(side.agent, base, {
      method: 'POST',
      path: `${API}${path}`,
      headers: { authorization: key, 'x-idempotency-key': `${side.name}-${started}-${Math.random()}` },
      body: JSON.stringify(body),
    }).catch((error: unknown) => ({ status: 0, body: String(error) }));
    const answered = Date.now();
    if (started >= warmupEnds && answered <= ends) {
      if (status === expect) latencies.push(answered - started);
      else errors += 1;
    }
    if (status !== expect) {
      firstError ??= `${path} -> ${status} ${text.slice(0, 200)}`;
      return undefined;
    }
    return JSON.parse(text) as { data: { referenceNumber: string } };
  };
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, c) => {
      const base = new URL(side.apis[c % PROCESSES]!.url);
      const key = side.keys[c % PROCESSES]!;
      for (let n = 0; Date.now() < ends; n++) {
        // 1000-1299 centimes: never 1313, the sandbox amount that always fails.
        const intent = await call(base, key, '/intents', { amount: 1000 + (n % 300), label: 'Pooled?' }, 201);
        if (intent) await call(base, key, `/intents/${intent.data.referenceNumber}/simulate`, {}, 200);
      }
    }),
  );
  const cpuAfter = cpuOf(side, primary);
  for (const [group, ms] of Object.entries(cpuAfter))
    side.cpuSpent[group] = (side.cpuSpent[group] ?? 0) + ms - (cpuBefore[group] ?? 0);
  side.sent += sent;
  latencies.sort((a, b) => a - b);
  const { p50Ms, p99Ms } = timeSamples(latencies);
  return {
    requests: latencies.length,
    sent,
    errors,
    perSecond: latencies.length / (durationMs / 1000),
    p50Ms,
    p99Ms,
    ...(firstError ? { firstError } : {}),
    seconds: durationMs / 1000,
    latenciesMs: latencies,
  };
}

/** Samples each side's server connections every 100 ms until stopped (the superuser's, direct). */
function sampleConnections(sides: Side[]): { stop(): Promise<void> } {
  let stopped = false;
  const done = (async () => {
    const client = new pg.Client({ connectionString: haUrl('postgres') });
    client.on('error', () => {});
    await client.connect();
    try {
      while (!stopped) {
        const { rows } = await client.query<{ datname: string; count: number }>(
          `SELECT datname, count(*)::int AS count FROM pg_stat_activity
           WHERE backend_type = 'client backend' AND application_name <> $1 AND datname = ANY ($2)
           GROUP BY datname`,
          [LISTENER_APPLICATION_NAME, sides.map((side) => side.database)],
        );
        for (const row of rows) {
          const side = sides.find((s) => s.database === row.datname)!;
          side.maxConnections = Math.max(side.maxConnections, row.count);
        }
        await sleep(100);
      }
    } finally {
      await client.end().catch(() => {});
    }
  })();
  return {
    async stop() {
      stopped = true;
      await done;
    },
  };
}

/** The books balance, and every event's deliveries (one per endpoint) reached the receiver once. */
async function check(side: Side, accepted: Set<string>): Promise<string[]> {
  const failures: string[] = [];
  const ledger = await promisify(execFile)(process.execPath, ['dist/cli/admin.js', 'ledger', 'check'], {
    env: { ...process.env, ADMIN_URL: side.apis[0]!.url, ADMIN_TOKEN },
  }).then(
    () => true,
    () => false,
  );
  if (!ledger) failures.push(`${side.name}: ledger check fails`);
  const deadline = Date.now() + 180_000;
  let counts: { events: string; deliveries: string; missing: string; pending: string };
  for (;;) {
    [counts] = (await queryOnce<typeof counts>(
      side.directUrl,
      `SELECT (SELECT count(*) FROM events) AS events, (SELECT count(*) FROM webhook_deliveries) AS deliveries,
         (SELECT count(*) FROM webhook_deliveries WHERE status <> 'SUCCEEDED') AS pending,
         (SELECT count(*) FROM events ev JOIN webhook_endpoints e ON e.business_id = ev.business_id
            AND e.environment = ev.environment AND ev.event = ANY (e.events)
          WHERE NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = ev.id AND d.endpoint_id = e.id)
         ) AS missing`,
    )) as [typeof counts];
    if ((Number(counts.pending) === 0 && Number(counts.missing) === 0) || Date.now() > deadline) break;
    await sleep(500);
  }
  const ids = await queryOnce<{ id: string }>(side.directUrl, `SELECT id FROM webhook_deliveries`);
  const unseen = ids.filter((row) => !accepted.has(row.id)).length;
  console.log(
    `  ${side.name}: admin ledger check ${ledger ? 'passes' : 'FAILS'}; ${counts.events} events, ` +
      `${counts.deliveries} deliveries (${counts.missing} missing, ${counts.pending} not SUCCEEDED, ` +
      `${unseen} never reached the receiver)`,
  );
  if (Number(counts.missing) > 0) failures.push(`${side.name}: ${counts.missing} deliveries missing`);
  if (Number(counts.pending) > 0) failures.push(`${side.name}: ${counts.pending} deliveries not delivered`);
  if (unseen > 0) failures.push(`${side.name}: ${unseen} deliveries never reached the receiver`);
  return failures;
}

export async function bouncerSuite(): Promise<void> {
  const rounds = roundCount();
  const roundMs = roundDurationMs();
  const failures: string[] = [];
  const receiver = await startReceiver();
  const sides: Side[] = [];
  console.log(
    `bouncer: the HA layout (Patroni primary + synchronous standby, HAProxy, PgBouncer in transaction mode at most ` +
      `${SERVER_CONNECTIONS} server connections per database); per side ${PROCESSES} API processes + 1 worker, ` +
      `DB_POOL_SIZE=${POOL_SIZE}; ${CLIENTS} clients creating and paying intents; pooled (PgBouncer, ` +
      `DB_PREPARED_STATEMENTS=false, LISTEN direct) beside direct (HAProxy, prepared statements), ` +
      `${rounds} rounds of ${roundMs / 1000} s in turn; load, processes and both members share the machine's cores`,
  );
  try {
    await layout('down');
    const began = Date.now();
    await layout('up');
    console.log(`layout up in ${((Date.now() - began) / 1000).toFixed(1)} s`);
    const primary = await waitHealthy();
    const pooled = await startSide('pooled', receiver.url);
    sides.push(pooled);
    const direct = await startSide('direct', receiver.url);
    sides.push(direct);

    const sampler = sampleConnections(sides);
    let measured;
    try {
      measured = await inRounds(rounds, {
        pooled: async () => ({ result: await measure(pooled, roundMs, primary), cpu: undefined }),
        direct: async () => ({ result: await measure(direct, roundMs, primary), cpu: undefined }),
      });
    } finally {
      await sampler.stop();
    }
    const ratios = measured.pooled.rounds.map((run, i) => run.perSecond / measured.direct.rounds[i]!.perSecond);
    printThroughput(
      `requests answered per second (create and pay, half each), ${CLIENTS} clients over ${PROCESSES} API processes; ` +
        `${rounds} rounds of ${roundMs / 1000} s in turn`,
      [
        {
          name: 'PgBouncer / direct',
          ours: measured.pooled.result,
          baseline: measured.direct.result,
          ratios,
          target: RATIO_TARGET,
        },
      ],
    );
    if (median(ratios) < RATIO_TARGET) failures.push(`throughput ratio ${median(ratios).toFixed(2)} < ${RATIO_TARGET}`);
    console.log(
      `\nCPU per request, all rounds (ms; warm-up included; one machine, so the standby's is the same cores'):`,
    );
    for (const side of sides) {
      const per = Object.entries(side.cpuSpent).map(([group, ms]) => [group, ms / (side.sent || 1)] as const);
      const total = per.reduce((sum, [, ms]) => sum + ms, 0);
      console.log(
        `  ${side.name}: ${per.map(([group, ms]) => `${group} ${ms.toFixed(2)}`).join(', ')}; total ${total.toFixed(2)}`,
      );
    }
    const clientConnections = (PROCESSES + 1) * POOL_SIZE;
    console.log(
      `\nmost server connections at once (pg_stat_activity every 100 ms; the worker's listening connection aside), ` +
        `of ${clientConnections} client connections per side: pooled ${pooled.maxConnections} ` +
        `(ceiling ${SERVER_CONNECTIONS}: ${pooled.maxConnections <= SERVER_CONNECTIONS ? 'held' : 'EXCEEDED'}), direct ${direct.maxConnections}`,
    );
    if (pooled.maxConnections > SERVER_CONNECTIONS)
      failures.push(`${pooled.maxConnections} server connections through PgBouncer > ${SERVER_CONNECTIONS}`);

    console.log(`\nchecks:`);
    for (const side of sides) failures.push(...(await check(side, receiver.accepted)));
    if (receiver.stats.duplicates > 0) failures.push(`${receiver.stats.duplicates} deliveries accepted twice`);
    console.log(`  deliveries accepted twice by the receiver: ${receiver.stats.duplicates}`);
    console.log(failures.length === 0 ? '\nbouncer: ok' : `\nbouncer: FAILED (${failures.join('; ')})`);
    if (failures.length > 0) process.exitCode = 1;
  } finally {
    for (const side of sides) {
      side.agent.destroy();
      await side.worker.stop().catch(() => {});
      for (const api of side.apis) await api.stop().catch(() => {});
    }
    await receiver.close();
    if (!process.env.BENCH_HA_KEEP) await layout('down');
  }
}
