import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import type {
  KyselyPlugin,
  PluginTransformQueryArgs,
  PluginTransformResultArgs,
  QueryResult,
  RootOperationNode,
  UnknownRow,
} from 'kysely';
import pino from 'pino';
import { startDeliveryEngine } from '../../src/modules/webhooks/engine.js';
import { startTestApp, waitUntil, type TestApp } from '../support/harness.js';
import { createIntent } from '../intents/support.js';
import { webhookHelpers } from './support.js';

/** Fails the statement that records outcomes, as a lost connection would, while `failing`. */
class OutcomeBlip implements KyselyPlugin {
  failing = false;
  failures = 0;

  transformQuery({ node }: PluginTransformQueryArgs): RootOperationNode {
    if (this.failing && node.kind === 'RawNode' && node.sqlFragments.join('').includes('webhook_attempt_rollups')) {
      this.failures += 1;
      throw Object.assign(new Error('Connection terminated unexpectedly'), { code: 'ECONNRESET' });
    }
    return node;
  }

  async transformResult({ result }: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return result;
  }
}

describe('a stopping worker and a lost database (review of issue 34, item 4)', () => {
  let t: TestApp;
  let hooks: ReturnType<typeof webhookHelpers>;
  beforeAll(async () => {
    t = await startTestApp({ config: { WEBHOOK_ALLOW_PRIVATE: 'true', RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    hooks = webhookHelpers(t);
  });
  afterAll(async () => {
    await hooks.closeAll();
    await t.close();
  });

  test('an outcome that meets a lost database while attempts are still in flight is written once it is back', async () => {
    const business = await t.createBusiness();
    const sk = business.keys.secretTest;
    const { receiver, endpoint } = await hooks.receiverWithEndpoint(sk, ['payment.created']);
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    // The first request is answered at once; the second only when the test says.
    receiver.answer = () => (receiver.requests.length === 1 ? { status: 200 } : { status: 200, after: gate });
    for (let i = 0; i < 2; i++) await createIntent(t, sk, { amount: 100 + i });

    const blip = new OutcomeBlip();
    blip.failing = true;
    const engine = startDeliveryEngine(t.runtime.db.withPlugin(blip), pino({ level: 'silent' }), {
      retryScale: t.runtime.config.webhookRetryScale,
      webhookAllowPrivate: true,
      timeoutMs: 10_000,
      connectTimeoutMs: 5_000,
      pollMs: 600_000,
    });
    let stopping: Promise<void> | undefined;
    try {
      await receiver.waitFor(2, 15_000);
      await waitUntil(() => blip.failures >= 1, "the first outcome's write to fail");
      stopping = engine.stop();
      // Failing twice more while stopping: before the fix, a stopping worker gave up on the
      // first of these (the batch) and on the second (its row alone), and dropped the outcome.
      const failed = blip.failures;
      await waitUntil(() => blip.failures >= failed + 2, 'the write to fail again while stopping', 15_000);
    } finally {
      blip.failing = false;
      open();
      await (stopping ?? engine.stop());
    }

    const rows = await hooks.deliveriesOfEndpoint(endpoint.id);
    assert.equal(rows.length, 2);
    for (const row of rows) {
      assert.equal(row.status, 'SUCCEEDED', `${row.id}: ${row.last_error}`);
      assert.equal(row.attempt_count, 1);
      assert.equal(row.locked_by, null);
    }
    const attempts = await t.runtime.db
      .selectFrom('webhook_attempts')
      .select(['status_code', 'error'])
      .where(
        'delivery_id',
        'in',
        rows.map((row) => row.id),
      )
      .execute();
    assert.deepEqual(
      attempts.map((attempt) => [attempt.status_code, attempt.error]),
      [
        [200, null],
        [200, null],
      ],
    );
  });
});
