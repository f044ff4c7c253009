import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { sql } from 'kysely';
import pg from 'pg';
import pino from 'pino';
import { loadConfig } from '../../src/config.js';
import { databaseOptionsFor } from '../../src/db/configured.js';
import { LISTENER_APPLICATION_NAME, openDatabase, type Database } from '../../src/db/connect.js';
import { migrate } from '../../src/db/migrate.js';
import { randomBase62 } from '../../src/lib/ids.js';
import { startWorker, type Worker } from '../../src/worker/worker.js';
import { testDatabaseUrl } from '../support/database.js';
import { expectStatus, startTestApp, type TestApp } from '../support/harness.js';
import { freePort } from '../support/started-server.js';
import { createIntent } from '../intents/support.js';
import { webhookHelpers } from '../webhooks/support.js';

/**
 * The app through PgBouncer in transaction mode (decision 095), as the HA layout runs it: a
 * throwaway PgBouncer on a free port in front of the test PostgreSQL, at most SERVER_CONNECTIONS
 * server connections, DB_PREPARED_STATEMENTS=false, LISTEN on PostgreSQL itself
 * (DATABASE_LISTEN_URL). Migrations, payments and the worker's periodic tasks go through the
 * pooler; a webhook arrives only because the listener heard the commit's NOTIFY.
 */
const PGBOUNCER = ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer'].find((file) => existsSync(file));
const SERVER_CONNECTIONS = 4;
/** PostgreSQL only, and only where Debian's pgbouncer is installed. */
const skip = !testDatabaseUrl || !PGBOUNCER;

async function query<R extends pg.QueryResultRow>(url: string, text: string): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(text)).rows;
  } finally {
    await client.end();
  }
}

