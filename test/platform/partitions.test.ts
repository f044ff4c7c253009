import assert from 'node:assert/strict';
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, test } from 'vitest';
import {
  createMonthsAhead,
  dropMonthsPastRetention,
  listMonthTables,
  monthStart,
  partitionName,
  partitionedTables,
  rowsInDefaultPartitions,
} from '../../src/db/partitions.js';
import type { DB } from '../../src/db/schema.js';
import { checkLedger } from '../../src/modules/payments/ledger.js';
import { periodicTasks } from '../../src/worker/worker.js';
import { act, createIntent } from '../intents/support.js';
import { expectStatus, startTestApp, type TestApp } from '../support/harness.js';
import { fingerprint } from '../support/partitions.js';

const DAY = 86_400_000;

/** A balanced pair of postings and an event dated `at` (a month that may not exist). */
async function writeAt(db: Kysely<DB>, at: Date, tag: string): Promise<void> {
  await sql`
    INSERT INTO ledger_postings (transaction_id, account_id, amount, kind, reference, created_at)
    SELECT ${`ltx_${tag}`}, id, CASE WHEN kind = 'revenue' THEN 7 ELSE -7 END, 'credit', 'partitions test', ${at}
    FROM ledger_accounts WHERE environment = 'test' AND kind IN ('revenue', 'funding')`.execute(db);
  await sql`UPDATE ledger_accounts SET balance = balance + CASE WHEN kind = 'revenue' THEN 7 ELSE -7 END
    WHERE environment = 'test' AND kind IN ('revenue', 'funding')`.execute(db);
  await sql`INSERT INTO events (id, business_id, environment, event, subject, body, created_at, sequence)
    SELECT ${`evt_${tag}`}, id, 'test', 'payment_intent.succeeded', ${`pi_${tag}`}, '{}', ${at}, 1
    FROM businesses LIMIT 1`.execute(db);
}

async function monthNames(db: Kysely<DB>, table: string): Promise<string[]> {
  return (await listMonthTables(db)).filter((month) => month.table === table && month.attached).map((m) => m.name);
}

