import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { runAdminCli } from '../../src/cli/admin.js';
import { canonicalJson } from '../../src/http/idempotency/fingerprint.js';
import { adminCli } from '../support/admin-cli.js';
import { testDatabaseKind } from '../support/database.js';
import {
  ADMIN_TOKEN,
  expectError,
  expectStatus,
  sendRequest,
  startTestApp,
  waitUntil,
  type TestApp,
  type TestResponse,
} from '../support/harness.js';

/** What an operator POST's key is stored with (src/http/idempotency/fingerprint.ts, `requestFingerprint`). */
const fingerprint = (path: string, covered: unknown) =>
  createHash('sha256')
    .update(`POST /api/v1/admin${path}\n${canonicalJson(covered)}`)
    .digest('hex');

/** The operator API (/api/v1/admin) takes an X-Idempotency-Key on its writes. */
describe('operator API idempotency', () => {
  let t: TestApp;
  let phones = 0;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  const admin = <T = any>(
    method: string,
    path: string,
    options: { body?: unknown; key?: string; token?: string } = {},
  ): Promise<TestResponse<T>> =>
    sendRequest<T>(t.baseUrl, method, `/api/v1/admin${path}`, {
      headers: {
        authorization: `Bearer ${options.token ?? ADMIN_TOKEN}`,
        ...(options.key !== undefined ? { 'x-idempotency-key': options.key } : {}),
      },
      ...(options.body !== undefined ? { body: options.body } : {}),
    });

  async function newWallet(balance = 0): Promise<string> {
    const phone = `+2224${String(++phones).padStart(7, '0')}`;
    expectStatus(await admin('POST', '/wallets', { body: { phone, pin: '2580', balance, environment: 'test' } }), 201);
    return phone;
  }

  const balanceOf = async (phone: string): Promise<number> => {
    const shown = await admin('GET', `/wallets?phone=${encodeURIComponent(phone)}&environment=test`);
    expectStatus(shown, 200);
    return shown.body.data.balance as number;
  };

  test('a retried wallet credit with its key credits once and answers the first result again', async () => {
    const phone = await newWallet(1000);
    const credit = { phone, environment: 'test', amount: 2500 };
    const first = await admin('POST', '/wallets/credit', { body: credit, key: 'credit-1' });
    expectStatus(first, 200);
    assert.equal(first.headers.get('idempotent-replayed'), null);
    const again = await admin('POST', '/wallets/credit', { body: credit, key: 'credit-1' });
    expectStatus(again, 200);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.equal(again.text, first.text);
    assert.equal(await balanceOf(phone), 3500);

    // Without a key an operator write simply runs: a second credit is a second credit.
    expectStatus(await admin('POST', '/wallets/credit', { body: credit }), 200);
    assert.equal(await balanceOf(phone), 6000);
    const check = await admin('GET', '/ledger/check');
    assert.equal(check.body.data.ok, true, check.body.data.problems.join('\n'));
  });

  test('credits racing with one key credit exactly once', async () => {
    const phone = await newWallet();
    const credit = { phone, environment: 'test', amount: 700 };
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => admin('POST', '/wallets/credit', { body: credit, key: 'race-1' })),
    );
    for (const answer of answers) {
      if (answer.status !== 200) expectError(answer, 409, 'IDEMPOTENCY_KEY_IN_PROGRESS');
    }
    assert.ok(answers.some((answer) => answer.status === 200));
    assert.equal(await balanceOf(phone), 700);
  });

  test('the same key with another body is refused, and a malformed key is refused before the write', async () => {
    const phone = await newWallet();
    expectStatus(
      await admin('POST', '/wallets/credit', { body: { phone, environment: 'test', amount: 100 }, key: 'reuse-1' }),
      200,
    );
    const other = await admin('POST', '/wallets/credit', {
      body: { phone, environment: 'test', amount: 200 },
      key: 'reuse-1',
    });
    expectError(other, 422, 'IDEMPOTENCY_KEY_REUSED');
    const malformed = await admin('POST', '/wallets/credit', {
      body: { phone, environment: 'test', amount: 200 },
      key: 'tab\there',
    });
    expectError(malformed, 400, 'VALIDATION_ERROR');
    assert.equal(await balanceOf(phone), 100);
  });

  test('the token is checked before the key: a wrong token with a key is 401 and stores nothing', async () => {
    const phone = await newWallet();
    const body = { phone, environment: 'test', amount: 100 };
    expectError(
      await admin('POST', '/wallets/credit', { body, key: 'token-1', token: 'wrong-token-0123456789' }),
      401,
      'ADMIN_UNAUTHORIZED',
    );
    // A malformed key behind a wrong token is still a 401: the token is checked first.
    expectError(
      await admin('POST', '/wallets/credit', { body, key: 'tab\there', token: 'wrong-token-0123456789' }),
      401,
      'ADMIN_UNAUTHORIZED',
    );
    const real = await admin('POST', '/wallets/credit', { body, key: 'token-1' });
    expectStatus(real, 200);
    assert.equal(real.headers.get('idempotent-replayed'), null);
    assert.equal(await balanceOf(phone), 100);
  });

  test('every operator route refuses a missing token, a wrong one and an API key', async () => {
    const business = await t.createBusiness();
    const routes: [string, string][] = [
      ['POST', '/businesses'],
      ['GET', '/businesses'],
      ['POST', '/businesses/biz_x/approve-live'],
      ['PUT', '/businesses/biz_x/fees'],
      ['POST', '/keys'],
      ['GET', '/keys?businessId=biz_x'],
      ['POST', '/keys/key_x/suspend'],
      ['POST', '/keys/key_x/revoke'],
      ['POST', '/keys/key_x/rotate'],
      ['POST', '/api/enable'],
      ['POST', '/api/disable'],
      ['POST', '/wallets'],
      ['POST', '/wallets/credit'],
      ['GET', '/wallets?phone=%2B22220000001&environment=test'],
      ['HEAD', '/wallets?phone=%2B22220000001&environment=test'],
      ['GET', '/ledger/check'],
      ['POST', '/users'],
      ['GET', '/users?businessId=biz_x'],
      ['POST', '/users/usr_x/disable'],
      ['POST', '/users/usr_x/reset-password'],
    ];
    for (const [method, path] of routes) {
      for (const token of [undefined, 'wrong-token-0123456789', business.keys.secretLive]) {
        const answer = await sendRequest(t.baseUrl, method, `/api/v1/admin${path}`, {
          headers: {
            ...(token ? { authorization: `Bearer ${token}` } : {}),
            'x-idempotency-key': `refused-${method}-${path}`,
          },
          ...(method === 'GET' || method === 'HEAD' ? {} : { body: {} }),
        });
        assert.equal(answer.status, 401, `${method} ${path} with ${token ?? 'no token'}: ${answer.text}`);
        if (method !== 'HEAD') expectError(answer, 401, 'ADMIN_UNAUTHORIZED');
      }
    }
    const stored = await t.testDatabase.database.db
      .selectFrom('idempotency_keys')
      .select('idempotency_key')
      .where('idempotency_key', 'like', 'refused-%')
      .execute();
    assert.deepEqual(stored, []);
  });

  test('an error answer is kept under its key like a success', async () => {
    const phone = `+2225${String(++phones).padStart(7, '0')}`;
    const credit = { phone, environment: 'test', amount: 100 };
    const first = await admin('POST', '/wallets/credit', { body: credit, key: 'missing-1' });
    expectError(first, 404, 'WALLET_NOT_FOUND');
    expectStatus(await admin('POST', '/wallets', { body: { phone, pin: '2580', environment: 'test' } }), 201);
    const again = await admin('POST', '/wallets/credit', { body: credit, key: 'missing-1' });
    assert.equal(again.status, 404);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    // The first answer byte for byte: its requestId names the first request (decisions).
    assert.equal(again.text, first.text);
    assert.equal(await balanceOf(phone), 0);
    expectStatus(await admin('POST', '/wallets/credit', { body: credit, key: 'missing-2' }), 200);
    assert.equal(await balanceOf(phone), 100);
  });

  test("operator keys and a business's keys never answer for each other", async () => {
    const business = await t.createBusiness();
    const phone = await newWallet();
    const key = 'shared-key-1';
    expectStatus(
      await admin('POST', '/wallets/credit', { body: { phone, environment: 'test', amount: 100 }, key }),
      200,
    );
    const intent = await t.request('POST', '/api/v1/dev/intents', {
      key: business.keys.secretTest,
      idempotencyKey: key,
      body: { amount: 5000 },
    });
    expectStatus(intent, 201);
    assert.equal(intent.headers.get('idempotent-replayed'), null);
    assert.equal(intent.body.data.amount, 5000);
    // And the other way round: a key a business used first runs an operator write all the same.
    const other = 'shared-key-2';
    expectStatus(
      await t.request('POST', '/api/v1/dev/intents', {
        key: business.keys.secretTest,
        idempotencyKey: other,
        body: { amount: 6000 },
      }),
      201,
    );
    const credit = await admin('POST', '/wallets/credit', {
      body: { phone, environment: 'test', amount: 50 },
      key: other,
    });
    expectStatus(credit, 200);
    assert.equal(credit.headers.get('idempotent-replayed'), null);
    assert.equal(await balanceOf(phone), 150);
  });

  test('a replayed business create makes no second business and never repeats the API keys’ text', async () => {
    const name = `Replay business ${Date.now()}`;
    const body = { name, approveLive: false, withShop: true, liveKeys: true };
    const first = await admin('POST', '/businesses', { body, key: 'business-1' });
    expectStatus(first, 201);
    const keys = first.body.data.keys as { key?: string; hint: string; id: string }[];
    assert.equal(keys.length, 4);
    assert.ok(keys.every((key) => typeof key.key === 'string' && key.key.length > 20));

    const again = await admin('POST', '/businesses', { body, key: 'business-1' });
    expectStatus(again, 201);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.equal(again.body.data.business.id, first.body.data.business.id);
    const replayedKeys = again.body.data.keys as { key?: string; hint: string; id: string }[];
    assert.deepEqual(
      replayedKeys.map((key) => [key.id, key.hint, key.key]),
      keys.map((key) => [key.id, key.hint, undefined]),
    );
    const businesses = await t.testDatabase.database.db
      .selectFrom('businesses')
      .select('id')
      .where('name', '=', name)
      .execute();
    assert.equal(businesses.length, 1);
    const stored = await t.testDatabase.database.db
      .selectFrom('idempotency_keys')
      .select(['business_id', 'response_body'])
      .where('idempotency_key', '=', 'business-1')
      .executeTakeFirstOrThrow();
    assert.equal(stored.business_id, 'operator');
    for (const key of keys) assert.ok(!stored.response_body!.includes(key.key!), 'a key text was stored');
  });

  test('a replayed key create answers without its text; a suspension with a key takes effect at once', async () => {
    const business = await t.createBusiness();
    const body = { businessId: business.id, kind: 'secret', environment: 'test' };
    const created = await admin('POST', '/keys', { body, key: 'key-create-1' });
    expectStatus(created, 201);
    const text = created.body.data.key as string;
    expectStatus(await t.request('GET', '/api/v1/dev/intents', { key: text }), 200);
    const again = await admin('POST', '/keys', { body, key: 'key-create-1' });
    expectStatus(again, 201);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.equal(again.body.data.id, created.body.data.id);
    assert.equal(again.body.data.key, undefined);
    assert.equal(again.body.data.hint, created.body.data.hint);

    const suspended = await admin('POST', `/keys/${created.body.data.id}/suspend`, { key: 'suspend-1' });
    expectStatus(suspended, 200);
    assert.equal(suspended.body.data.status, 'suspended');
    // The cache was told before the answer went out: the very next request is refused.
    expectError(await t.request('GET', '/api/v1/dev/intents', { key: text }), 403, 'API_ACCESS_NOT_ACTIVE');
    const replayed = await admin('POST', `/keys/${created.body.data.id}/suspend`, { key: 'suspend-1' });
    assert.equal(replayed.headers.get('idempotent-replayed'), 'true');
    assert.equal(replayed.text, suspended.text);
  });

  test('a replayed key rotation issues one successor, and the successor works', async () => {
    const business = await t.createBusiness();
    const old = business.keyRecords.find((key) => key.kind === 'secret' && key.environment === 'test')!;
    const first = await admin('POST', `/keys/${old.id}/rotate`, { key: 'rotate-1' });
    expectStatus(first, 201);
    const again = await admin('POST', `/keys/${old.id}/rotate`, { key: 'rotate-1' });
    expectStatus(again, 201);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.equal(again.body.data.id, first.body.data.id);
    assert.equal(again.body.data.key, undefined);
    const listed = await admin('GET', `/keys?businessId=${business.id}`);
    const secretTest = (listed.body.data.items as { kind: string; environment: string; status: string }[]).filter(
      (key) => key.kind === 'secret' && key.environment === 'test',
    );
    assert.deepEqual(secretTest.map((key) => key.status).sort(), ['active', 'rotated']);
    const read = await t.request('GET', '/api/v1/dev/intents', { key: first.body.data.key });
    expectStatus(read, 200);
  });

  test('a PIN or password is not part of what the key keeps', async () => {
    const phone = `+2226${String(++phones).padStart(7, '0')}`;
    const body = { phone, pin: '1357', environment: 'test' };
    expectStatus(await admin('POST', '/wallets', { body, key: 'wallet-pin-1' }), 201);
    // The same key with another PIN is the same request: the first answer again, no second wallet.
    const again = await admin('POST', '/wallets', { body: { ...body, pin: '2468' }, key: 'wallet-pin-1' });
    expectStatus(again, 201);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    const stored = await t.testDatabase.database.db
      .selectFrom('idempotency_keys')
      .select('fingerprint')
      .where('business_id', '=', 'operator')
      .where('idempotency_key', '=', 'wallet-pin-1')
      .executeTakeFirstOrThrow();
    const { pin: _pin, ...covered } = body;
    assert.equal(stored.fingerprint, fingerprint('/wallets', covered));
    assert.notEqual(stored.fingerprint, fingerprint('/wallets', body));
  });

  test('a password is not part of what the key keeps either (users, reset-password)', async () => {
    const business = await t.createBusiness();
    const email = `operator-${Date.now()}@example.com`;
    const created = await admin('POST', '/users', {
      body: { businessId: business.id, email, password: 'first long passphrase' },
      key: 'user-1',
    });
    expectStatus(created, 201);
    const reset = `/users/${created.body.data.id}/reset-password`;
    expectStatus(await admin('POST', reset, { body: { password: 'second long passphrase' }, key: 'reset-1' }), 200);
    const again = await admin('POST', reset, { body: { password: 'third long passphrase' }, key: 'reset-1' });
    expectStatus(again, 200);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    const stored = await t.testDatabase.database.db
      .selectFrom('idempotency_keys')
      .select(['idempotency_key', 'fingerprint', 'response_body'])
      .where('business_id', '=', 'operator')
      .where('idempotency_key', 'in', ['user-1', 'reset-1'])
      .orderBy('idempotency_key', 'desc')
      .execute();
    assert.deepEqual(
      stored.map((row) => [row.idempotency_key, row.fingerprint]),
      [
        ['user-1', fingerprint('/users', { businessId: business.id, email })],
        ['reset-1', fingerprint(reset, {})],
      ],
    );
    for (const row of stored) assert.doesNotMatch(row.response_body!, /passphrase|scrypt/);
  });

  /**
   * A proxy in front of the API that forwards every request and cuts the answers of the first
   * `cut` on their way back (the write is done; the CLI never hears of it).
   */
  async function answerCuttingProxy(cut: number) {
    const keys: (string | undefined)[] = [];
    const proxy = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        keys.push(request.headers['x-idempotency-key'] as string | undefined);
        const seen = keys.length;
        const headers: Record<string, string> = {};
        for (const name of ['authorization', 'content-type', 'x-idempotency-key']) {
          const value = request.headers[name];
          if (typeof value === 'string') headers[name] = value;
        }
        fetch(`${t.baseUrl}${request.url}`, {
          method: request.method!,
          headers,
          ...(chunks.length > 0 ? { body: Buffer.concat(chunks) } : {}),
        })
          .then(async (answer) => {
            const text = await answer.text();
            if (seen <= cut) return request.socket.destroy();
            response.writeHead(answer.status, {
              'content-type': answer.headers.get('content-type') ?? 'application/json',
              ...(answer.headers.has('idempotent-replayed') ? { 'idempotent-replayed': 'true' } : {}),
            });
            response.end(text);
          })
          .catch((error: unknown) => response.writeHead(502).end(String(error)));
      });
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const { port } = proxy.address() as AddressInfo;
    return {
      keys,
      async cli(...args: string[]) {
        let stdout = '';
        let stderr = '';
        const code = await runAdminCli(
          args,
          { ADMIN_URL: `http://127.0.0.1:${port}`, ADMIN_TOKEN },
          { stdout: (text) => (stdout += text), stderr: (text) => (stderr += text) },
        );
        return { code, stdout, stderr };
      },
      async close() {
        proxy.closeAllConnections();
        await new Promise((resolve) => proxy.close(resolve));
      },
    };
  }

  test('the CLI sends a write again when its answer is lost, with the same key: it is done once', async () => {
    const phone = await newWallet(0);
    const proxy = await answerCuttingProxy(1);
    try {
      const run = await proxy.cli('wallet', 'credit', '--phone', phone, '--amount', '900', '--env', 'test', '--json');
      assert.equal(run.code, 0, run.stderr);
      assert.equal(proxy.keys.length, 2);
      assert.match(proxy.keys[0] ?? '', /^cli-/);
      assert.equal(proxy.keys[1], proxy.keys[0]);
      assert.match(run.stderr, /No answer \(.*\); sending it again with the same idempotency key \(attempt 2 of 3\)/);
      assert.match(run.stderr, /Replayed: the answer of an earlier attempt/);
      assert.equal(JSON.parse(run.stdout).balance, 900);
    } finally {
      await proxy.close();
    }
    assert.equal(await balanceOf(phone), 900, 'credited once');
  });

  test('when every answer is lost the CLI prints its key, and the command run again with it is not done twice', async () => {
    const phone = await newWallet(0);
    const args = ['wallet', 'credit', '--phone', phone, '--amount', '400', '--env', 'test', '--json'];
    const proxy = await answerCuttingProxy(3);
    try {
      const lost = await proxy.cli(...args);
      assert.equal(lost.code, 1);
      assert.equal(proxy.keys.length, 3);
      const key = /--idempotency-key (cli-\S+) to find out without doing it twice/.exec(lost.stderr)?.[1];
      assert.equal(key, proxy.keys[0], lost.stderr);
      const again = await proxy.cli(...args, '--idempotency-key', key!);
      assert.equal(again.code, 0, again.stderr);
      assert.match(again.stderr, /^Replayed/);
      assert.equal(JSON.parse(again.stdout).balance, 400);
    } finally {
      await proxy.close();
    }
    assert.equal(await balanceOf(phone), 400, 'credited once over four requests');
  });

  test.skipIf(testDatabaseKind === 'postgres' ? false : 'PostgreSQL only: on PGlite a second attempt waits, no 409')(
    'the CLI waits while an earlier attempt with its key still runs, then answers once it is done',
    async () => {
      const phone = await newWallet(0);
      const key = 'held-1';
      // Another session holds the key's lock, as an attempt still running would.
      const holder = new pg.Client({ connectionString: t.testDatabase.url });
      await holder.connect();
      try {
        await holder.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [`operator:live:${key}`]);
        let stderr = '';
        const run = runAdminCli(
          [
            'wallet',
            'credit',
            '--phone',
            phone,
            '--amount',
            '300',
            '--env',
            'test',
            '--json',
            '--idempotency-key',
            key,
          ],
          { ADMIN_URL: t.baseUrl, ADMIN_TOKEN },
          { stdout: () => {}, stderr: (text) => (stderr += text) },
        );
        await waitUntil(() => stderr.includes('still running; waiting for its answer'), 'the CLI to wait');
        assert.equal(await balanceOf(phone), 0, 'nothing done while the key is held');
        await holder.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [`operator:live:${key}`]);
        assert.equal(await run, 0, stderr);
      } finally {
        await holder.end();
      }
      assert.equal(await balanceOf(phone), 300);
    },
  );

  test('a CLI write that never got an answer says which key to run it again with', async () => {
    // A port nothing listens on: bound, then closed.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    let stderr = '';
    const code = await runAdminCli(
      ['wallet', 'credit', '--phone', '+22220000001', '--amount', '1', '--env', 'test', '--idempotency-key', 'gone-1'],
      { ADMIN_URL: `http://127.0.0.1:${port}`, ADMIN_TOKEN },
      { stdout: () => {}, stderr: (text) => (stderr += text) },
    );
    assert.equal(code, 1);
    assert.equal(stderr.match(/sending it again with the same idempotency key/g)?.length, 2, stderr);
    assert.match(stderr, /Cannot reach the API at http:\/\/127\.0\.0\.1:\d+/);
    assert.match(stderr, /run the same command with --idempotency-key gone-1 to find out without doing it twice/);
  });

  test('a CLI attempt that gets no answer within ADMIN_TIMEOUT_MS counts as lost: sent again, then the key is printed', async () => {
    // A server that takes every request and never answers (a hung API, a stuck proxy).
    const keys: (string | undefined)[] = [];
    const hung = createServer((request) => keys.push(request.headers['x-idempotency-key'] as string | undefined));
    await new Promise<void>((resolve) => hung.listen(0, '127.0.0.1', resolve));
    const { port } = hung.address() as AddressInfo;
    let stderr = '';
    try {
      const code = await runAdminCli(
        [
          'wallet',
          'credit',
          '--phone',
          '+22220000001',
          '--amount',
          '1',
          '--env',
          'test',
          '--idempotency-key',
          'hung-1',
        ],
        { ADMIN_URL: `http://127.0.0.1:${port}`, ADMIN_TOKEN, ADMIN_TIMEOUT_MS: '150' },
        { stdout: () => {}, stderr: (text) => (stderr += text) },
      );
      assert.equal(code, 1);
    } finally {
      hung.closeAllConnections();
      await new Promise((resolve) => hung.close(resolve));
    }
    // Each attempt that reached the server carried the same key (on a loaded machine an attempt
    // can time out before the server has read it).
    assert.ok(keys.length >= 1 && keys.length <= 3, `${keys.length} attempts reached the server`);
    assert.ok(
      keys.every((key) => key === 'hung-1'),
      String(keys),
    );
    assert.equal(stderr.match(/No answer \(none within 0\.15 s\); sending it again/g)?.length, 2, stderr);
    assert.match(stderr, /The API at http:\/\/127\.0\.0\.1:\d+ did not answer within 0\.15 s \(ADMIN_TIMEOUT_MS\)/);
    assert.match(stderr, /run the same command with --idempotency-key hung-1 to find out without doing it twice/);
  });

  test('an answer whose body stops coming counts as no answer: the CLI says so and prints its key', async () => {
    // A server that sends the status and headers of a success, then nothing more.
    const cut = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('{"success":true,"data":');
    });
    await new Promise<void>((resolve) => cut.listen(0, '127.0.0.1', resolve));
    const { port } = cut.address() as AddressInfo;
    let stdout = '';
    let stderr = '';
    try {
      const code = await runAdminCli(
        ['wallet', 'credit', '--phone', '+22220000001', '--amount', '1', '--env', 'test', '--idempotency-key', 'cut-1'],
        { ADMIN_URL: `http://127.0.0.1:${port}`, ADMIN_TOKEN, ADMIN_TIMEOUT_MS: '150' },
        { stdout: (text) => (stdout += text), stderr: (text) => (stderr += text) },
      );
      assert.equal(code, 1);
    } finally {
      cut.closeAllConnections();
      await new Promise((resolve) => cut.close(resolve));
    }
    assert.equal(stdout, '');
    assert.match(stderr, /Error HTTP_200: the answer did not arrive in full within 0\.15 s \(ADMIN_TIMEOUT_MS\)/);
    assert.match(stderr, /run the same command with --idempotency-key cut-1 to find out without doing it twice/);
  });

  test('an ADMIN_TIMEOUT_MS that is not a whole number of milliseconds is a usage error', async () => {
    for (const setting of ['0', '-5', '1.5', 'soon', '2147483648']) {
      let stderr = '';
      const code = await runAdminCli(
        ['ledger', 'check'],
        { ADMIN_URL: t.baseUrl, ADMIN_TOKEN, ADMIN_TIMEOUT_MS: setting },
        { stdout: () => {}, stderr: (text) => (stderr += text) },
      );
      assert.equal(code, 2, setting);
      assert.match(stderr, /ADMIN_TIMEOUT_MS must be a whole number of milliseconds/);
    }
  });

  test('the CLI sends --idempotency-key: the same command run twice credits once', async () => {
    const phone = await newWallet(0);
    const args = ['wallet', 'credit', '--phone', phone, '--amount', '900', '--env', 'test', '--json'];
    const first = await adminCli(t, ...args, '--idempotency-key', 'cli-credit-1');
    assert.equal(first.code, 0, first.stderr);
    assert.equal(first.stderr, '');
    const again = await adminCli(t, ...args, '--idempotency-key', 'cli-credit-1');
    assert.equal(again.code, 0, again.stderr);
    assert.equal(again.stdout, first.stdout);
    assert.match(again.stderr, /^Replayed: the answer of an earlier attempt with this idempotency key/);
    assert.equal(await balanceOf(phone), 900);
    const onRead = await adminCli(t, 'wallet', 'show', '--phone', phone, '--env', 'test', '--idempotency-key', 'x');
    assert.equal(onRead.code, 2);
    assert.match(onRead.stderr, /--idempotency-key is for commands that change something/);
    const empty = await adminCli(t, ...args, '--idempotency-key', '');
    assert.equal(empty.code, 2);
    assert.match(empty.stderr, /--idempotency-key must not be empty/);
    assert.equal(await balanceOf(phone), 900);
  });
});
