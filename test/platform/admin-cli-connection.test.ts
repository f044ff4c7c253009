import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { ConnectionError, resolveConnection } from '../../src/cli/connection.js';
import { resolveAdminToken } from '../../src/bootstrap.js';
import { loadConfig } from '../../src/config.js';
import { adminCliWith } from '../support/admin-cli.js';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../support/harness.js';
import { freePort } from '../support/started-server.js';

describe('admin CLI: finds the server from the settings npm start reads', () => {
  let t: TestApp;
  let dataDir: string;
  beforeAll(async () => {
    t = await startTestApp();
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'devapi-cli-'));
  });
  afterAll(async () => {
    await t.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test("the server's defaults and its token file: port 8080, HOST, DATA_DIR/admin-token", () => {
    // The very file the server writes on its first start.
    const serverDir = path.join(dataDir, 'server');
    const generated = resolveAdminToken(loadConfig({ DATA_DIR: serverDir }));
    assert.equal(generated.generated, true);
    assert.equal(resolveConnection({ DATA_DIR: serverDir }).token, generated.token);

    const missing = (() => {
      try {
        resolveConnection({ DATA_DIR: path.join(dataDir, 'nowhere') });
        return undefined;
      } catch (error) {
        return error;
      }
    })();
    assert.ok(missing instanceof ConnectionError);
    assert.match(missing.message, new RegExp(`${path.join(dataDir, 'nowhere', 'admin-token')} does not exist`));

    const connection = resolveConnection({ ADMIN_TOKEN });
    assert.equal(connection.baseUrl, 'http://127.0.0.1:8080');
    assert.equal(connection.token, ADMIN_TOKEN);
    assert.equal(resolveConnection({ ADMIN_TOKEN, PORT: '9090', HOST: '::' }).baseUrl, 'http://127.0.0.1:9090');
    assert.equal(resolveConnection({ ADMIN_TOKEN, HOST: '::1' }).baseUrl, 'http://[::1]:8080');
    assert.equal(resolveConnection({ ADMIN_TOKEN, ADMIN_URL: 'http://api.test:1/' }).baseUrl, 'http://api.test:1');
  });

  test('the same PORT, HOST and DATA_DIR as the server are enough: the token comes from its file', async () => {
    writeFileSync(path.join(dataDir, 'admin-token'), `${ADMIN_TOKEN}\n`);
    const port = new URL(t.baseUrl).port;
    const listed = await adminCliWith(
      { PORT: port, HOST: '127.0.0.1', DATA_DIR: dataDir },
      'business',
      'list',
      '--json',
    );
    assert.equal(listed.code, 0, listed.stderr);
    assert.ok(Array.isArray(JSON.parse(listed.stdout).items));
    // HOST as the server takes it by default: loopback (decision 090).
    const anyHost = await adminCliWith({ PORT: port, DATA_DIR: dataDir }, 'business', 'list', '--json');
    assert.equal(anyHost.code, 0, anyHost.stderr);
  });

  test('no server: the message names the URL tried and how to start the server', async () => {
    writeFileSync(path.join(dataDir, 'admin-token'), `${ADMIN_TOKEN}\n`);
    const port = await freePort();
    const result = await adminCliWith(
      { PORT: String(port), DATA_DIR: dataDir, ADMIN_TIMEOUT_MS: '2000' },
      'business',
      'list',
    );
    assert.equal(result.code, 1);
    assert.match(
      result.stderr,
      new RegExp(`Cannot reach the API at http://127\\.0\\.0\\.1:${port}: connection refused`),
    );
    assert.match(result.stderr, /`npm start`/);
    assert.match(result.stderr, new RegExp(`listens on port ${port}`));
  });

  test('no token file: the message names the file looked for; a bad setting is named like the server names it', async () => {
    const empty = mkdtempSync(path.join(os.tmpdir(), 'devapi-cli-empty-'));
    try {
      const result = await adminCliWith({ DATA_DIR: empty }, 'business', 'list');
      assert.equal(result.code, 1);
      assert.match(result.stderr, new RegExp(`No admin token: ${path.join(empty, 'admin-token')} does not exist`));
      assert.match(result.stderr, /npm start/);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
    const badPort = await adminCliWith({ PORT: 'eighty', ADMIN_TOKEN }, 'business', 'list');
    assert.equal(badPort.code, 1);
    assert.match(badPort.stderr, /Invalid configuration/);
    assert.match(badPort.stderr, /PORT="eighty"/);
  });
});
