/**
 * Issue 47 item 2, from outside: the built server started as `npm start` starts it, 40 clients
 * that ask for a large export and then read nothing, and what the process shows meanwhile: its
 * resident memory, its open sockets. The exact figures are the bench's (`npm run bench --
 * downloads`, docs/benchmarks.md); the margins here are wide, for a machine shared with a CPU hog.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { ADMIN_TOKEN, expectError, expectStatus, sendRequest } from '../support/harness.js';
import { ensureBuilt, poll, start, stop, type StartedProcess } from '../support/started-server.js';
import { complete, stalledDownload } from '../support/stalled-download.js';

const STALLED = 40;
/** Long enough for the 40 to be opened (each pushes some MB into its socket first) on a loaded machine. */
const STALL_SECONDS = 45;
/** Products of about 1 kB each in two imports: an export of some 12 MB, far more than socket buffers hold. */
const PRODUCTS_PER_IMPORT = 6_000;
/** What 40 stalled downloads may add to the server's resident memory here (the bench measures < 20 MB). */
const GROWTH_LIMIT_MB = 80;

function rssMb(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(match?.[1]) / 1024;
}

/** The server's open file descriptors: one per connection it keeps, among others. */
function openFiles(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).length;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('40 stalled downloads against the server process (issue 47 item 2)', () => {
  let workDir: string;
  let database: TestDatabase | undefined;
  let server: StartedProcess;
  let baseUrl: string;
  let key: string;

  beforeAll(async () => {
    ensureBuilt();
    workDir = mkdtempSync(path.join(os.tmpdir(), 'devapi-stalled-'));
    const env: NodeJS.ProcessEnv = {
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: path.join(workDir, 'data'),
      ADMIN_TOKEN,
      REDIS_URL: '',
      SEED_DEMO: 'false',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_TEST_PER_MINUTE: '100000',
      DOWNLOAD_STALL_SECONDS: String(STALL_SECONDS),
      DOWNLOADS_PER_BUSINESS: String(STALLED),
    };
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
    const created = await sendRequest(baseUrl, 'POST', '/api/v1/admin/businesses', {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      body: { name: 'Large catalog', approveLive: false, withShop: true },
    });
    expectStatus(created, 201);
    key = created.body.data.keys.find(
      (k: { kind: string; environment: string }) => k.kind === 'secret' && k.environment === 'test',
    ).key;
    for (const part of [0, 1]) {
      const rows = Array.from(
        { length: PRODUCTS_PER_IMPORT },
        (_, i) => `P${part}-${i},Product ${part}-${i},${100 + i},${'d'.repeat(1_000)}`,
      );
      const imported = await sendRequest(baseUrl, 'POST', '/api/v1/dev/store/products/import', {
        key,
        rawBody: `externalId,name,price,description\n${rows.join('\n')}\n`,
        headers: { 'content-type': 'text/csv' },
        idempotencyKey: true,
      });
      expectStatus(imported, 200);
      assert.equal(imported.body.data.created, PRODUCTS_PER_IMPORT, imported.text.slice(0, 500));
    }
  });
  afterAll(async () => {
    if (server) await stop(server);
    await database?.drop();
    if (workDir) rmSync(workDir, { recursive: true, force: true });
  });

  test('40 clients that read nothing: bounded memory, the 41st refused, all ended after the stall time', async (context) => {
    const pid = server.child.pid!;
    const exportPath = '/api/v1/dev/store/products/export';
    // One whole export first: what any download loads once (code, caches) is not counted below.
    const whole = await sendRequest(baseUrl, 'GET', exportPath, { key });
    expectStatus(whole, 200);
    assert.equal(whole.text.trim().split('\n').length, 2 * PRODUCTS_PER_IMPORT + 1);
    await sleep(1_000);
    const filesBefore = openFiles(pid);
    const rssBefore = rssMb(pid);

    const opened = Date.now();
    const stalled = await Promise.all(
      Array.from({ length: STALLED }, () => stalledDownload(baseUrl, exportPath, { authorization: `Bearer ${key}` })),
    );
    for (const download of stalled) assert.equal(download.status, 200, download.head);
    const refused = await sendRequest(baseUrl, 'GET', exportPath, { key });
    expectError(refused, 429, 'TOO_MANY_DOWNLOADS');
    assert.ok(Number(refused.headers.get('retry-after')) > 0);

    // Each download is read until the socket is full, then waits: the memory it holds meanwhile.
    let rssHeld = rssMb(pid);
    for (let sample = 0; sample < 10; sample++) {
      await sleep(100);
      rssHeld = Math.max(rssHeld, rssMb(pid));
    }
    const growth = rssHeld - rssBefore;
    context.annotate(`RSS ${rssBefore.toFixed(1)} MB before, ${rssHeld.toFixed(1)} MB with 40 stalled downloads`);
    assert.ok(
      growth < GROWTH_LIMIT_MB,
      `40 stalled downloads added ${growth.toFixed(1)} MB (RSS ${rssBefore.toFixed(0)} MB before)`,
    );

    // The server ends them after the stall time: its side of each connection closes.
    const deadline = Date.now() + 180_000;
    while (openFiles(pid) > filesBefore + 5) {
      assert.ok(Date.now() < deadline, `${openFiles(pid) - filesBefore} connections still open after 3 minutes`);
      await sleep(250);
    }
    assert.ok(Date.now() - opened >= STALL_SECONDS * 1000, 'not before the stall time');
    for (const download of stalled) {
      const raw = await download.readRest();
      assert.ok(!complete(raw), 'a stalled download was ended, not finished');
    }
    // Their slots are free again.
    expectStatus(await sendRequest(baseUrl, 'GET', `${exportPath}?search=nothing-matches`, { key }), 200);
  });
});
