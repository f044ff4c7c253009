import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { Commerce } from '@commerce/sdk';
import { startWorker, type Worker } from '../../src/worker/worker.js';
import { startTestApp, waitUntil, type TestApp, type TestBusiness } from '../support/harness.js';
import { checkedFetch } from '../support/openapi-check.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { webhookHelpers } from '../webhooks/support.js';

const BIN = new URL('../../packages/sdk/bin/commerce.mjs', import.meta.url).pathname;

function run(args: string[]): { child: ChildProcess; output: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  child.stdout!.on('data', (chunk: Buffer) => (text += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (text += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => text, exited };
}

describe('commerce listen', () => {
  let t: TestApp;
  let business: TestBusiness;
  let worker: Worker;
  let hooks: ReturnType<typeof webhookHelpers>;
  let local: Receiver;
  before(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000', WEBHOOK_ALLOW_PRIVATE: 'true' } });
    business = await t.createBusiness();
    hooks = webhookHelpers(t);
    worker = startWorker(t.runtime, pino({ level: 'silent' }), [], 60_000);
    local = await startReceiver('/hooks');
  });
  after(async () => {
    await worker.stop();
    await hooks.closeAll();
    await local.close();
    await t.close();
  });

  test('forwards the matching events to a local URL as deliveries, signed with the printed secret', async () => {
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
        () => /Listen secret[^:]*: ([0-9a-f]{64})/.exec(listen.output())?.[1],
        'the secret',
      );
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
      listen.child.kill('SIGTERM');
      await listen.exited;
    }
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
  });
});
