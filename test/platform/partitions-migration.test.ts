import assert from 'node:assert/strict';
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { migrate } from '../../src/db/migrate.js';
import { rowsInDefaultPartitions } from '../../src/db/partitions.js';
import type { DB } from '../../src/db/schema.js';
import { checkLedger } from '../../src/modules/payments/ledger.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { fingerprint, HISTORY } from '../support/partitions.js';

describe('migration 056: the growing tables become monthly partitions without losing a row', () => {
  let database: TestDatabase;
  let db: Kysely<DB>;
  beforeAll(async () => {
    database = await createTestDatabase({ unmigrated: true });
    db = database.database.db;
  });
  afterAll(() => database.drop());

  test('counts, sums and every column are the same after; ids and sequences go on; the ledger check passes', async () => {
    await migrate(database.database, { to: '055_shop_names' });
    await database.database.inScriptTransaction((run) => run(HISTORY.compile(db).sql));
    const before = await fingerprint(db);
    const { rows: lastPosting } = await sql<{ id: string }>`SELECT max(id)::text AS id FROM ledger_postings`.execute(
      db,
    );
    assert.equal(before.find((row) => row.name === 'ledger_postings')?.n, String(6 * 20 * 2 * 2));

    assert.deepEqual(await migrate(database.database, { to: '056_monthly_partitions' }), ['056_monthly_partitions']);
    assert.deepEqual(await fingerprint(db), before);
    // The later migrations backfill from these rows: 058 counts the events and deliveries (list
    // totals), 059 the balance day totals the ledger check compares with the rows.
    await migrate(database.database);
    assert.deepEqual((await checkLedger(db)).problems, []);
    const backfilled = async () =>
      (
        await sql<{ list: string; n: string }>`SELECT list, sum(n)::text AS n FROM list_counts
          WHERE list IN ('events', 'delivery events') AND business_id = 'biz_history' GROUP BY list ORDER BY list`.execute(
          db,
        )
      ).rows;
    assert.deepEqual(await backfilled(), [
      { list: 'delivery events', n: '20' },
      { list: 'events', n: '60' },
    ]);

    const { rows: kinds } = await sql<{ relname: string; relkind: string }>`
      SELECT relname, relkind FROM pg_class
      WHERE relname IN ('ledger_postings', 'balance_transactions', 'events', 'webhook_attempts')`.execute(db);
    assert.deepEqual(new Set(kinds.map((row) => row.relkind)), new Set(['p']));
    // Months from 14 ago to 2 ahead exist; the row 6 months ahead waits in the default partition.
    const { rows: months } = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM pg_inherits WHERE inhparent = 'ledger_postings'::regclass`.execute(db);
    assert.equal(months[0]!.n, 14 + 1 + 2 + 1);
    assert.deepEqual(await rowsInDefaultPartitions(db), [
      { table: 'ledger_postings', rows: 80 },
      { table: 'balance_transactions', rows: 10 },
      { table: 'events', rows: 10 },
      { table: 'webhook_attempts', rows: 0 },
    ]);

    // A new posting takes the next id; the triggers still refuse a change and count balance rows.
    await sql`
      INSERT INTO ledger_postings (transaction_id, account_id, amount, kind, reference, created_at)
      SELECT 'ltx_after' || side, id, CASE WHEN (kind = 'revenue') = (side = '') THEN 5 ELSE -5 END, 'credit', 'after', now()
      FROM ledger_accounts, unnest(ARRAY['', '_back']) AS side
      WHERE environment = 'test' AND kind IN ('revenue', 'tof')`.execute(db);
    const { rows: next } = await sql<{ id: string }>`
      SELECT min(id)::text AS id FROM ledger_postings WHERE transaction_id = 'ltx_after'`.execute(db);
    assert.equal(BigInt(next[0]!.id), BigInt(lastPosting[0]!.id) + 1n);
    await assert.rejects(sql`UPDATE ledger_postings SET amount = 1`.execute(db), /ledger postings are immutable/);
    await assert.rejects(sql`DELETE FROM ledger_postings_default`.execute(db), /ledger postings are immutable/);
    await sql`
      INSERT INTO balance_transactions (id, business_id, environment, type, amount, fee, net, source_reference,
        source_kind, ledger_transaction_id, created_at)
      VALUES ('btx_after', 'biz_history', 'test', 'payment', 5, 0, 5, 'pi_after', 'payment_intent', 'ltx_after', now())`.execute(
      db,
    );
    const { rows: counted } = await sql<{ n: string }>`
      SELECT sum(n)::text AS n FROM list_counts WHERE list = 'balance' AND business_id = 'biz_history'`.execute(db);
    assert.equal(counted[0]!.n, '61');
    await sql`INSERT INTO events (id, business_id, environment, event, subject, body, created_at, sequence)
      VALUES ('evt_after', 'biz_history', 'test', 'payment_intent.succeeded', 'pi_after', '{}', now(), 11)`.execute(db);
    const { rows: seq } = await sql<{ seq: string }>`SELECT seq::text FROM events WHERE id = 'evt_after'`.execute(db);
    assert.equal(seq[0]!.seq, String(6 * 10 + 1));
    assert.deepEqual(await backfilled(), [
      { list: 'delivery events', n: '20' },
      { list: 'events', n: '61' },
    ]);
    assert.deepEqual((await checkLedger(db)).problems, []);
  });
});
