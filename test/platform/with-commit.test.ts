/**
 * A statement marked `withCommit` (src/db/with-commit.ts) is sent with its transaction's COMMIT,
 * its parameters written in as literals: the text comes back exactly, a failure rolls the whole
 * transaction back, a rollback drops it, and the connection is clean for the next transaction.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { withCommit } from '../../src/db/with-commit.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

describe('statements sent with COMMIT', () => {
  let testDatabase: TestDatabase;
  before(async () => {
    testDatabase = await createTestDatabase();
    await sql`CREATE TABLE with_commit_notes (id int PRIMARY KEY, note text NOT NULL)`.execute(
      testDatabase.database.db,
    );
    await sql`INSERT INTO with_commit_notes VALUES (1, 'one'), (2, 'two')`.execute(testDatabase.database.db);
  });
  after(() => testDatabase?.drop());

  const notes = async () =>
    (
      await sql<{ id: number; note: string }>`SELECT id, note FROM with_commit_notes ORDER BY id`.execute(
        testDatabase.database.db,
      )
    ).rows;

  test('the held write commits with the transaction, its text exactly as given', async () => {
    const text = `it's a \\ backslash, a "quote", $1 and 'é' — مرحبا`;
    await testDatabase.database.db.transaction().execute(async (trx) => {
      await sql`UPDATE with_commit_notes SET note = 'changed first' WHERE id = 2`.execute(trx);
      await withCommit(sql`UPDATE with_commit_notes SET note = ${text}::text WHERE id = ${1}::int`).execute(trx);
      // Held, not run: the transaction does not see it yet.
      const seen = await sql<{ note: string }>`SELECT note FROM with_commit_notes WHERE id = 1`.execute(trx);
      assert.equal(seen.rows[0]!.note, 'one');
    });
    assert.deepEqual(await notes(), [
      { id: 1, note: text },
      { id: 2, note: 'changed first' },
    ]);
  });

  test('a held write that fails fails the COMMIT, and the whole transaction rolls back', async () => {
    const before = await notes();
    await assert.rejects(
      testDatabase.database.db.transaction().execute(async (trx) => {
        await sql`UPDATE with_commit_notes SET note = 'lost' WHERE id = 2`.execute(trx);
        await withCommit(sql`UPDATE with_commit_notes SET note = ${null} WHERE id = ${1}::int`).execute(trx);
      }),
      /null value/,
    );
    assert.deepEqual(await notes(), before);
  });

  test('a transaction that rolls back drops its held write; the next one starts clean', async () => {
    const before = await notes();
    await assert.rejects(
      testDatabase.database.db.transaction().execute(async (trx) => {
        await withCommit(sql`UPDATE with_commit_notes SET note = ${'dropped'}::text WHERE id = ${2}::int`).execute(trx);
        throw new Error('handler failed');
      }),
      /handler failed/,
    );
    await testDatabase.database.db.transaction().execute(async (trx) => {
      await sql`UPDATE with_commit_notes SET note = 'next' WHERE id = 1`.execute(trx);
    });
    assert.deepEqual(await notes(), [
      { id: 1, note: 'next' },
      { id: 2, note: before[1]!.note },
    ]);
  });

  test('only integers, text and null can be written in', async () => {
    await assert.rejects(
      testDatabase.database.db.transaction().execute(async (trx) => {
        await withCommit(sql`UPDATE with_commit_notes SET note = 'x' WHERE id = ${1.5}`).execute(trx);
      }),
      /takes only integers, text and null/,
    );
  });
});
