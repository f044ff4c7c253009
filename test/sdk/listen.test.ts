import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, test } from 'vitest';
import pino from 'pino';
import { Commerce } from '@commerce-developer-api/sdk';
import { reconnectDelay } from '@commerce-developer-api/sdk/listen';
import { verifyWebhook } from '@commerce-developer-api/sdk/webhooks';
import { startWorker, type Worker } from '../../src/worker/worker.js';
import { startTestApp, waitUntil, type TestApp, type TestBusiness } from '../support/harness.js';
import { checkedFetch } from '../support/openapi-check.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { webhookHelpers } from '../webhooks/support.js';
import { endDueRequests } from '../../src/modules/requests/expiry.js';
import { newPhone } from '../payouts/support.js';

const BIN = new URL('../../packages/sdk/bin/commerce.mjs', import.meta.url).pathname;

// The listen secrets of these tests live here, not in the user's own config directory.
const configDir = mkdtempSync(path.join(os.tmpdir(), 'commerce-listen-config-'));

function run(
  args: string[],
  env: Record<string, string> = { COMMERCE_CONFIG_DIR: configDir },
): { child: ChildProcess; stdout: () => string; output: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, [BIN, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, COMMERCE_CONFIG_DIR: '', ...env },
  });
  let stdout = '';
  let text = '';
  child.stdout!.on('data', (chunk: Buffer) => ((stdout += chunk.toString()), (text += chunk.toString())));
  child.stderr!.on('data', (chunk: Buffer) => (text += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, stdout: () => stdout, output: () => text, exited };
}

/**
 * A TCP relay in front of the test server: `down()` cuts every open connection and refuses new
 * ones, as an API restarting under `npm run dev` does; `up()` listens again on the same port.
 */
async function relayTo(target: string) {
  const { hostname, port } = new URL(target);
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(port), hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => socket.destroy());
    }
    client.pipe(upstream).pipe(client);
  });
  const listenOn = (at: number) => new Promise<void>((resolve) => server.listen(at, '127.0.0.1', resolve));
  await listenOn(0);
  const relayPort = (server.address() as net.AddressInfo).port;
  return {
    url: `http://127.0.0.1:${relayPort}`,
    down: async () => {
      const closed = new Promise((resolve) => server.close(resolve));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
    up: () => listenOn(relayPort),
    close: () => new Promise((resolve) => (server.listening ? server.close(resolve) : resolve(undefined))),
  };
}

async function stop(listen: ReturnType<typeof run>): Promise<void> {
  listen.child.kill('SIGTERM');
  await listen.exited;
}

test("listen's reconnection waits double at each failure, capped, and jittered between half and all", () => {
  const backoff = { initialMs: 1000, maxMs: 30_000 };
  for (const [failures, ceiling] of [
    [1, 1000],
    [2, 2000],
    [3, 4000],
    [6, 30_000],
    [40, 30_000],
  ] as const) {
    const waits = Array.from({ length: 50 }, () => reconnectDelay(failures, backoff));
    assert.ok(
      waits.every((wait) => wait >= ceiling / 2 && wait <= ceiling),
      `${failures} failures: ${waits.join(', ')}`,
    );
    assert.ok(new Set(waits).size > 1, 'jittered');
  }
});

