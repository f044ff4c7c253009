import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { sql } from 'kysely';
import { testDatabaseKind } from '../support/database.js';
import { ADMIN_TOKEN, expectStatus, startTestApp, waitUntil, type TestApp } from '../support/harness.js';
import { nodeEntry } from '../support/node-entry.js';
import { assertBalanceExplained, assertLedgerSound, fold, setPlan } from '../payments/support.js';
import { earn, PAYOUTS, payoutTo, sendPayouts } from './support.js';

const skip =
  testDatabaseKind !== 'postgres' ? 'needs PostgreSQL: a second process cannot open the PGlite database' : false;

describe.skipIf(skip)('a worker killed in the middle of a batch of 1,000 payouts', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
  });
  afterAll(() => t.close());

  test('after a restart every payout ends PAID or FAILED exactly once and the ledger holds', async () => {
    const shop = await t.createBusiness({ name: 'Crash shop' });
    const key = shop.keys.secretTest;
    await setPlan(t, shop.id, { providerBps: 0, payerFee: 0, tofBps: 500, tteBps: 0 });
    expectStatus(await t.admin('PUT', `/businesses/${shop.id}/fees`, { payoutFeeFlat: 5 }), 200);
    await earn(t, key, 2_000_000);
    // Every tenth item goes to the phone that always fails.
    const items = Array.from({ length: 1000 }, (_, i) =>
      payoutTo(i % 10 === 9 ? '+22220001313' : `+2225${String(i).padStart(7, '0')}`, 100 + i),
    );
    const created = await t.request('POST', `${PAYOUTS}/batch`, { key, idempotencyKey: true, body: { items } });
    expectStatus(created, 201);
    const references: string[] = created.body.data.payouts.map(
      (payout: { referenceNumber: string }) => payout.referenceNumber,
    );
    const doneCount = async () => {
      const row = await t.runtime.db
        .selectFrom('payouts')
        .select(({ fn }) => fn.countAll<number>().as('n'))
        .where('batch_id', '=', created.body.data.id)
        .where('status', '<>', 'PENDING')
        .executeTakeFirstOrThrow();
      return Number(row.n);
    };

    const child = spawn(process.execPath, [...nodeEntry('src/server.ts'), '--worker'], {
      env: {
        ...process.env,
        DATABASE_URL: t.testDatabase.url!,
        ADMIN_TOKEN,
        LOG_LEVEL: 'silent',
        SEED_DEMO: 'false',
      },
      stdio: 'ignore',
    });
    try {
      await waitUntil(async () => (await doneCount()) >= 50, 'the worker to send 50 payouts', 60_000);
    } finally {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
    const atKill = await doneCount();
    assert.ok(atKill < 1000, `killed mid-batch (${atKill} done)`);

    while ((await sendPayouts(t)) > 0);
    const counts = await t.request('GET', `${PAYOUTS}/batches/${created.body.data.id}`, { key });
    assert.deepEqual(counts.body.data.counts, { PENDING: 0, PAID: 900, FAILED: 100, CANCELLED: 0 });
    // Exactly one outcome event and one second ledger step per payout.
    const outcomes = await sql<{ subject: string; n: number }>`
      SELECT subject, count(*)::int AS n FROM events
      WHERE subject IN (${sql.join(references)}) AND event IN ('payout.paid', 'payout.failed')
      GROUP BY subject`.execute(t.runtime.db);
    assert.equal(outcomes.rows.length, 1000);
    assert.ok(outcomes.rows.every((row) => row.n === 1));
    const steps = await sql<{ n: number }>`
      SELECT count(DISTINCT transaction_id)::int AS n FROM ledger_postings
      WHERE reference IN (${sql.join(references)})`.execute(t.runtime.db);
    // Reserved (amount and fee: two) and then paid or returned (one): three per payout.
    assert.equal(steps.rows[0]!.n, 3000);
    await fold(t);
    await assertLedgerSound(t);
    await assertBalanceExplained(t, key);
  });
});
