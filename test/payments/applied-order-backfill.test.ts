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
