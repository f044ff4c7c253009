import assert from 'node:assert/strict';
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { migrate } from '../../src/db/migrate.js';
import { rowsInDefaultPartitions } from '../../src/db/partitions.js';
import type { DB } from '../../src/db/schema.js';
import { checkLedger } from '../../src/modules/payments/ledger.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

/**
 * Rows of several months in the four tables migration 056 partitions, written into a database
 * at migration 055 (months before now, this month, and one six months ahead, which lands in a
 * default partition), with the webhook deliveries that point at the events.
 */
export const HISTORY = sql`
  INSERT INTO businesses (id, name) VALUES ('biz_history', 'History');
  INSERT INTO webhook_endpoints (id, business_id, environment, url, events, secret)
    VALUES ('we_history', 'biz_history', 'test', 'https://example.com/hook', ARRAY['payment_intent.succeeded'], 'whsec_x');
  CREATE TEMP TABLE history_months AS
    SELECT m, now() - make_interval(months => m) AS at FROM unnest(ARRAY[14, 5, 2, 1, 0, -6]) AS m;
  INSERT INTO ledger_postings (transaction_id, account_id, amount, kind, reference, created_at)
    SELECT 'ltx_' || m || '_' || i || side, a.id,
      CASE WHEN (a.kind = 'revenue') = (side = 'a') THEN i * 100 ELSE -i * 100 END, 'credit', 'history', at
    FROM history_months, generate_series(1, 20) AS i, unnest(ARRAY['a', 'b']) AS side,
      (SELECT id, kind FROM ledger_accounts WHERE environment = 'test' AND kind IN ('revenue', 'tof')) AS a;
  INSERT INTO balance_transactions (id, business_id, environment, type, amount, fee, net, source_reference, source_kind,
      ledger_transaction_id, created_at)
    SELECT 'btx_' || m || '_' || i, 'biz_history', 'test', 'payment', 1000 + i, 10, 990 + i, 'pi_' || m, 'payment_intent',
      'ltx_' || m || '_' || i || 'a', at
    FROM history_months, generate_series(1, 10) AS i;
  INSERT INTO events (id, business_id, environment, event, subject, body, created_at, sequence)
    SELECT 'evt_' || m || '_' || i, 'biz_history', 'test', 'payment_intent.succeeded', 'pi_' || m, '{}', at, i
    FROM history_months, generate_series(1, 10) AS i;
  INSERT INTO webhook_deliveries (id, event_id, endpoint_id, business_id, environment, event, status, next_attempt_at,
      created_at, updated_at)
    SELECT 'whd_' || m || '_' || i, 'evt_' || m || '_' || i, 'we_history', 'biz_history', 'test',
      'payment_intent.succeeded', 'SUCCEEDED', at, at, at
    FROM history_months, generate_series(1, 10) AS i WHERE m IN (5, 0);
  INSERT INTO webhook_attempts (delivery_id, attempt, started_at, status_code)
    SELECT id, 1, created_at, 200 FROM webhook_deliveries WHERE business_id = 'biz_history';`;

/** Count, sum and a digest of every column of each table, to compare before and after. */
export async function fingerprint(db: Kysely<DB>) {
  const { rows } = await sql<{ name: string; n: string; total: string; digest: string }>`
    SELECT 'ledger_postings' AS name, count(*)::text AS n, coalesce(sum(amount), 0)::text AS total,
      md5(coalesce(string_agg(t::text, '|' ORDER BY id), '')) AS digest FROM ledger_postings t
    UNION ALL SELECT 'balance_transactions', count(*)::text, coalesce(sum(net), 0)::text,
      md5(coalesce(string_agg(t::text, '|' ORDER BY id), '')) FROM balance_transactions t
    UNION ALL SELECT 'events', count(*)::text, coalesce(sum(seq), 0)::text,
      md5(coalesce(string_agg(t::text, '|' ORDER BY id), '')) FROM events t
    UNION ALL SELECT 'webhook_attempts', count(*)::text, coalesce(sum(status_code), 0)::text,
      md5(coalesce(string_agg(t::text, '|' ORDER BY delivery_id, attempt), '')) FROM webhook_attempts t
    UNION ALL SELECT 'list_counts', count(*)::text, coalesce(sum(n), 0)::text, '' FROM list_counts`.execute(db);
  return rows;
}

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
    const { rows: lastPosting } = await sql<{ id: string }>`SELECT max(id)::text AS id FROM ledger_postings`.execute(db);
    assert.equal(before.find((row) => row.name === 'ledger_postings')?.n, String(6 * 20 * 2 * 2));

    assert.deepEqual(await migrate(database.database), ['056_monthly_partitions']);
    assert.deepEqual(await fingerprint(db), before);
    assert.deepEqual((await checkLedger(db)).problems, []);

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
    assert.deepEqual((await checkLedger(db)).problems, []);
  });
});
