import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { describe, test } from 'vitest';
import pg from 'pg';
import {
  credentials,
  etcdPort,
  etcdRead,
  HA_DIR,
  haPooledUrl,
  haUrl,
  layout,
  restApi,
  restPort,
  roles,
  waitHealthy,
  type Member,
} from './ha-layout.js';
import { waitUntil } from '../support/harness.js';

/**
 * Who may act on the HA layout of scripts/ha/layout.sh (issue 47): Patroni's REST API takes its
 * actions only with its password, etcd only a client with a certificate of the layout's CA, and
 * PostgreSQL and PgBouncer only the passwords `layout.sh up` generated, as on three machines
 * (docs/operations.md). Black-box, from outside the layout as an attacker on the network would be.
 * It switches the primary over once, so it runs only when asked: `TEST_HA_LAYOUT=1` with the
 * layout up (`scripts/ha/layout.sh up`), as test/hardening/failover-ha.test.ts.
 */
const asked = process.env.TEST_HA_LAYOUT === '1';

/** What a refused PostgreSQL connection says (or '' when it connected). */
async function connectionRefusal(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('SELECT 1');
    return '';
  } catch (error) {
    return `${(error as { code?: string }).code ?? ''} ${(error as Error).message}`;
  } finally {
    await client.end().catch(() => {});
  }
}