describe('commerce listen', () => {
  let t: TestApp;
  let business: TestBusiness;
  let worker: Worker;
  let hooks: ReturnType<typeof webhookHelpers>;
  let local: Receiver;
  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000', WEBHOOK_ALLOW_PRIVATE: 'true' } });
    business = await t.createBusiness();
    hooks = webhookHelpers(t);
    worker = startWorker(t.runtime, pino({ level: 'silent' }), [], 60_000);
    local = await startReceiver('/hooks');
  });
  afterAll(async () => {
    await worker.stop();
    await hooks.closeAll();
    await local.close();
    await t.close();
    rmSync(configDir, { recursive: true, force: true });
  });

  test('forwards the matching events to a local URL as deliveries, signed with the secret printed at the first start', async () => {
    const commerce = new Commerce(business.keys.secretTest, { baseUrl: t.baseUrl, fetch: checkedFetch });
    // A real endpoint too, to compare what listen forwards with what a delivery carries.
    const { receiver: real } = await hooks.receiverWithEndpoint(business.keys.secretTest, ['payment.created']);
    const listen = run([
      'listen',
      '--api-key',
      business.keys.secretTest,
      '--forward-to',
      local.url,
      '--base-url',
      t.baseUrl,
      '--events',
      'payment.*',
    ]);
    try {
      const secret = await waitUntil(
        () => /Your listen secret is ([0-9a-f]{64}); it stays the same at every start/.exec(listen.output())?.[1],
        'the secret',
      );
      await waitUntil(() => listen.output().includes('Ready.'), 'listen to be ready');
      const intent = await commerce.intents.create({ amount: 321 });
      const product = await commerce.products.create({ name: 'Mint', price: 100, quantity: 5, status: 'ACTIVE' });
      await commerce.orders.simulate({ items: [{ productId: product.id, quantity: 1 }], customerName: 'A' });
      await commerce.intents.cancel(intent.referenceNumber);

      const [created, cancelled] = await local.waitFor(2);
      const first = await commerce.webhooks.verify(created!.body, created!.headers, secret);
      const second = await commerce.webhooks.verify(cancelled!.body, cancelled!.headers, secret);
      assert.deepEqual([first.event, second.event], ['payment.created', 'payment.cancelled']);
      assert.equal(created!.headers['x-commerce-event'], 'payment.created');
      assert.equal(created!.headers['content-type'], 'application/json');
      const [delivered] = await real.waitFor(1);
      assert.equal(created!.body, delivered!.body, 'the same bytes as the real delivery');

      await waitUntil(() => listen.output().includes('payment.cancelled'), 'the line of the second event');
      assert.match(listen.output(), /payment\.created\s+evt_\S+\s+-> 200 \(\d+ ms\)/);
      assert.doesNotMatch(listen.output(), /order\.new/, '--events payment.* leaves order.new out');
      assert.equal(local.requests.length, 2);
    } finally {
      await stop(listen);
    }
  });

  test('forwards the payment_request.* events: created, approved by the sandbox phone, cancelled', async () => {
    const commerce = new Commerce(business.keys.secretTest, { baseUrl: t.baseUrl, fetch: checkedFetch });
    const printed = run(['listen', '--api-key', business.keys.secretTest, '--print-secret']);
    assert.equal(await printed.exited, 0);
    const secret = printed.stdout().trim();
    const requests = await startReceiver('/requests');
    const listen = run([
      'listen',
      '--api-key',
      business.keys.secretTest,
      '--forward-to',
      requests.url,
      '--base-url',
      t.baseUrl,
      '--events',
      'payment_request.*',
    ]);
    try {
      await waitUntil(() => listen.output().includes('Ready.'), 'listen to be ready');
      const approving = await commerce.intents.create({ amount: 1_200 });
      const asked = await commerce.intents.requests.create(approving.referenceNumber, { phone: '+22220000021' });
      const waiting = await commerce.intents.create({ amount: 800 });
      const withdrawn = await commerce.intents.requests.create(waiting.referenceNumber, { phone: newPhone() });
      // What the worker's task does once the approving sandbox phone's 2 s have passed.
      await endDueRequests(t.runtime.db, { now: new Date(Date.now() + 3_000) });
      assert.equal((await commerce.paymentRequests.retrieve(asked.id)).status, 'APPROVED');
      await commerce.paymentRequests.cancel(withdrawn.id);

      const forwarded = await requests.waitFor(4);
      const events = [];
      for (const received of forwarded) {
        const event = await verifyWebhook(received.body, received.headers, secret);
        assert.equal(received.headers['x-commerce-event'], event.event);
        events.push(event);
      }
      assert.deepEqual(
        events.map((event) => [event.event, 'id' in event.data ? event.data.id : undefined]),
        [
          ['payment_request.created', asked.id],
          ['payment_request.created', withdrawn.id],
          ['payment_request.approved', asked.id],
          ['payment_request.cancelled', withdrawn.id],
        ],
      );
      await waitUntil(() => listen.output().includes('payment_request.cancelled'), 'the line of the last event');
      assert.match(listen.output(), /payment_request\.approved\s+evt_\S+\s+-> 200 \(\d+ ms\)/);
      assert.doesNotMatch(listen.output(), /payment\.(created|confirmed)/, 'payment_request.* leaves payment.* out');
      assert.equal(requests.requests.length, 4);
    } finally {
      await stop(listen);
      await requests.close();
    }
  });

  test('keeps one secret per key: a later start signs with it, --print-secret prints it, a receiver verifies', async () => {
    const printed = run(['listen', '--api-key', business.keys.secretTest, '--print-secret']);
    assert.equal(await printed.exited, 0);
    const secret = printed.stdout().trim();
    assert.match(secret, /^[0-9a-f]{64}$/, 'only the secret on stdout');

    const file = path.join(configDir, 'listen.json');
    if (process.platform !== 'win32') assert.equal(statSync(file).mode & 0o777, 0o600);
    const stored = readFileSync(file, 'utf8');
    assert.ok(!stored.includes(business.keys.secretTest), 'the file never holds the API key');
    assert.ok(stored.includes(createHash('sha256').update(business.keys.secretTest).digest('hex')));

    const before = local.requests.length;
    const listen = run([
      'listen',
      '--api-key',
      business.keys.secretTest,
      '--forward-to',
      local.url,
      '--base-url',
      t.baseUrl,
    ]);
    try {
      await waitUntil(() => listen.output().includes('Ready.'), 'listen to be ready');
      assert.doesNotMatch(listen.output(), new RegExp(secret), 'printed once, when it was created');
      assert.match(listen.output(), /Signing with your listen secret/);
      const commerce = new Commerce(business.keys.secretTest, { baseUrl: t.baseUrl, fetch: checkedFetch });
      await commerce.intents.create({ amount: 654 });
      const [forwarded] = (await local.waitFor(before + 1)).slice(before);
      const event = await verifyWebhook(forwarded!.body, forwarded!.headers, secret);
      assert.equal(event.event, 'payment.created');
    } finally {
      await stop(listen);
    }

    const again = run(['listen', '--api-key', business.keys.secretTest, '--print-secret']);
    assert.equal(await again.exited, 0);
    assert.equal(again.stdout().trim(), secret, 'the same at every start');
    const otherKey = run(['listen', '--api-key', `sk_test_${'o'.repeat(40)}`, '--print-secret']);
    assert.equal(await otherKey.exited, 0);
    assert.notEqual(otherKey.stdout().trim(), secret, 'one secret per key');
  });

  test('without COMMERCE_CONFIG_DIR the secrets live in $XDG_CONFIG_HOME/commerce', async () => {
    const xdg = mkdtempSync(path.join(os.tmpdir(), 'commerce-xdg-'));
    try {
      const printed = run(['listen', '--api-key', business.keys.secretTest, '--print-secret'], {
        XDG_CONFIG_HOME: xdg,
        APPDATA: xdg,
      });
      assert.equal(await printed.exited, 0);
      const file = path.join(xdg, 'commerce', 'listen.json');
      const { secrets } = JSON.parse(readFileSync(file, 'utf8')) as { secrets: Record<string, { secret: string }> };
      assert.deepEqual(
        Object.values(secrets).map((entry) => entry.secret),
        [printed.stdout().trim()],
      );
    } finally {
      rmSync(xdg, { recursive: true, force: true });
    }
  });

  test('writes its secrets through a temporary file of its own: a symbolic link planted beside is not followed', async () => {
    if (process.platform === 'win32') return;
    const dir = mkdtempSync(path.join(os.tmpdir(), 'commerce-listen-link-'));
    const victim = path.join(dir, 'victim.txt');
    writeFileSync(victim, 'untouched\n');
    try {
      // The shell plants a link at the name the file used to be written through (its pid's), then
      // becomes the CLI itself (exec keeps the pid).
      const planted = spawn(
        '/bin/sh',
        [
          '-c',
          'ln -s "$VICTIM" "$COMMERCE_CONFIG_DIR/listen.json.$$.tmp" && exec "$NODE" "$BIN" listen --api-key "$KEY" --print-secret',
        ],
        {
          stdio: ['ignore', 'pipe', 'pipe'],
          env: {
            ...process.env,
            COMMERCE_CONFIG_DIR: dir,
            VICTIM: victim,
            NODE: process.execPath,
            BIN,
            KEY: business.keys.secretTest,
          },
        },
      );
      let stdout = '';
      planted.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      const code = await new Promise<number | null>((resolve) => planted.on('exit', resolve));
      assert.equal(code, 0);
      assert.match(stdout.trim(), /^[0-9a-f]{64}$/);
      assert.equal(readFileSync(victim, 'utf8'), 'untouched\n', 'the link was not followed');
      const file = path.join(dir, 'listen.json');
      assert.ok(lstatSync(file).isFile(), 'listen.json is a file of its own, not the link');
      assert.equal(lstatSync(file).mode & 0o777, 0o600);
      assert.ok(readFileSync(file, 'utf8').includes(stdout.trim()));
      assert.deepEqual(
        readdirSync(dir).filter((name) => name.endsWith('.tmp') && !lstatSync(path.join(dir, name)).isSymbolicLink()),
        [],
        'no temporary file left behind',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('reconnects with backoff when the API goes away, says so on stderr, and loses no event', async () => {
    const commerce = new Commerce(business.keys.secretTest, { baseUrl: t.baseUrl, fetch: checkedFetch });
    const printed = run(['listen', '--api-key', business.keys.secretTest, '--print-secret']);
    assert.equal(await printed.exited, 0);
    const secret = printed.stdout().trim();
    const relay = await relayTo(t.baseUrl);
    const forwarded = await startReceiver('/restart');
    const listen = run([
      'listen',
      '--api-key',
      business.keys.secretTest,
      '--forward-to',
      forwarded.url,
      '--base-url',
      relay.url,
      '--events',
      'payment.created',
    ]);
    try {
      await waitUntil(() => listen.output().includes('Ready.'), 'listen to be ready');
      const before = await commerce.intents.create({ amount: 111 });
      await forwarded.waitFor(1);

      await relay.down(); // the API restarts: the waiting long poll is cut, new connections refused
      const during = await commerce.intents.create({ amount: 222 }); // an event while listen is cut off
      await waitUntil(
        () => /connection lost, reconnecting in \d+s/.test(listen.output()),
        'the reconnection notice',
        15_000,
      );
      await new Promise((resolve) => setTimeout(resolve, 1_500)); // a second failed attempt, at least
      assert.equal(listen.child.exitCode, null, 'still running while the API is away');
      await relay.up();
      const after = await commerce.intents.create({ amount: 333 });

      const received = await forwarded.waitFor(3, 40_000);
      const references = [];
      for (const request of received) {
        const event = await verifyWebhook(request.body, request.headers, secret);
        if (event.event === 'payment.created') references.push(event.data.reference_number);
      }
      assert.deepEqual(
        references,
        [before.referenceNumber, during.referenceNumber, after.referenceNumber],
        'the event made while it was away forwarded once, in order',
      );
      assert.match(listen.output(), /reconnected, resuming after evt_/);
      assert.doesNotMatch(listen.stdout(), /connection lost/, 'notices on stderr: stdout stays one line per event');
    } finally {
      await stop(listen);
      await relay.close();
      await forwarded.close();
    }
  });

  test('exits at once on a key the API refuses (401), without retrying', async () => {
    const listen = run([
      'listen',
      '--api-key',
      `sk_test_${'u'.repeat(40)}`,
      '--forward-to',
      local.url,
      '--base-url',
      t.baseUrl,
    ]);
    assert.equal(await listen.exited, 1);
    assert.doesNotMatch(listen.output(), /reconnecting/);
  });

  test('refuses a live key', async () => {
    const listen = run([
      'listen',
      '--api-key',
      business.keys.secretLive,
      '--forward-to',
      local.url,
      '--base-url',
      t.baseUrl,
    ]);
    assert.equal(await listen.exited, 1);
    assert.match(listen.output(), /sk_test_/);
    const printed = run(['listen', '--api-key', business.keys.secretLive, '--print-secret']);
    assert.equal(await printed.exited, 1);
    assert.equal(printed.stdout(), '', 'no secret made for a live key');
  });
});
