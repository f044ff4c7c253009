import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, test } from 'vitest';
import { startTestApp, type TestApp } from '../support/harness.js';
// @ts-expect-error -- plain JavaScript example without declarations
import { runMerchant } from '../../examples/merchant.mjs';

const EXAMPLE = new URL('../../examples/merchant.mjs', import.meta.url).pathname;

// The server as `npm start` configures it: no WEBHOOK_ALLOW_PRIVATE, no worker needed by the example.
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
  assert.equal(t.runtime.config.webhookAllowPrivate, false);
});
afterAll(async () => {
  await t.close();
});

test('examples/merchant.mjs: intent, verified webhooks in order, refund', async () => {
  const business = await t.createBusiness();
  const lines: string[] = [];
  const result = await runMerchant({
    apiKey: business.keys.secretTest,
    baseUrl: t.baseUrl,
    log: (line: string) => lines.push(line),
  });
  assert.equal(result.intent.status, 'REFUNDED');
  assert.equal(result.intent.totalAmountRefunded, 5000);
  assert.deepEqual(
    result.events.map((event: { event: string; sequence: number }) => [event.event, event.sequence]),
    [
      ['payment.created', 1],
      ['payment.confirmed', 2],
      ['payment.refunded', 3],
    ],
  );
  assert.ok(lines.some((line) => line.startsWith('intent ')));
});

test('examples/merchant.mjs runs as its header says, against the default settings of `npm start`', async () => {
  const header =
    /^ \* {3}(COMMERCE_API_KEY=sk_test_\.\.\. COMMERCE_BASE_URL=(\S+) node (examples\/merchant\.mjs))$/m.exec(
      readFileSync(EXAMPLE, 'utf8'),
    );
  assert.ok(header, 'the header says how to run it');
  assert.equal(header[2], 'http://localhost:8080', 'the address `npm start` prints');
  const business = await t.createBusiness();
  // Only the key (the banner's) and the address (this test's server) differ from the header's line.
  const child = spawn(process.execPath, [header[3]!], {
    cwd: new URL('../../', import.meta.url).pathname,
    env: { ...process.env, NODE_OPTIONS: '', COMMERCE_API_KEY: business.keys.secretTest, COMMERCE_BASE_URL: t.baseUrl },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  assert.equal(code, 0, output);
  const webhooks = output.split('\n').filter((line) => line.startsWith('webhook '));
  assert.deepEqual(webhooks, [
    'webhook payment.created #1',
    'webhook payment.confirmed #2',
    'webhook payment.refunded #3',
  ]);
  assert.match(output, /^refunded 5000 centimes$/m);
});
