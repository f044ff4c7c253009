/**
 * The recover limit at the API's own size, 10,000 per call (slow tier: test/support/tiers.ts): the
 * quick tier checks the same at a narrowed limit (recover.test.ts), which a change to the query's
 * plan at this size would not show (a generic plan once made this call take two minutes).
 */
import { afterAll, beforeAll, describe, test } from 'vitest';
import pino from 'pino';
import { WEBHOOK_RECOVER_BATCH } from '../../src/config.js';
import { startWorker, type Worker } from '../../src/worker/worker.js';
import { startTestApp, type TestApp } from '../support/harness.js';
import { checkBulkRecover } from './recover-bulk.js';

describe('recover at full size', () => {
  let t: TestApp;
  let worker: Worker;
  beforeAll(async () => {
    t = await startTestApp({ config: { WEBHOOK_ALLOW_PRIVATE: 'true', RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    worker = startWorker(t.runtime, pino({ level: 'silent' }), [], 60_000);
  });
  afterAll(async () => {
    await worker.stop();
    await t.close();
  });

  test(`at most ${WEBHOOK_RECOVER_BATCH.toLocaleString('en')} per call, the rest counted, spread at the endpoint's rate`, async () => {
    await checkBulkRecover(t, await t.createBusiness(), WEBHOOK_RECOVER_BATCH);
  });
});
