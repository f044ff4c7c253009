import assert from 'node:assert/strict';
import { afterAll, beforeAll, test } from 'vitest';
import { sql } from 'kysely';
import { expectStatus, startTestApp, type TestApp } from '../support/harness.js';
import { BALANCE } from './support.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

/**
 * Review finding 3 of issue 54: the list's pages are found by creation day (the counts) but
 * ordered by applied_order. Across a UTC midnight where the two disagree (a row created just before
 * it, taken by the balance after one created just after it), pages of one row each must still
 * list every row once, in the order the balance took them.
 */
test('pages of the balance list across a midnight where creation time and applied order disagree', async () => {
  const business = await t.createBusiness({ name: 'Midnight shop' });
  // Inserted, so numbered, in this order: the balance took them in it.
  const created = ['2026-03-01T12:00:00Z', '2026-03-02T00:00:01Z', '2026-03-01T23:59:59Z', '2026-03-02T08:00:00Z'];
  for (const [index, at] of created.entries()) {
    await sql`
      INSERT INTO balance_transactions (id, business_id, environment, type, amount, fee, net, source_reference,
        source_kind, detail, ledger_transaction_id, balance_after, created_at)
      VALUES (${`txn_midnight_${business.id}_${index}`}, ${business.id}, 'test', 'payment', 100, 0, 100,
        ${`PI-MIDNIGHT${index}`}, 'payment_intent', '{}', 'ltx_midnight', ${(index + 1) * 100}, ${at}::timestamptz)`.execute(
      t.runtime.db,
    );
  }
  const expected = created.map((_, index) => `txn_midnight_${business.id}_${index}`).reverse();
  const paged: string[] = [];
  for (let page = 1; page <= created.length; page++) {
    const response = await t.request('GET', `${BALANCE}/transactions?limit=1&page=${page}`, {
      key: business.keys.secretTest,
    });
    expectStatus(response, 200);
    assert.equal(response.body.data.total, created.length);
    paged.push(...response.body.data.items.map((item: { id: string }) => item.id));
  }
  assert.deepEqual(paged, expected);
  // A date range the midnight cuts through pages the same way.
  const ranged: string[] = [];
  for (let page = 1; page <= 3; page++) {
    const response = await t.request(
      'GET',
      `${BALANCE}/transactions?limit=1&page=${page}&from=2026-03-01T18:00:00Z&to=2026-03-02T09:00:00Z`,
      { key: business.keys.secretTest },
    );
    expectStatus(response, 200);
    assert.equal(response.body.data.total, 3);
    ranged.push(...response.body.data.items.map((item: { id: string }) => item.id));
  }
  assert.deepEqual(ranged, expected.slice(0, 3));
});
