import assert from 'node:assert/strict';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { ensureMonthlyPartitions, listMonthTables, monthStart, partitionName } from '../../src/db/partitions.js';
import { checkLedger } from '../../src/modules/payments/ledger.js';
import { act, createIntent } from '../intents/support.js';
import { createSeller } from '../sellers/support.js';
import { adminCli } from '../support/admin-cli.js';
import { testDatabaseKind } from '../support/database.js';
import { expectError, expectStatus, startTestApp, type TestApp } from '../support/harness.js';

const DAY = 86_400_000;

describe('admin partitions: an old month of money records archived, the ledger check still passing', () => {
  let t: TestApp;
  const now = new Date();
  const old = monthStart(now, -14);
  const lastYear = monthStart(now, -12);
  const month = (at: Date) => at.toISOString().slice(0, 7);
  beforeAll(async () => {
    t = await startTestApp();
    const db = t.runtime.db;
    await ensureMonthlyPartitions(db, old, now);
    const business = await t.createBusiness();
    // Money moved 14 and 12 months ago: a balanced transfer, and the merchant's balance rows
    // (settled by a payout 14 months ago, not yet 12 months ago).
    for (const [at, tag] of [
      [new Date(old.getTime() + DAY), 'old'],
      [new Date(lastYear.getTime() + DAY), 'last-year'],
    ] as const) {
      await sql`
        INSERT INTO ledger_postings (transaction_id, account_id, amount, kind, reference, created_at)
        SELECT ${`ltx_${tag}`}, id, CASE WHEN kind = 'revenue' THEN 900 ELSE -900 END, 'credit', 'archive test', ${at}
        FROM ledger_accounts WHERE environment = 'test' AND kind IN ('revenue', 'funding')`.execute(db);
      await sql`UPDATE ledger_accounts SET balance = balance + CASE WHEN kind = 'revenue' THEN 900 ELSE -900 END
        WHERE environment = 'test' AND kind IN ('revenue', 'funding')`.execute(db);
      await sql`
        INSERT INTO balance_transactions (id, business_id, environment, type, amount, fee, net, source_reference,
          source_kind, ledger_transaction_id, created_at, settled_by)
        VALUES (${`btx_${tag}`}, ${business.id}, 'test', 'payment', 1000, 100, 900, 'pi_archive', 'payment_intent',
          ${`ltx_${tag}`}, ${at}, ${tag === 'old' ? 'po_archive' : null})`.execute(db);
    }
    assert.deepEqual((await checkLedger(db)).problems, []);
  });
  afterAll(() => t?.close());

  test('the current month and the last twelve are refused with a clear error; so is an unknown month', async () => {
    const recent = await adminCli(t, 'partitions', 'archive', 'ledger_postings', '--month', month(lastYear));
    assert.equal(recent.code, 1);
    assert.match(recent.stderr, /Error MONTH_NOT_ARCHIVABLE: .*latest month that may be archived is/);
    const current = await t.admin('POST', '/partitions/archive', { table: 'balance_transactions', month: month(now) });
    expectStatus(current, 409);
    const unknown = await t.admin('POST', '/partitions/archive', { table: 'ledger_postings', month: '2001-01' });
    expectStatus(unknown, 404);
    const events = await t.admin('POST', '/partitions/archive', { table: 'events', month: month(old) });
    expectStatus(events, 400);
    const usage = await adminCli(t, 'partitions', 'archive', 'ledger_postings', '--month', 'June');
    assert.equal(usage.code, 2);
  });

  test('archiving a month keeps its totals, detaches it, and ledger check still passes', async () => {
    const db = t.runtime.db;
    const before = await checkLedger(db);
    const listed = await adminCli(t, 'partitions', 'list');
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, new RegExp(`${partitionName('ledger_postings', old)} +attached`));

    const archived = await adminCli(t, 'partitions', 'archive', 'ledger_postings', '--month', month(old));
    assert.equal(archived.code, 0, archived.stderr);
    assert.match(archived.stdout, /detached as table ledger_postings_y\d{4}m\d{2}, 2 rows, total 0\./);
    assert.match(archived.stdout, /pg_dump -t ledger_postings_y/);
    const balance = await t.admin('POST', '/partitions/archive', { table: 'balance_transactions', month: month(old) });
    expectStatus(balance, 200);
    assert.deepEqual(balance.body.data, {
      table: 'balance_transactions',
      month: month(old),
      detached: partitionName('balance_transactions', old),
      rows: 1,
      total: '900',
    });

    const after = await checkLedger(db);
    assert.deepEqual(after.problems, []);
    assert.equal(after.postings, before.postings);
    const { rows } = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM ledger_postings WHERE transaction_id = 'ltx_old'`.execute(db);
    assert.equal(rows[0]!.n, 0, 'the month left the live table');
    const detached = (await listMonthTables(db)).find((entry) => entry.name === partitionName('ledger_postings', old));
    assert.equal(detached?.attached, false);
    // The operator's dump holds what was printed; then the table is dropped.
    const { rows: dump } = await sql<{ n: number; total: string }>`
      SELECT count(*)::int AS n, sum(amount)::text AS total FROM ${sql.id(partitionName('ledger_postings', old))}`.execute(
      db,
    );
    assert.deepEqual(dump[0], { n: 2, total: '0' });
    await sql`DROP TABLE ${sql.id(partitionName('ledger_postings', old))}`.execute(db);
    await sql`DROP TABLE ${sql.id(partitionName('balance_transactions', old))}`.execute(db);
    assert.deepEqual((await checkLedger(db)).problems, []);

    // Archived already: nothing to archive again.
    expectStatus(await t.admin('POST', '/partitions/archive', { table: 'ledger_postings', month: month(old) }), 404);
  });

  test('a balance month with rows no payout settled yet is refused', async () => {
    const unsettled = monthStart(now, -13);
    const db = t.runtime.db;
    const business = (await sql<{ id: string }>`SELECT id FROM businesses LIMIT 1`.execute(db)).rows[0]!.id;
    await sql`
      INSERT INTO balance_transactions (id, business_id, environment, type, amount, fee, net, source_reference,
        source_kind, ledger_transaction_id, created_at)
      VALUES ('btx_unsettled', ${business}, 'test', 'payment', 10, 0, 10, 'pi_u', 'payment_intent', 'ltx_u',
        ${new Date(unsettled.getTime() + DAY)})`.execute(db);
    const refused = await t.admin('POST', '/partitions/archive', {
      table: 'balance_transactions',
      month: month(unsettled),
    });
    expectStatus(refused, 409);
    assert.match(refused.body.error.message, /1 balance transactions of this month are not settled/);
  });

  test("a month holding a seller's share of a payment that may still be refunded is refused; once refunded in full it goes, its list counts with it", async () => {
    const db = t.runtime.db;
    const split = monthStart(now, -15);
    await ensureMonthlyPartitions(db, split, split);
    const business = await t.createBusiness();
    const key = business.keys.secretTest;
    const seller = await createSeller(t, key, { name: 'Archive stall' });
    const intent = await createIntent(t, key, { amount: 10_000, splits: [{ seller: seller.id, amount: 4_000 }] });
    expectStatus(await act(t, key, intent.referenceNumber, 'simulate', {}), 200);
    // Its balance rows, moved to that month and settled (the day totals follow by trigger).
    await sql`UPDATE balance_transactions SET created_at = ${new Date(split.getTime() + DAY)},
      settled_by = coalesce(settled_by, 'po_archive_split') WHERE business_id = ${business.id}`.execute(db);

    const refused = await t.admin('POST', '/partitions/archive', {
      table: 'balance_transactions',
      month: month(split),
    });
    expectError(refused, 409, 'MONTH_NOT_ARCHIVABLE');
    assert.match(refused.body.error.message, /may still be refunded/);

    expectStatus(await act(t, key, intent.referenceNumber, 'refund', { amount: 10_000 }), 200);
    const archived = await t.admin('POST', '/partitions/archive', {
      table: 'balance_transactions',
      month: month(split),
    });
    expectStatus(archived, 200);
    const { rows } = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM list_counts WHERE list = 'balance'
        AND day >= ${split.toISOString().slice(0, 10)}::date AND day < ${monthStart(split, 1).toISOString().slice(0, 10)}::date`.execute(
      db,
    );
    assert.equal(rows[0]!.n, 0, "the balance list's counts of the archived month went with it");
  });

  // Only PostgreSQL has another session to hold the table while the archive waits for its lock.
  test.skipIf(testDatabaseKind !== 'postgres')(
    'a month whose table another transaction is reading: 503 PARTITION_BUSY, nothing kept, and it goes through once the reader ends',
    async () => {
      const busy = monthStart(now, -13);
      const reader = new pg.Client({ connectionString: t.testDatabase.url });
      await reader.connect();
      try {
        await reader.query('BEGIN');
        await reader.query('SELECT count(*) FROM ledger_postings');
        const refused = await t.admin('POST', '/partitions/archive', { table: 'ledger_postings', month: month(busy) });
        expectError(refused, 503, 'PARTITION_BUSY');
        const { rows } = await sql<{ n: number }>`
          SELECT count(*)::int AS n FROM archived_month_totals WHERE month = ${busy.toISOString().slice(0, 10)}::date`.execute(
          t.runtime.db,
        );
        assert.equal(rows[0]!.n, 0, 'a refused archive keeps no totals');
        await reader.query('ROLLBACK');
      } finally {
        await reader.end();
      }
      const again = await t.admin('POST', '/partitions/archive', { table: 'ledger_postings', month: month(busy) });
      expectStatus(again, 200);
      assert.deepEqual((await checkLedger(t.runtime.db)).problems, []);
    },
  );
});
