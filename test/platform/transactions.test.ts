/**
 * Both drivers (src/db/postgres-dialect.ts, src/db/pglite-dialect.ts) open transactions with the
 * settings a caller gives and support savepoints, so a nested step can be undone alone.
 */
import assert from 'node:assert/strict';
import { afterAll, beforeAll, test } from 'vitest';
import { sql } from 'kysely';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

let testDatabase: TestDatabase;
beforeAll(async () => {
  testDatabase = await createTestDatabase();
});
afterAll(() => testDatabase?.drop());

test('a transaction opens with the isolation level asked for', async () => {
  const { db } = testDatabase.database;
  const level = await db
    .transaction()
    .setIsolationLevel('serializable')
    .execute(
      async (trx) =>
        (await sql<{ level: string }>`SELECT current_setting('transaction_isolation') AS level`.execute(trx)).rows[0]!
          .level,
    );
  assert.equal(level, 'serializable');
});

test('a savepoint undoes its own step and keeps the rest of the transaction', async () => {
  const { db } = testDatabase.database;
  const names = ['savepoint-kept', 'savepoint-undone', 'savepoint-released'];
  const trx = await db.startTransaction().execute();
  await trx.insertInto('periodic_tasks').values({ name: names[0]! }).execute();
  const undone = await trx.savepoint('before_second').execute();
  await undone.insertInto('periodic_tasks').values({ name: names[1]! }).execute();
  await undone.rollbackToSavepoint('before_second').execute();
  const released = await trx.savepoint('before_third').execute();
  await released.insertInto('periodic_tasks').values({ name: names[2]! }).execute();
  await released.releaseSavepoint('before_third').execute();
  await trx.commit().execute();
  const rows = await db
    .selectFrom('periodic_tasks')
    .select('name')
    .where('name', 'in', names)
    .orderBy('name')
    .execute();
  assert.deepEqual(
    rows.map((row) => row.name),
    ['savepoint-kept', 'savepoint-released'],
  );
});
