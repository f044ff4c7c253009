import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { expectStatus, sendRequest } from '../support/harness.js';

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
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts', ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += String(chunk)));
  child.stderr!.on('data', (chunk) => (output += String(chunk)));
  const deadline = Date.now() + 60_000;
  while (!output.includes('"msg":"started"')) {
    if (child.exitCode !== null) throw new Error(`server exited early: ${output}`);
    if (Date.now() > deadline) throw new Error(`server did not start: ${output}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { child, output: () => output };
}

async function stopServer(server: ServerProcess): Promise<number | null> {
  server.child.kill('SIGTERM');
  const [code] = (await once(server.child, 'exit')) as [number | null];
  return code;
}

function admin(env: NodeJS.ProcessEnv, ...args: string[]) {
  const result = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/admin.ts', ...args], {
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

  before(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'devapi-server-'));
    const port = await freePort();
    env = {
      PORT: String(port),
      HOST: '127.0.0.1',
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
    }
    server = await startServer(env);
    cliEnv = { ADMIN_URL: `http://127.0.0.1:${port}`, DATA_DIR: dataDir, ADMIN_TOKEN: '' };
  });
  after(async () => {
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
  });

  test('admin CLI commands print JSON and act on the running server', () => {
    const created = admin(cliEnv, 'business', 'create', '--name', 'CLI Shop', '--json');
    assert.equal(created.code, 0, created.stderr);
    const business = JSON.parse(created.stdout);
    assert.equal(business.business.name, 'CLI Shop');
    assert.equal(business.business.liveApproved, false);
    assert.match(business.shop.id, /^shop_/);
    assert.equal(business.keys.length, 4);
    assert.deepEqual(
      business.keys.map((k: { kind: string; environment: string }) => `${k.kind}/${k.environment}`).sort(),
      ['publishable/live', 'publishable/test', 'secret/live', 'secret/test'],
    );

    const noShop = JSON.parse(
      admin(cliEnv, 'business', 'create', '--name', 'No shop', '--no-shop', '--approve-live', '--json').stdout,
    );
    assert.equal(noShop.shop, null);
    assert.equal(noShop.business.liveApproved, true);

    const approved = JSON.parse(admin(cliEnv, 'business', 'approve-live', business.business.id, '--json').stdout);
    assert.equal(approved.liveApproved, true);

    const key = JSON.parse(
      admin(
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
        '--json',
      ).stdout,
    );
    assert.match(key.key, /^sk_test_/);
    assert.deepEqual(key.scopes, ['intents:read']);
    assert.deepEqual(key.ipAllowlist, ['127.0.0.1', '10.0.0.0/8']);

    const listed = JSON.parse(admin(cliEnv, 'key', 'list', '--business', business.business.id, '--json').stdout);
    assert.equal(listed.items.length, 5);
    assert.ok(
      listed.items.every((k: Record<string, unknown>) => !('key' in k)),
      'key text is never listed',
    );

    assert.equal(JSON.parse(admin(cliEnv, 'key', 'suspend', key.id, '--json').stdout).status, 'suspended');
    assert.equal(JSON.parse(admin(cliEnv, 'key', 'revoke', key.id, '--json').stdout).status, 'revoked');
    const rotated = JSON.parse(admin(cliEnv, 'key', 'rotate', business.keys[0].id, '--json').stdout);
    assert.notEqual(rotated.key, business.keys[0].key);

    const fees = JSON.parse(
      admin(
        cliEnv,
        'fees',
        'set',
        '--business',
        business.business.id,
        '--provider-bps',
        '150',
        '--payer-fee',
        '20',
        '--json',
      ).stdout,
    );
    assert.deepEqual(fees, {
      businessId: business.business.id,
      providerBps: 150,
      payerFee: 20,
      tofBps: 500,
      tteBps: 0,
    });

    assert.deepEqual(JSON.parse(admin(cliEnv, 'api', 'disable', '--business', business.business.id, '--json').stdout), {
      scope: business.business.id,
      apiEnabled: false,
    });
    assert.deepEqual(JSON.parse(admin(cliEnv, 'api', 'enable', '--json').stdout), {
      scope: 'global',
      apiEnabled: true,
    });
  });

  test('admin CLI reports errors with a non-zero exit code', () => {
    const unknown = admin(cliEnv, 'key', 'suspend', 'key_missing', '--json');
    assert.equal(unknown.code, 1);
    assert.equal(JSON.parse(unknown.stderr).error.code, 'NOT_FOUND');
    const badUsage = admin(cliEnv, 'business', 'create');
    assert.equal(badUsage.code, 2);
    assert.match(badUsage.stderr, /missing --name/);
    const wrongToken = admin({ ...cliEnv, ADMIN_TOKEN: 'wrong-token-wrong-token' }, 'key', 'list', '--business', 'x');
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

  test('a bad setting stops the start with a clear message and exit code 1', () => {
    const result = spawnSync(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
      env: { ...process.env, PORT: 'eighty', LOG_LEVEL: 'chatty', DATA_DIR: dataDir },
      encoding: 'utf8',
    });
    assert.equal(result.status, 1);
    assert.match(result.stderr, /Invalid configuration/);
    assert.match(result.stderr, /PORT="eighty"/);
    assert.match(result.stderr, /LOG_LEVEL="chatty"/);
    assert.doesNotMatch(result.stderr, /\bat .+:\d+:\d+/);
  });
});
