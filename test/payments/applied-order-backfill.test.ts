import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, test } from 'vitest';
import { sql } from 'kysely';
import { act, createIntent } from '../intents/support.js';
import { newPhone, PAYOUTS, payoutTo } from '../payouts/support.js';
import { expectStatus, startTestApp, type TestApp } from '../support/harness.js';
import { allBalanceTransactions, assertLedgerSound, fold } from './support.js';

const MIGRATION = path.resolve(import.meta.dirname, '../../src/db/migrations/053_balance_applied_order.sql');

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
});
afterAll(() => t.close());

/**
 * Issue 54 item 2: migration 053 numbers the rows that exist in the order the fold applied them,
 * the balance_after chain, every row kept: the order of their postings, and where a later posting
 * was folded first (it committed sooner), the chain itself.
 */
test('migration 053 orders existing balance transactions along their balance_after chain, none lost', async () => {
  const business = await t.createBusiness({ name: 'Before the sequence' });
  const sk = business.keys.secretTest;
  for (const amount of [80_000, 12_000, 3_000]) {
    const intent = await createIntent(t, sk, { amount });
    expectStatus(await act(t, sk, intent.referenceNumber, 'simulate'), 200);
  }
  const batch = await t.request('POST', `${PAYOUTS}/batches`, {
    key: sk,
    body: { items: [5_000, 700, 2_100].map((amount) => payoutTo(newPhone(), amount)) },
    idempotencyKey: true,
  });
  expectStatus(batch, 201);
  await fold(t);
  const before = await allBalanceTransactions(t, sk);

  // As a database before migration 053 holds them: the two oldest payments folded the other way
  // round (the second committed first), and no order but the times.
  const [first, second] = [...before].reverse() as [{ id: string; net: number }, { id: string; net: number }];
  await sql`UPDATE balance_transactions SET balance_after = ${second.net} WHERE id = ${second.id}`.execute(
    t.runtime.db,
  );
  await sql`UPDATE balance_transactions SET balance_after = ${second.net + first.net} WHERE id = ${first.id}`.execute(
    t.runtime.db,
  );
  await sql`UPDATE balance_transactions SET applied_order = 0`.execute(t.runtime.db);
  await t.runtime.database.inScriptTransaction((run) => run(readFileSync(MIGRATION, 'utf8')));

  const after = await allBalanceTransactions(t, sk);
  assert.equal(after.length, before.length, 'no row lost');
  assert.deepEqual(
    after.slice(-2).map((txn) => txn.id),
    [first.id, second.id],
    'the chain decides: second, then first',
  );
  for (const [index, txn] of after.entries()) {
    const older = after[index + 1];
    assert.equal(txn.balanceAfter, (older?.balanceAfter ?? 0) + txn.net, `${txn.id} follows ${older?.id}`);
  }
  // New movements come after every renumbered one.
  const later = await createIntent(t, sk, { amount: 999 });
  expectStatus(await act(t, sk, later.referenceNumber, 'simulate'), 200);
  await fold(t);
  const newest = (await allBalanceTransactions(t, sk))[0];
  assert.equal(newest.source.reference, later.referenceNumber);
  assert.equal(newest.balanceAfter, after[0].balanceAfter + newest.net);
  await assertLedgerSound(t);
});

/**
 * Review finding 2 of issue 54: the walk along a broken chain took the next row by sorting every
 * row left, per row (n² at deploy). A chain broken at every other row, of a few thousand rows, is
 * walked in a bounded time, every row in chain order.
 */
test('migration 053 walks a long broken chain in a bounded time', async () => {
  const business = await t.createBusiness({ name: 'A long broken chain' });
  const rows = 8_000;
  // Payments of 1 MRU in pairs the fold took the other way round: the second of each pair first.
  await sql`
    INSERT INTO balance_transactions (id, business_id, environment, type, amount, fee, net, source_reference,
      source_kind, detail, ledger_transaction_id, balance_after, created_at)
    SELECT 'txn_walk_' || lpad(n::text, 5, '0'), ${business.id}, 'test', 'payment', 100, 0, 100, 'PI-WALK' || n,
      'payment_intent', '{}', 'ltx_walk', CASE WHEN n % 2 = 1 THEN (n + 1) * 100 ELSE (n - 1) * 100 END,
      now() + n * interval '1 millisecond'
    FROM generate_series(1, ${rows}) AS n ORDER BY n`.execute(t.runtime.db);
  const started = Date.now();
  await t.runtime.database.inScriptTransaction((run) => run(readFileSync(MIGRATION, 'utf8')));
  const seconds = (Date.now() - started) / 1000;
  const walked = await sql<{ id: string; net: number; balance_after: number }>`
    SELECT id, net, balance_after FROM balance_transactions WHERE business_id = ${business.id}
    ORDER BY applied_order`.execute(t.runtime.db);
  assert.equal(walked.rows.length, rows, 'no row lost');
  let balance = 0;
  for (const row of walked.rows) {
    balance += Number(row.net);
    assert.equal(Number(row.balance_after), balance, `${row.id} follows the chain`);
  }
  assert.ok(seconds < 10, `the walk took ${seconds.toFixed(1)} s`);
});
