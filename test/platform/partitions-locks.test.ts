import assert from 'node:assert/strict';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { dropMonthsPastRetention, ensureMonthlyPartitions, monthStart } from '../../src/db/partitions.js';
import type { Database } from '../../src/db/connect.js';
import { createTestDatabase, testDatabaseKind, type TestDatabase } from '../support/database.js';
import { patience } from '../support/patience.js';

/**
 * The partition tasks' DDL never holds up a payment more than 100 ms (issue 55, faults): each
 * waits at most its lock timeout (PARTITION_LOCK_TIMEOUT_MS), then gives up until its next run. Only
 * PostgreSQL has concurrent sessions to show it; PGlite runs one statement at a time. The bound
 * asserted is the mechanism's (a wait ends with the task's lock timeout, not with the holder's
 * transaction, which ends only after the task), loose enough for a busy machine; the figures are
 * annotated here and measured under load by `npm run bench -- growth`.
 */
const INSERT_WAIT_BOUND_MS = patience(500);
describe.skipIf(testDatabaseKind !== 'postgres')('partition tasks beside open payment transactions', () => {
  let testDatabase: TestDatabase;
  let database: Database;
  const clients: pg.Client[] = [];
  const now = new Date();

  async function client(): Promise<pg.Client> {
    const opened = new pg.Client({ connectionString: testDatabase.url });
    await opened.connect();
    clients.push(opened);
    return opened;
  }
  async function timed(work: Promise<unknown>): Promise<number> {
    const started = performance.now();
    await work;
    return performance.now() - started;
  }
  const postingAt = (at: Date, tag: string) => ({
    text: `INSERT INTO ledger_postings (transaction_id, account_id, amount, kind, reference, created_at)
      SELECT $1, id, CASE WHEN kind = 'revenue' THEN 1 ELSE -1 END, 'credit', 'lock test', $2
      FROM ledger_accounts WHERE environment = 'test' AND kind IN ('revenue', 'funding')`,
    values: [`ltx_${tag}`, at],
  });
  const eventAt = (at: Date, id: string) => ({
    text: `INSERT INTO events (id, business_id, environment, event, subject, body, created_at, sequence)
      VALUES ($1, 'biz_locks', 'test', 'payment_intent.succeeded', 'pi_locks', '{}', $2, 1)`,
    values: [id, at],
  });

  beforeAll(async () => {
    testDatabase = await createTestDatabase();
    database = testDatabase.database;
    await sql`INSERT INTO businesses (id, name) VALUES ('biz_locks', 'Locks')`.execute(database.db);
  });
  afterAll(async () => {
    for (const opened of clients) await opened.end().catch(() => undefined);
    await testDatabase?.drop();
  });

  test('making a month while a transaction holds the default partition: it gives up, inserts wait only its lock timeout', async (context) => {
    const holder = await client();
    const payer = await client();
    await holder.query('BEGIN');
    // A row no month holds yet, uncommitted: its transaction holds the default partition.
    await holder.query(postingAt(monthStart(now, 10), 'held'));
    const target = monthStart(now, 8);
    const started = performance.now();
    const task = ensureMonthlyPartitions(database.db, target, target);
    // Payments meanwhile: one into this month, one into the default partition the task waits for.
    await new Promise((resolve) => setTimeout(resolve, 10));
    const paymentMs = await timed(payer.query(postingAt(new Date(), 'now')));
    const lateMs = await timed(payer.query(postingAt(monthStart(now, 11), 'late')));
    const outcomes = await task;
    const taskMs = performance.now() - started;
    await holder.query('ROLLBACK');
    context.annotate(
      `lock test (ahead): task ${taskMs.toFixed(0)} ms, payment ${paymentMs.toFixed(1)} ms, payment into default ${lateMs.toFixed(1)} ms`,
    );
    assert.equal(outcomes.find((outcome) => outcome.table === 'ledger_postings')?.outcome, 'lock timeout');
    assert.equal(outcomes.find((outcome) => outcome.table === 'events')?.outcome, 'created');
    assert.ok(paymentMs < INSERT_WAIT_BOUND_MS, `a payment waited ${paymentMs} ms`);
    assert.ok(lateMs < INSERT_WAIT_BOUND_MS, `a payment into the default partition waited ${lateMs} ms`);

    // The next run, the transaction gone, makes the month.
    const again = await ensureMonthlyPartitions(database.db, target, target);
    assert.equal(again.find((outcome) => outcome.table === 'ledger_postings')?.outcome, 'created');
  });

  test('dropping an old events month while an event insert is uncommitted: it gives up, inserts wait only its lock timeout', async (context) => {
    const old = monthStart(now, -6);
    await ensureMonthlyPartitions(database.db, old, old);
    const holder = await client();
    const writer = await client();
    await holder.query('BEGIN');
    await holder.query(eventAt(new Date(), 'evt_held'));
    const days = { eventDays: 90, webhookAttemptDays: 30 };
    const started = performance.now();
    const task = dropMonthsPastRetention(database.db, days, now);
    await new Promise((resolve) => setTimeout(resolve, 10));
    const eventMs = await timed(writer.query(eventAt(new Date(), 'evt_meanwhile')));
    const summary = await task;
    const taskMs = performance.now() - started;
    await holder.query('ROLLBACK');
    context.annotate(`lock test (retention): task ${taskMs.toFixed(0)} ms, event insert ${eventMs.toFixed(1)} ms`);
    assert.ok(summary.putOff.includes(`events ${old.toISOString().slice(0, 7)}`), JSON.stringify(summary));
    assert.ok(eventMs < INSERT_WAIT_BOUND_MS, `an event insert waited ${eventMs} ms`);
    assert.ok(taskMs < patience(3000), `the task took ${taskMs} ms`);

    const again = await dropMonthsPastRetention(database.db, days, now);
    assert.ok(again.done.includes(`events ${old.toISOString().slice(0, 7)}`), JSON.stringify(again));
  });
});
