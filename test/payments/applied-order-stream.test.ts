import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { sql } from 'kysely';
import {
  balanceTransactionTexts,
  EXPORT_BATCH,
  type BalanceOwner,
} from '../../src/modules/payments/balance-transactions.js';
import { startTestApp, type TestApp } from '../support/harness.js';

/**
 * Review finding 1 of issue 54: the files read an owner's rows in batches by applied_order, and
 * the fold gives a row it reaches a new, higher number. A fold between two batches must neither
 * list a row twice (oldest first: the statements) nor lose one (newest first: the export).
 */
describe('a file read in batches while the fold renumbers a row', () => {
  let t: TestApp;
  const rows = EXPORT_BATCH + 1;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  /** `rows` payments of 1 MRU, numbered in order; the one at `pendingAt` (1-based) not folded yet. */
  async function ownerWithRows(pendingAt: number): Promise<{ owner: BalanceOwner; pending: string }> {
    const business = await t.createBusiness({ name: `Stream shop ${pendingAt}` });
    const prefix = `txn_stream_${business.id}_`;
    await sql`
      INSERT INTO balance_transactions (id, business_id, environment, type, amount, fee, net, source_reference,
        source_kind, detail, ledger_transaction_id, balance_after, created_at)
      SELECT ${prefix} || lpad(n::text, 4, '0'), ${business.id}, 'test', 'payment', 100, 0, 100, 'PI-STREAM' || n,
        'payment_intent', '{}', 'ltx_stream', CASE WHEN n = ${pendingAt} THEN NULL ELSE n * 100 END, now()
      FROM generate_series(1, ${rows}) AS n ORDER BY n`.execute(t.runtime.db);
    return {
      owner: { businessId: business.id, environment: 'test' },
      pending: `${prefix}${String(pendingAt).padStart(4, '0')}`,
    };
  }

  /** The ids the stream lists, the fold reaching `pending` (as ledger.ts does: a new number) after the first batch. */
  async function streamFoldingBetween(owner: BalanceOwner, pending: string, order: 'newest' | 'oldest') {
    const ids: string[] = [];
    let batches = 0;
    for await (const text of balanceTransactionTexts(t.runtime.db, owner, {}, order, (batch) =>
      batch.map((row) => `${row.id}\n`).join(''),
    )) {
      ids.push(...text.split('\n').filter(Boolean));
      if (batches++ === 0) {
        await sql`UPDATE balance_transactions
          SET applied_order = nextval('balance_transactions_applied_order_seq'), balance_after = ${rows * 100}
          WHERE id = ${pending}`.execute(t.runtime.db);
      }
    }
    return { ids, batches };
  }

  test('oldest first (statements): the row folded after it was read is not listed again', async () => {
    const { owner, pending } = await ownerWithRows(5);
    const { ids, batches } = await streamFoldingBetween(owner, pending, 'oldest');
    assert.equal(batches, 2, 'the fold came between two batches');
    assert.equal(ids.length, rows);
    assert.equal(new Set(ids).size, rows);
  });

  test('newest first (export): the row folded from below the cursor is not lost', async () => {
    const { owner, pending } = await ownerWithRows(1);
    const { ids } = await streamFoldingBetween(owner, pending, 'newest');
    assert.equal(new Set(ids).size, rows);
    assert.ok(ids.includes(pending));
    // The row not yet folded is the newest in the balance's order: the fold applies it last.
    assert.equal(ids[0], pending);
  });
});
