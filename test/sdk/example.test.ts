import assert from 'node:assert/strict';
import { afterAll, beforeAll, test } from 'vitest';
import pino from 'pino';
import { startWorker, type Worker } from '../../src/worker/worker.js';
import { startTestApp, type TestApp } from '../support/harness.js';
// @ts-expect-error -- plain JavaScript example without declarations
import { runMerchant } from '../../examples/merchant.mjs';

let t: TestApp;
let worker: Worker;
beforeAll(async () => {
  t = await startTestApp({ config: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
  worker = startWorker(t.runtime, pino({ level: 'silent' }), [], 60_000);
});
afterAll(async () => {
  await worker.stop();
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