describe('monthly partitions: months ahead, a default partition, retention by whole months', () => {
  let t: TestApp;
  let db: Kysely<DB>;
  beforeAll(async () => {
    t = await startTestApp();
    db = t.runtime.db;
    await t.createBusiness();
  });
  afterAll(() => t?.close());

  test('both tasks are leased periodic tasks of the worker', () => {
    const names = periodicTasks.map((task) => task.name);
    assert.ok(names.includes('partitions-ahead') && names.includes('partitions-retention'));
  });

  test('the ahead task makes this month and three more; a row beyond them waits in default, then moves', async () => {
    const now = new Date();
    const first = await createMonthsAhead(db, now);
    assert.deepEqual(first.putOff, []);
    for (const { table } of partitionedTables) {
      const names = await monthNames(db, table);
      for (let ahead = 0; ahead <= 3; ahead += 1)
        assert.ok(names.includes(partitionName(table, monthStart(now, ahead))));
    }
    assert.deepEqual((await createMonthsAhead(db, now)).done, [], 'a second run has nothing to do');

    const later = monthStart(now, 6);
    const at = new Date(later.getTime() + 3 * DAY);
    const before = await fingerprint(db);
    await writeAt(db, at, 'beyond');
    const waiting = await rowsInDefaultPartitions(db);
    assert.equal(waiting.find((row) => row.table === 'ledger_postings')?.rows, 2);
    assert.equal(waiting.find((row) => row.table === 'events')?.rows, 1);

    const moved = await createMonthsAhead(db, later);
    assert.ok(moved.done.includes(`ledger_postings ${later.toISOString().slice(0, 7)}`));
    assert.deepEqual(
      (await rowsInDefaultPartitions(db)).map((row) => row.rows),
      [0, 0, 0, 0],
    );
    const { rows } = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM ${sql.id(partitionName('ledger_postings', later))}`.execute(db);
    assert.equal(rows[0]!.n, 2);
    const after = await fingerprint(db);
    assert.equal(
      Number(after.find((row) => row.name === 'ledger_postings')!.n),
      Number(before.find((row) => row.name === 'ledger_postings')!.n) + 2,
    );
    // The moved rows are still immutable in their month, and the ledger balances.
    await assert.rejects(
      sql`DELETE FROM ledger_postings WHERE transaction_id = 'ltx_beyond'`.execute(db),
      /ledger postings are immutable/,
    );
    assert.deepEqual((await checkLedger(db)).problems, []);
  });

  test('a payment with no partition for its month lands in default and is never refused', async () => {
    const now = new Date();
    // This month's partitions, gone (they are empty in a new database but for this file's rows).
    for (const { table } of partitionedTables) {
      const name = partitionName(table, monthStart(now));
      await sql`CREATE TABLE ${sql.id(`${name}_aside`)} AS SELECT * FROM ${sql.id(name)}`.execute(db);
      await sql`ALTER TABLE ${sql.id(table)} DETACH PARTITION ${sql.id(name)}`.execute(db);
      await sql`DROP TABLE ${sql.id(name)}`.execute(db);
    }
    const business = await t.createBusiness();
    const intent = await createIntent(t, business.keys.secretTest, { amount: 700 });
    expectStatus(await act(t, business.keys.secretTest, intent.referenceNumber, 'simulate'), 200);
    const waiting = await rowsInDefaultPartitions(db);
    assert.ok(waiting.find((row) => row.table === 'ledger_postings')!.rows > 0);
    assert.ok(waiting.find((row) => row.table === 'balance_transactions')!.rows > 0);
    assert.ok(waiting.find((row) => row.table === 'events')!.rows > 0);

    const run = await createMonthsAhead(db, now);
    assert.equal(run.done.length, 4);
    assert.deepEqual(
      (await rowsInDefaultPartitions(db)).map((row) => row.rows),
      [0, 0, 0, 0],
    );
    for (const { table } of partitionedTables) {
      const name = partitionName(table, monthStart(now));
      await sql`INSERT INTO ${sql.id(table)} SELECT * FROM ${sql.id(`${name}_aside`)}`.execute(db).catch(async () => {
        // ledger_postings and events have an identity column: their rows keep their own values.
        await sql`INSERT INTO ${sql.id(table)} OVERRIDING SYSTEM VALUE SELECT * FROM ${sql.id(`${name}_aside`)}`.execute(
          db,
        );
      });
      await sql`DROP TABLE ${sql.id(`${name}_aside`)}`.execute(db);
    }
    assert.deepEqual((await checkLedger(db)).problems, []);
  });

  test('retention drops whole old months of events and attempts, keeps recent ones and events with deliveries', async () => {
    const now = new Date();
    // Months made four and six months back: one with a delivery pointing at its event.
    const old = monthStart(now, -6);
    const older = monthStart(now, -4);
    await createMonthsAhead(db, old);
    await createMonthsAhead(db, older);
    await writeAt(db, new Date(old.getTime() + DAY), 'old');
    await writeAt(db, new Date(older.getTime() + DAY), 'older');
    const endpoint = `we_retention`;
    const business = (await sql<{ id: string }>`SELECT id FROM businesses LIMIT 1`.execute(db)).rows[0]!.id;
    await sql`INSERT INTO webhook_endpoints (id, business_id, environment, url, events, secret)
      VALUES (${endpoint}, ${business}, 'test', 'https://example.com/h', ARRAY['payment_intent.succeeded'], 'whsec_r')`.execute(
      db,
    );
    await sql`INSERT INTO webhook_deliveries (id, event_id, endpoint_id, business_id, environment, event, status,
        next_attempt_at, created_at, updated_at)
      VALUES ('whd_older', 'evt_older', ${endpoint}, ${business}, 'test', 'payment_intent.succeeded', 'SUCCEEDED',
        now(), now(), now())`.execute(db);
    // Its attempt is older than the attempts' 30 days: that month goes first, so the delivery can go after.
    await sql`INSERT INTO webhook_attempts (delivery_id, attempt, started_at, status_code)
      VALUES ('whd_older', 1, ${new Date(older.getTime() + DAY)}, 200)`.execute(db);

    const days = { eventDays: 90, webhookAttemptDays: 30 };
    const run = await dropMonthsPastRetention(db, days, now);
    const oldText = old.toISOString().slice(0, 7);
    const olderText = older.toISOString().slice(0, 7);
    assert.ok(run.done.includes(`events ${oldText}`));
    assert.ok(run.done.includes(`webhook_attempts ${oldText}`) && run.done.includes(`webhook_attempts ${olderText}`));
    assert.deepEqual(run.kept, [`events ${olderText}: webhook deliveries point at its events`]);
    const events = await monthNames(db, 'events');
    assert.ok(!events.includes(partitionName('events', old)) && events.includes(partitionName('events', older)));
    assert.ok(events.includes(partitionName('events', monthStart(now, -1))), 'last month is kept');
    // Money months are never dropped.
    assert.ok((await monthNames(db, 'ledger_postings')).includes(partitionName('ledger_postings', old)));

    // Once its deliveries are gone, the month goes; a run after has nothing to do.
    await sql`DELETE FROM webhook_deliveries WHERE id = 'whd_older'`.execute(db);
    assert.deepEqual((await dropMonthsPastRetention(db, days, now)).done, [`events ${olderText}`]);
    assert.deepEqual(await dropMonthsPastRetention(db, days, now), { done: [], putOff: [], kept: [] });
    assert.deepEqual((await checkLedger(db)).problems, []);
  });
});
