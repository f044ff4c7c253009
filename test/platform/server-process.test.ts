import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { adminCliWith } from '../support/admin-cli.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { expectStatus, sendRequest } from '../support/harness.js';
import { nodeEntry } from '../support/node-entry.js';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

interface ServerProcess {
  child: ChildProcess;
  output: () => string;
}

async function startServer(env: NodeJS.ProcessEnv, args: string[] = []): Promise<ServerProcess> {
  const child = spawn(process.execPath, [...nodeEntry('src/server.ts'), ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start: ${output}`)), 180_000);
    const onData = (chunk: Buffer) => {
      output += String(chunk);
      if (output.includes('"msg":"started"')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', () => {
      clearTimeout(timer);
      reject(new Error(`server exited early: ${output}`));
    });
  });
  return { child, output: () => output };
}

/** Runs a program of the repository to its end without blocking this process (spawnSync would). */
async function runToExit(program: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, nodeEntry(program), {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += String(chunk)));
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, stderr };
}

async function stopServer(server: ServerProcess): Promise<number | null> {
  server.child.kill('SIGTERM');
  // 'close', not 'exit': stdout may still hold the last lines ("stopped") when the process exits.
  const [code] = (await once(server.child, 'close')) as [number | null];
  return code;
}

/** Whether a TCP connection to the address is refused (or times out): nothing listens there for us. */
function connectionRefused(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port, timeout: 2000 });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(true));
  });
}

/** An in-process command with --json that must succeed: its parsed output. */
async function adminJson(env: NodeJS.ProcessEnv, ...args: string[]) {
  const result = await adminCliWith(env, ...args, '--json');
  assert.equal(result.code, 0, result.stderr);
  return JSON.parse(result.stdout);
}

/** The admin CLI as a real process (`node src/cli/admin.ts`): proves the program and its exit code. */
function adminProcess(env: NodeJS.ProcessEnv, ...args: string[]) {
  const result = spawnSync(process.execPath, [...nodeEntry('src/cli/admin.ts'), ...args], {
    env: { ...process.env, ...env },
    encoding: 'utf8',
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('the server process and the admin CLI', () => {
  let dataDir: string;
  let database: TestDatabase | undefined;
  let env: NodeJS.ProcessEnv;
  let cliEnv: NodeJS.ProcessEnv;
  let server: ServerProcess;
  let badSetting: Promise<{ code: number | null; stderr: string }>;

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'devapi-server-'));
    // Started now, beside the first start: it stops at the configuration, before any database.
    badSetting = runToExit('src/server.ts', { PORT: 'eighty', LOG_LEVEL: 'chatty', DATA_DIR: dataDir });
    const port = await freePort();
    env = {
      PORT: String(port),
      // The default listener (decision 090): this machine only.
      HOST: '',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'info',
      ADMIN_TOKEN: '',
      REDIS_URL: '',
    };
    if (process.env.TEST_DATABASE_URL) {
      database = await createTestDatabase();
      env.DATABASE_URL = database.url;
    } else {
      env.DATABASE_URL = '';
      // The run's migrated template unpacked as the embedded database: the server's first start
      // (admin token, demo keys) without PGlite's initdb, ~10 s of CPU. Creating the database on
      // a first start is the quick-start test's part (test/platform/quick-start.test.ts).
      const template = process.env.TEST_PGLITE_TEMPLATE;
      if (template) {
        mkdirSync(path.join(dataDir, 'pglite'));
        const unpacked = spawnSync('tar', ['-xf', template, '-C', path.join(dataDir, 'pglite')], { encoding: 'utf8' });
        assert.equal(unpacked.status, 0, unpacked.stderr);
      }
    }
    server = await startServer(env);
    cliEnv = { ADMIN_URL: `http://127.0.0.1:${port}`, DATA_DIR: dataDir, ADMIN_TOKEN: '' };
  });
  afterAll(async () => {
    if (server?.child.exitCode === null) await stopServer(server);
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('first start generates and saves an admin token and prints the demo sandbox keys once', async () => {
    const token = readFileSync(path.join(dataDir, 'admin-token'), 'utf8').trim();
    assert.match(token, /^adm_[0-9a-f]{48}$/);
    assert.ok(server.output().includes(token), 'the generated token is printed');
    const keys = server.output().match(/sk_test_[0-9A-Za-z]{40}|pk_test_[0-9A-Za-z]{40}/g) ?? [];
    assert.equal(new Set(keys).size, 2, server.output());
    const demoKey = keys.find((k) => k.startsWith('sk_test_'))!;
    const response = await sendRequest(cliEnv.ADMIN_URL!, 'GET', '/api/v1/dev/nothing', { key: demoKey });
    assert.equal(response.status, 404);
    assert.doesNotMatch(server.output(), /_live_/, 'no live key for a business not approved for live');
  });

  test('without HOST the server listens on loopback only, and its banner says so (decision 090)', async () => {
    const port = Number(env.PORT);
    assert.match(
      server.output(),
      new RegExp(
        `^ready on http://localhost:${port} [^\n]*\nlistening on 127\\.0\\.0\\.1 port ${port}: this machine only`,
        'm',
      ),
    );
    expectStatus(await sendRequest(`http://127.0.0.1:${port}`, 'GET', '/health'), 200);
    // The machine's other addresses (its LAN's) reach nothing: before, the default was 0.0.0.0.
    // A machine without a LAN address (a CI container) still has the rest of 127/8 on Linux, which
    // a listener on every interface answers and one on 127.0.0.1 does not.
    const others = Object.values(os.networkInterfaces())
      .flat()
      .filter((nic) => nic && !nic.internal && nic.family === 'IPv4')
      .map((nic) => nic!.address);
    if (process.platform === 'linux') others.push('127.0.0.2');
    assert.ok(others.length > 0, 'no address other than 127.0.0.1 to try');
    for (const address of others) assert.ok(await connectionRefused(address, port), `${address}:${port} answers`);
  });

  test("the banner's business id and user line work with the server's own settings, no ADMIN_URL", async () => {
    const demoId = /^The demo business "Demo Shop" \((biz_[0-9A-Za-z]+)\)/m.exec(server.output())?.[1];
    assert.ok(demoId, server.output());
    assert.match(
      server.output(),
      new RegExp(`^To sign in at http://localhost:${env.PORT}/dashboard, create your user:$`, 'm'),
    );
    const line = /^ {2}npm run --silent admin -- (user create .*)$/m.exec(server.output())?.[1];
    assert.ok(line, server.output());
    const args = line.match(/'[^']*'|\S+/g)!.map((word) => word.replace(/^'(.*)'$/, '$1'));
    assert.deepEqual(args.slice(0, 4), ['user', 'create', '--business', demoId]);
    // What a newcomer has in the other terminal: the server's settings (here not the defaults).
    const sameSettings = { PORT: env.PORT, HOST: env.HOST, DATA_DIR: env.DATA_DIR, ADMIN_TOKEN: '', ADMIN_URL: '' };
    const user = adminProcess(sameSettings, ...args, '--json');
    assert.equal(user.code, 0, user.stderr);
    assert.equal(JSON.parse(user.stdout).businessId, demoId);
    const listed = adminProcess(sameSettings, 'business', 'list');
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, new RegExp(`^${demoId} +Demo Shop +no +on `, 'm'));
  });

  test('admin CLI commands print JSON and act on the running server', async () => {
    const created = adminProcess(cliEnv, 'business', 'create', '--name', 'CLI Shop', '--json');
    assert.equal(created.code, 0, created.stderr);
    const business = JSON.parse(created.stdout);
    assert.equal(business.business.name, 'CLI Shop');
    assert.equal(business.business.liveApproved, false);
    assert.match(business.shop.id, /^shop_/);
    // Not approved for live: sandbox keys only, until approve-live.
    assert.deepEqual(
      business.keys.map((k: { kind: string; environment: string }) => `${k.kind}/${k.environment}`).sort(),
      ['publishable/test', 'secret/test'],
    );

    const noShop = await adminJson(cliEnv, 'business', 'create', '--name', 'No shop', '--no-shop', '--approve-live');
    assert.equal(noShop.shop, null);
    assert.equal(noShop.business.liveApproved, true);

    const approved = await adminJson(cliEnv, 'business', 'approve-live', business.business.id);
    assert.equal(approved.liveApproved, true);
    assert.deepEqual(approved.keys.map((k: { kind: string; key: string }) => k.key.slice(0, 8)).sort(), [
      'pk_live_',
      'sk_live_',
    ]);

    const key = await adminJson(
      cliEnv,
      'key',
      'create',
      '--business',
      business.business.id,
      '--kind',
      'secret',
      '--env',
      'test',
      '--scopes',
      'intents:read',
      '--ip-allow',
      '127.0.0.1,10.0.0.0/8',
    );
    assert.match(key.key, /^sk_test_/);
    assert.deepEqual(key.scopes, ['intents:read']);
    assert.deepEqual(key.ipAllowlist, ['127.0.0.1', '10.0.0.0/8']);

    const listed = await adminJson(cliEnv, 'key', 'list', '--business', business.business.id);
    assert.equal(listed.items.length, 5, 'two sandbox keys, the two live ones of the approval, the new one');
    assert.ok(
      listed.items.every((k: Record<string, unknown>) => !('key' in k)),
      'key text is never listed',
    );

    assert.equal((await adminJson(cliEnv, 'key', 'suspend', key.id)).status, 'suspended');
    assert.equal((await adminJson(cliEnv, 'key', 'revoke', key.id)).status, 'revoked');
    const rotated = await adminJson(cliEnv, 'key', 'rotate', business.keys[0].id);
    assert.notEqual(rotated.key, business.keys[0].key);

    const fees = await adminJson(
      cliEnv,
      'fees',
      'set',
      '--business',
      business.business.id,
      '--provider-bps',
      '150',
      '--payer-fee',
      '20',
    );
    assert.deepEqual(fees, {
      businessId: business.business.id,
      providerBps: 150,
      payerFee: 20,
      tofBps: 500,
      tteBps: 0,
      revenueModel: 'COMMISSION',
      marginBps: 1000,
      payoutFeeFlat: 0,
      payoutFeeBps: 0,
    });

    assert.deepEqual(await adminJson(cliEnv, 'api', 'disable', '--business', business.business.id), {
      scope: business.business.id,
      apiEnabled: false,
    });
    assert.deepEqual(await adminJson(cliEnv, 'api', 'enable'), {
      scope: 'global',
      apiEnabled: true,
    });
  });

  test('admin CLI reports errors with a non-zero exit code', async () => {
    const unknown = await adminCliWith(cliEnv, 'key', 'suspend', 'key_missing', '--json');
    assert.equal(unknown.code, 1);
    assert.equal(JSON.parse(unknown.stderr).error.code, 'API_KEY_NOT_FOUND');
    const badUsage = await adminCliWith(cliEnv, 'business', 'create');
    assert.equal(badUsage.code, 2);
    assert.match(badUsage.stderr, /missing --name/);
    const wrongToken = adminProcess(
      { ...cliEnv, ADMIN_TOKEN: 'wrong-token-wrong-token' },
      'key',
      'list',
      '--business',
      'x',
    );
    assert.equal(wrongToken.code, 1);
    assert.match(wrongToken.stderr, /ADMIN_UNAUTHORIZED/);
  });

  test('SIGTERM stops the server cleanly with exit code 0; a restart does not seed again', async () => {
    assert.equal(await stopServer(server), 0);
    assert.match(server.output(), /"msg":"stopped"/);
    server = await startServer(env);
    assert.doesNotMatch(server.output(), /Demo Shop/);
    const ready = await sendRequest(cliEnv.ADMIN_URL!, 'GET', '/ready');
    expectStatus(ready, 200);
    assert.equal(await stopServer(server), 0);
  });

  test('the worker runs alone with --worker and stops on SIGTERM', async () => {
    const worker = await startServer({ ...env, PORT: '1' }, ['--worker']);
    assert.match(worker.output(), /"api":false,"worker":true/);
    assert.equal(await stopServer(worker), 0);
  });

  test('a bad setting stops the start with a clear message and exit code 1', async () => {
    const result = await badSetting;
    assert.equal(result.code, 1);
    assert.match(result.stderr, /Invalid configuration/);
    assert.match(result.stderr, /PORT="eighty"/);
    assert.match(result.stderr, /LOG_LEVEL="chatty"/);
    assert.doesNotMatch(result.stderr, /\bat .+:\d+:\d+/);
  });
});
