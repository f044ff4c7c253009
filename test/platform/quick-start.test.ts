/**
 * The README's quick start, as a newcomer runs it: the built server started the way `npm start`
 * starts it (plain Node, no TypeScript loader) on a fresh data directory, the sandbox key read from
 * what it prints, then the README's own curl commands: create an intent and read it back.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { expectError, sendRequest } from '../support/harness.js';
import { ensureBuilt, poll, start, stop, type StartedProcess } from '../support/started-server.js';

const root = process.cwd();

/** The quick start's commands, continuation lines joined, comments and blank lines left out. */
function quickStartCommands(): string[] {
  const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
  const section = readme.slice(
    readme.indexOf('## Quick start'),
    readme.indexOf('\n## ', readme.indexOf('## Quick start') + 1),
  );
  const blocks = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
  const block = blocks.find((text) => text.includes('$API/intents'));
  assert.ok(block, 'the quick start has a shell block calling $API/intents');
  return block
    .replace(/\\\n\s*/g, '')
    .split('\n')
    .map((line) => line.replace(/\s+#.*$/, '').trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

function shell(script: string, env: NodeJS.ProcessEnv): string {
  const result = spawnSync('sh', ['-c', script], { env: { ...process.env, ...env }, encoding: 'utf8' });
  assert.equal(result.status, 0, `${script}\n${result.stderr}`);
  return result.stdout;
}

describe('the README quick start on a fresh data directory', () => {
  let workDir: string;
  let database: TestDatabase | undefined;
  let env: NodeJS.ProcessEnv;
  let server: StartedProcess;
  let baseUrl: string;
  let key: string;

  beforeAll(async () => {
    ensureBuilt();
    workDir = mkdtempSync(path.join(os.tmpdir(), 'devapi-quick-start-'));
    env = { PORT: '0', HOST: '127.0.0.1', DATA_DIR: '', ADMIN_TOKEN: '', REDIS_URL: '', SEED_DEMO: '', LOG_LEVEL: '' };
    if (process.env.TEST_DATABASE_URL) {
      database = await createTestDatabase();
      env.DATABASE_URL = database.url;
    } else {
      env.DATABASE_URL = '';
    }
    server = start(workDir, env);
    const port = await poll(
      '"ready on" line',
      server,
      () => /^ready on http:\/\/localhost:(\d+) /m.exec(server.output())?.[1],
    );
    baseUrl = `http://127.0.0.1:${port}`;
    key = await poll('sandbox key', server, () => /^ {2}KEY=(sk_test_[0-9A-Za-z]{40})$/m.exec(server.output())?.[1]);
  });
  afterAll(async () => {
    if (server) await stop(server);
    await database?.drop();
    rmSync(workDir, { recursive: true, force: true });
  });

  test('the first start says what it does, step by step, then prints the keys as a plain block', () => {
    const lines = server.output().split('\n');
    const at = (pattern: RegExp) => lines.findIndex((line) => pattern.test(line));
    // The embedded database is unpacked from the image `npm install` made, not created by initdb
    // and the migrations: nothing is left to apply.
    const creating = database
      ? at(/^connecting to PostgreSQL at /)
      : at(/^creating the embedded database in \.\/data\/pglite from the database image$/);
    if (!database) assert.ok(at(/^ {2}the schema is up to date$/) > creating, server.output());
    const migrating = at(/^applying migrations$/);
    const ready = at(/^ready on http:\/\/localhost:\d+ /);
    const keyLine = at(/^ {2}KEY=sk_test_/);
    assert.ok(creating >= 0 && creating < migrating && migrating < ready && ready < keyLine, server.output());
    assert.match(server.output(), /^ {2}PUBLISHABLE_KEY=pk_test_[0-9A-Za-z]{40}$/m);
    for (const line of lines.filter((l) => l.startsWith('{')))
      assert.doesNotMatch(line, /sk_test_|pk_test_|adm_/, 'no secret inside a JSON log line');
  });

  test("the README's commands create an intent with the printed key and read it back", () => {
    const commands = quickStartCommands();
    const setup = commands.filter((line) => !line.startsWith('curl '));
    const calls = commands.filter((line) => line.startsWith('curl '));
    const create = calls.find((line) => !line.includes('PI-...'));
    const read = calls.find((line) => line.includes('PI-...'));
    assert.ok(create && read, `a create and a read in ${JSON.stringify(commands)}`);
    const script = (line: string) => [...setup, line].join('\n').replaceAll('http://localhost:8080', baseUrl);

    const created = JSON.parse(shell(script(create), { KEY: key }));
    assert.equal(created.success, true, JSON.stringify(created));
    assert.match(created.data.referenceNumber, /^PI-/);
    assert.equal(created.data.status, 'PENDING');
    const readBack = JSON.parse(shell(script(read.replace('PI-...', created.data.referenceNumber)), { KEY: key }));
    assert.equal(readBack.data.referenceNumber, created.data.referenceNumber);
    assert.equal(readBack.data.amount, created.data.amount);
  });

  test('an http:// webhook URL is refused with a message naming the development switch', async () => {
    const response = await sendRequest(baseUrl, 'POST', '/api/v1/dev/webhooks/endpoints', {
      key,
      idempotencyKey: true,
      body: { url: 'http://127.0.0.1:9/hook', events: ['payment.confirmed'] },
    });
    expectError(response, 400, 'INVALID_WEBHOOK_URL');
    assert.match(response.body.error.message, /WEBHOOK_ALLOW_PRIVATE=true/);
  });

  test('a later start opens the same data, prints no keys and says ready', async (t) => {
    assert.equal(await stop(server), 0);
    const startedAt = Date.now();
    server = start(workDir, env);
    await poll('"ready on" line', server, () => (/^ready on /m.test(server.output()) ? true : undefined));
    t.annotate(`second start ready in ${((Date.now() - startedAt) / 1000).toFixed(1)} s`);
    if (!database) assert.match(server.output(), /^opening the embedded database in \.\/data\/pglite$/m);
    assert.match(server.output(), /^ {2}the schema is up to date$/m);
    assert.doesNotMatch(server.output(), /KEY=|Admin token/);
  });
});
