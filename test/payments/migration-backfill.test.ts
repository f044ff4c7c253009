import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, test } from 'vitest';
import { sql } from 'kysely';
import { expectStatus, startTestApp, type TestApp } from '../support/harness.js';
import { createProduct } from '../products/support.js';
import { act, createIntent } from '../intents/support.js';
import { freshPhone, orderAction, simulate } from '../orders/support.js';
import { fold, setPlan } from './support.js';

const BACKFILL = path.resolve(import.meta.dirname, '../../src/db/migrations/025_money_backfill.sql');
/** Migration 054: the sentences 025 writes, read back into data (issue 54 item 3). */
const AS_DATA = path.resolve(import.meta.dirname, '../../src/db/migrations/054_balance_descriptions_as_data.sql');

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
});
afterAll(() => t.close());

async function snapshot() {
  const transactions = await sql<Record<string, unknown>>`
    SELECT business_id, environment, type, amount, fee, net, source_reference, source_kind, detail,
      ledger_transaction_id, created_at
    FROM balance_transactions ORDER BY ledger_transaction_id`.execute(t.runtime.db);
  const intents = await sql<Record<string, unknown>>`
    SELECT reference_number, provider_returned, tof_returned, tte_returned FROM payment_intents
    ORDER BY reference_number`.execute(t.runtime.db);
  const orders = await sql<Record<string, unknown>>`
    SELECT reference_number, fees FROM orders ORDER BY reference_number`.execute(t.runtime.db);
  return { transactions: transactions.rows, intents: intents.rows, orders: orders.rows };
}

/**
 * Issue 33: migration 025 gives what was paid before it the state the code now keeps. Made here
 * by the code, wiped back to what a database before the migration held, then rebuilt by the
 * migration's own statements: the same rows.
 */
test("the money backfill rebuilds what the code writes: balance transactions, refunds' shares, orders' fees", async () => {
  const business = await t.createBusiness({ name: 'Before the upgrade' });
  const sk = business.keys.secretTest;
  await setPlan(t, business.id, { providerBps: 275, payerFee: 150, tofBps: 500, tteBps: 180 });
  const labelled = await createIntent(t, sk, { amount: 12_345, label: 'Couscous' });
  expectStatus(await act(t, sk, labelled.referenceNumber, 'simulate'), 200);
  expectStatus(await act(t, sk, labelled.referenceNumber, 'refund', { amount: 2_000 }), 200);
  expectStatus(await act(t, sk, labelled.referenceNumber, 'refund'), 200);
  const plain = await createIntent(t, sk, { amount: 999 });
  expectStatus(await act(t, sk, plain.referenceNumber, 'simulate'), 200);
  const item = await createProduct(t, sk, { name: 'Dates', price: 1_750, quantity: 100, status: 'ACTIVE' });
  const orders: string[] = [];
  for (const quantity of [1, 4]) {
    const placed = await simulate(t, sk, [{ productId: item.id, quantity }], freshPhone());
    expectStatus(placed, 201);
    orders.push(placed.body.data.referenceNumber);
  }
  const [raised, lowered] = orders as [string, string];
  for (const [ref, quantity] of [
    [raised, 3],
    [lowered, 2],
  ] as const) {
    expectStatus(
      await orderAction(t, sk, `/${ref}/propose-modification`, { items: [{ productId: item.id, quantity }] }),
      200,
    );
    expectStatus(await orderAction(t, sk, `/${ref}/modification/accept`), 200);
  }
  expectStatus(await orderAction(t, sk, `/${raised}/refund`, { amount: 1_001 }), 200);
  expectStatus(await orderAction(t, sk, `/${lowered}/cancel`, { reason: 'out of dates' }), 200);
  await fold(t);
  const written = await snapshot();
  assert.equal(written.transactions.length, 10);

  await sql`DELETE FROM balance_transactions`.execute(t.runtime.db);
  await sql`UPDATE payment_intents SET provider_returned = 0, tof_returned = 0, tte_returned = 0`.execute(t.runtime.db);
  await sql`UPDATE orders SET fees = fees - 'payerTtc' - 'tof' - 'tte' - 'tofReturned' - 'tteReturned'`.execute(
    t.runtime.db,
  );
  // 025 wrote English sentences in a column 054 turned into data: the sentences, then 054 again.
  await sql`ALTER TABLE balance_transactions ADD COLUMN description text`.execute(t.runtime.db);
  await t.runtime.database.inScriptTransaction((run) => run(readFileSync(BACKFILL, 'utf8')));
  await t.runtime.database.inScriptTransaction((run) => run(readFileSync(AS_DATA, 'utf8')));
  const rebuilt = await snapshot();
  assert.deepEqual(rebuilt.intents, written.intents);
  assert.deepEqual(rebuilt.orders, written.orders);
  assert.deepEqual(rebuilt.transactions, written.transactions);
  const settled = await sql<{ balance_after: string; available: string }>`
    SELECT b.balance_after::text, (SELECT balance FROM ledger_accounts WHERE kind = 'merchant' AND owner_id = b.business_id
      AND environment = 'test')::text AS available
    FROM balance_transactions b ORDER BY b.applied_order DESC LIMIT 1`.execute(t.runtime.db);
  assert.equal(settled.rows[0]!.balance_after, settled.rows[0]!.available, 'the newest leaves the balance');
});