describe("the HA layout's access: Patroni's REST API, etcd, PostgreSQL (issue 47)", { skip: !asked }, () => {
  test("Patroni's actions without the REST API's password are refused (401), and nothing moves; with it they work", async () => {
    const primary = await waitHealthy();
    const standby: Member = primary === 'pg1' ? 'pg2' : 'pg1';
    const password = credentials().RESTAPI_PASSWORD!;
    const switchover = { leader: primary, candidate: standby };
    // PATCH /config could set archive_command: a command run by PostgreSQL on every member.
    const archiveCommand = { postgresql: { parameters: { archive_command: 'touch /tmp/ha-access-pwned' } } };

    for (const member of [primary, standby]) {
      for (const [method, pathname, body] of [
        ['POST', '/switchover', switchover],
        ['POST', '/failover', { candidate: standby }],
        ['POST', '/restart', {}],
        ['POST', '/reinitialize', {}],
        ['POST', '/reload', {}],
        ['PATCH', '/config', archiveCommand],
        ['PUT', '/config', archiveCommand],
      ] as const) {
        const anonymous = await restApi(member, method, pathname, { body });
        assert.equal(anonymous.status, 401, `${method} ${pathname} on ${member} without a password: ${anonymous.text}`);
        const guessed = await restApi(member, method, pathname, { body, password: 'patroni' });
        assert.equal(guessed.status, 401, `${method} ${pathname} on ${member} with a guessed password`);
      }
    }
    const unchanged = JSON.parse((await restApi(primary, 'GET', '/config')).text) as {
      postgresql?: { parameters?: Record<string, unknown> };
    };
    assert.equal(unchanged.postgresql?.parameters?.archive_command, undefined, 'archive_command was not set');
    assert.equal((await roles()).primary, primary, 'the primary did not move');

    // The REST API speaks TLS only: plain HTTP gets no answer.
    const plain = await fetch(`http://127.0.0.1:${restPort(primary)}/patroni`, {
      signal: AbortSignal.timeout(2000),
    }).then(
      (response) => response.status,
      () => 0,
    );
    assert.equal(plain, 0, 'plain HTTP is not answered');

    // HAProxy's check (a read) needs no password.
    assert.equal((await restApi(primary, 'OPTIONS', '/primary')).status, 200);
    assert.equal((await restApi(standby, 'OPTIONS', '/primary')).status, 503);

    // With the password: a harmless change to the configuration, then a switchover.
    const patched = await restApi(primary, 'PATCH', '/config', {
      password,
      body: { maximum_lag_on_failover: 1048576 },
    });
    assert.equal(patched.status, 200, patched.text);
    const moved = await restApi(primary, 'POST', '/switchover', { password, body: switchover, timeoutMs: 60_000 });
    assert.equal(moved.status, 200, moved.text);
    await waitUntil(async () => (await roles()).primary === standby, 'the switchover', 60_000);
    await waitHealthy();
  });

  test('patronictl works through the ctl settings: the REST API over TLS, with the password', async () => {
    const primary = await waitHealthy();
    const standby: Member = primary === 'pg1' ? 'pg2' : 'pg1';
    const listed = await layout('ctl', 'list', '--format', 'json');
    const members = JSON.parse(listed.slice(listed.indexOf('['))) as { Member: string; Role: string }[];
    assert.equal(members.find((member) => member.Member === primary)?.Role, 'Leader', listed);
    await layout('ctl', 'switchover', '--leader', primary, '--candidate', standby, '--force');
    await waitUntil(async () => (await roles()).primary === standby, 'the switchover by patronictl', 60_000);
    await waitHealthy();
  });

  test("etcd refuses a client without a certificate of the layout's CA, and plain HTTP", async () => {
    const withCertificate = await etcdRead('operator');
    assert.equal(withCertificate.status, 200, withCertificate.text);
    assert.match(withCertificate.text, /"kvs"/, "Patroni's keys are there");
    await assert.rejects(etcdRead('none'), 'a client without a certificate is refused at the TLS handshake');
    const plain = await fetch(`http://127.0.0.1:${etcdPort}/v3/kv/range`, {
      method: 'POST',
      body: '{"key":"Lw=="}',
      signal: AbortSignal.timeout(2000),
    }).then(
      (response) => response.status,
      () => 0,
    );
    assert.equal(plain, 0, 'plain HTTP is not answered');
  });

  test('PostgreSQL takes the generated passwords only: no trust, no known default', async () => {
    const app = new URL(haUrl());
    assert.ok(app.password.length >= 32, 'a generated password');
    assert.equal(await connectionRefusal(app.toString()), '', 'the application connects with its password');
    assert.equal(await connectionRefusal(haUrl('postgres')), '', 'the superuser too, over the network, with its');

    const without = (user: string, password?: string) =>
      `postgres://${user}${password === undefined ? '' : `:${password}`}@127.0.0.1:${app.port}/postgres`;
    for (const [user, password] of [
      ['app', undefined],
      ['postgres', undefined],
      ['postgres', 'postgres'],
      ['replicator', 'replicator'],
      ['rewinder', 'rewinder'],
      ['app', 'app'],
    ] as const) {
      const refusal = await connectionRefusal(without(user, password));
      assert.ok(refusal !== '', `${user} ${password ?? '(no password)'} is refused`);
      assert.match(refusal, /28P01|password/, `${user}: ${refusal}`);
    }
  });

  test("PgBouncer takes the application's password only, and holds its SCRAM secret, not the password", async () => {
    const pooled = new URL(haPooledUrl());
    const client = new pg.Client({ connectionString: pooled.toString() });
    await client.connect();
    // Through HAProxy to the primary: a member's port.
    const { rows } = await client.query<{ port: number }>('SELECT inet_server_port() AS port');
    await client.end();
    assert.ok([5441, 5442].includes(rows[0]!.port), `reached port ${rows[0]!.port}`);
    const as = (user: string, password?: string) =>
      `postgres://${user}${password === undefined ? '' : `:${password}`}@127.0.0.1:${pooled.port}/postgres`;
    for (const [user, password] of [
      ['app', undefined],
      ['app', 'app'],
      ['postgres', credentials().SUPERUSER_PASSWORD!],
    ] as const) {
      const refusal = await connectionRefusal(as(user, password));
      assert.ok(refusal !== '', `${user} ${password === undefined ? '(no password)' : ''} is refused by PgBouncer`);
    }
    const file = `${HA_DIR}/pgbouncer/userlist.txt`;
    assert.equal(statSync(file).mode & 0o777, 0o600);
    const text = readFileSync(file, 'utf8');
    assert.match(text, /^"app" "SCRAM-SHA-256\$4096:/);
    assert.ok(!text.includes(pooled.password), 'no password in the auth file');
  });
});