/** PgBouncer in a directory of its own; it refuses to run as root, so root runs it as nobody. */
async function startPgBouncer(server: URL): Promise<{ url: (database: string) => string; stop(): Promise<void> }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pgbouncer-test-'));
  const port = await freePort();
  const user = decodeURIComponent(server.username) || 'postgres';
  // The test server's own password, if it has one: PgBouncer logs in with it.
  writeFileSync(path.join(dir, 'userlist.txt'), `"${user}" "${decodeURIComponent(server.password)}"\n`, {
    mode: 0o600,
  });
  writeFileSync(
    path.join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `* = host=${server.hostname} port=${server.port || 5432} connect_query='SET max_parallel_workers_per_gather = 0'`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${dir}/userlist.txt`,
      `admin_users = ${user}`,
      'pool_mode = transaction',
      `max_db_connections = ${SERVER_CONNECTIONS}`,
      `default_pool_size = ${SERVER_CONNECTIONS}`,
      'ignore_startup_parameters = extra_float_digits,options',
      '',
    ].join('\n'),
  );
  const root = process.getuid?.() === 0;
  if (root) for (const file of ['', 'userlist.txt', 'pgbouncer.ini']) chownSync(path.join(dir, file), 65534, 65534);
  const command = root
    ? ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', '--', PGBOUNCER!]
    : [PGBOUNCER!];
  const child: ChildProcess = spawn(command[0]!, [...command.slice(1), path.join(dir, 'pgbouncer.ini')], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  child.stderr?.on('data', (chunk: Buffer) => (log += chunk.toString()));
  const url = (database: string) => `postgres://${encodeURIComponent(user)}@127.0.0.1:${port}/${database}`;
  for (const deadline = Date.now() + 15_000; ;) {
    if (child.exitCode !== null) throw new Error(`pgbouncer exited: ${log}`);
    const ready = await query(url('pgbouncer'), 'SHOW VERSION').then(
      () => true,
      () => false,
    );
    if (ready) break;
    if (Date.now() > deadline) throw new Error(`pgbouncer did not start: ${log}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGINT');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

describe('the app through PgBouncer in transaction mode (issue 55, decision 095)', { skip }, () => {
  let bouncer: Awaited<ReturnType<typeof startPgBouncer>>;
  let t: TestApp;
  let worker: Worker;
  let hooks: ReturnType<typeof webhookHelpers>;
  let name: string;
  let direct: string;
  let pooled: string;
  let database: Database;

  beforeAll(async () => {
    const server = new URL(testDatabaseUrl!);
    bouncer = await startPgBouncer(server);
    name = `devapi_pgbouncer_${randomBase62(8).toLowerCase()}`;
    await query(testDatabaseUrl!, `CREATE DATABASE ${name}`);
    const directUrl = new URL(server);
    directUrl.pathname = `/${name}`;
    direct = directUrl.toString();
    pooled = bouncer.url(name);
    // The settings as an operator writes them, through the config's own path.
    const config = loadConfig({
      DATABASE_URL: pooled,
      DATABASE_LISTEN_URL: direct,
      DB_PREPARED_STATEMENTS: 'false',
      DB_POOL_SIZE: '10',
    });
    const options = databaseOptionsFor(config);
    assert.equal(options.kind, 'postgres');
    database = await openDatabase(options);
    // Every migration, each one's statements in one transaction, through the pooler.
    assert.ok((await migrate(database)).length > 50);
    t = await startTestApp({
      config: { WEBHOOK_ALLOW_PRIVATE: 'true', RATE_LIMIT_TEST_PER_MINUTE: '100000' },
      testDatabase: {
        database,
        url: pooled,
        drop: async () => {
          await database.close();
          await query(testDatabaseUrl!, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        },
      },
    });
    hooks = webhookHelpers(t);
    // No fallback poll within the test: a delivery claimed is one the listener heard of.
    worker = startWorker(t.runtime, pino({ level: 'silent' }), undefined, 250, { pollMs: 600_000 });
  });
  afterAll(async () => {
    await worker?.stop();
    await hooks?.closeAll();
    await t?.close();
    await bouncer?.stop();
  });

  test('payments, a webhook woken by NOTIFY on the direct connection, the ledger check', async () => {
    const sk = (await t.createBusiness()).keys.secretTest;
    const { receiver } = await hooks.receiverWithEndpoint(sk, ['payment.created', 'payment.confirmed']);
    // The worker listens on PostgreSQL itself, not through the pooler.
    const listening = await query<{ count: string }>(
      direct,
      `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
         AND application_name = '${LISTENER_APPLICATION_NAME}'`,
    );
    assert.equal(Number(listening[0]!.count), 1);

    // More requests at once than server connections: transactions take turns on them.
    const payments = 24;
    await Promise.all(
      Array.from({ length: payments }, async (_, i) => {
        const intent = await createIntent(t, sk, { amount: 1000 + i });
        const paid = await t.request('POST', `/api/v1/dev/intents/${intent.referenceNumber}/simulate`, {
          key: sk,
          body: {},
          idempotencyKey: true,
        });
        expectStatus(paid, 200);
      }),
    );
    await receiver.waitFor(2 * payments, 30_000);

    const check = await t.admin('GET', '/ledger/check');
    expectStatus(check, 200);
    assert.equal(check.body.data.ok, true, check.text);

    // It all went through PgBouncer, on no more server connections than it was allowed.
    const pools = await query<{ database: string; sv_active: string; sv_idle: string; sv_used: string }>(
      bouncer.url('pgbouncer'),
      'SHOW POOLS',
    );
    const pool = pools.find((row) => row.database === name);
    assert.ok(pool, 'a pool for the database');
    assert.ok(Number(pool.sv_active) + Number(pool.sv_idle) + Number(pool.sv_used) <= SERVER_CONNECTIONS);
    const backends = await sql<{ count: number }>`SELECT count(*)::int AS count FROM pg_stat_activity
      WHERE datname = current_database() AND application_name <> ${LISTENER_APPLICATION_NAME}
        AND backend_type = 'client backend'`.execute(t.runtime.db);
    assert.ok(backends.rows[0]!.count <= SERVER_CONNECTIONS, `${backends.rows[0]!.count} server connections`);
  });
});
