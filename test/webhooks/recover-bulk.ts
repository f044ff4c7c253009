/**
 * The recover limit's checks, at any size: `batch` + 3 DEAD deliveries of a rate-limited endpoint
 * (2 a second), one recover queues the oldest `batch` spread at the endpoint's rate and counts the
 * 3 left, a second recover takes those. The quick tier runs it with a narrowed limit
 * (config.webhookRecoverBatch); the slow tier at the API's own 10,000 (recover-at-scale.test.ts).
 */
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { createIntent } from '../intents/support.js';
import { expectStatus, type TestApp, type TestBusiness } from '../support/harness.js';
import { ENDPOINTS, webhookHelpers } from './support.js';

const DAY = 24 * 60 * 60_000;

export async function checkBulkRecover(t: TestApp, business: TestBusiness, batch: number): Promise<void> {
  const sk = business.keys.secretTest;
  const hooks = webhookHelpers(t);
  try {
    const { receiver, endpoint } = await hooks.receiverWithEndpoint(sk, ['payment.created'], { maxPerSecond: 2 });
    await createIntent(t, sk, { amount: 100 });
    await receiver.waitFor(1);
    const [seed] = await hooks.deliveriesOfEndpoint(endpoint.id);
    await sql`
      INSERT INTO webhook_deliveries (id, event_id, endpoint_id, business_id, environment, event, status,
        dead_reason, attempt_count, next_attempt_at, created_at, updated_at, completed_at)
      SELECT 'dlv_bulk_' || n, ${seed!.event_id}, ${endpoint.id}, ${business.id}, 'test', 'payment.created', 'DEAD',
        'MAX_ATTEMPTS', 8, now(), now() - make_interval(secs => n), now(), now()
      FROM generate_series(1, ${batch + 3}::int) AS n`.execute(t.runtime.db);

    const since = new Date(Date.now() - DAY).toISOString();
    const recover = () =>
      t.request('POST', `${ENDPOINTS}/${endpoint.id}/recover`, { key: sk, idempotencyKey: true, body: { since } });
    const first = await recover();
    expectStatus(first, 200);
    assert.deepEqual([first.body.data.recovered, first.body.data.remaining], [batch, 3]);
    // Spread at the endpoint's rate: half a second apart, in order. The worker may have sent the
    // first few already (they were due at once); those still waiting keep their places.
    const waiting = await sql<{ at: Date }>`
      SELECT next_attempt_at AS at FROM webhook_deliveries
      WHERE endpoint_id = ${endpoint.id} AND id LIKE 'dlv_bulk_%' AND status = 'PENDING'
      ORDER BY next_attempt_at`.execute(t.runtime.db);
    const times = waiting.rows.map((row) => new Date(row.at).getTime());
    assert.ok(times.length >= Math.min(batch, 10), `${times.length} still waiting`);
    const spread = (times.at(-1)! - times[0]!) / 1000;
    assert.ok(Math.abs(spread - (times.length - 1) / 2) < 0.05, `${times.length} spread over ${spread} s`);
    // Oldest first: the three newest are the ones left.
    const left = await t.runtime.db
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('endpoint_id', '=', endpoint.id)
      .where('status', '=', 'DEAD')
      .orderBy('id')
      .execute();
    assert.deepEqual(
      left.map((row) => row.id),
      ['dlv_bulk_1', 'dlv_bulk_2', 'dlv_bulk_3'],
    );

    const second = await recover();
    assert.deepEqual([second.body.data.recovered, second.body.data.remaining], [3, 0]);
    // Ends the backlog: deleting the endpoint ends its waiting deliveries.
    expectStatus(await t.request('DELETE', `${ENDPOINTS}/${endpoint.id}`, { key: sk, idempotencyKey: true }), 200);
  } finally {
    await hooks.closeAll();
  }
}
