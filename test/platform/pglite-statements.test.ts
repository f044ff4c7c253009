/**
 * Parameterized statements run as named prepared statements, one per text, unless turned off
 * (`namedStatements`, DB_PREPARED_STATEMENTS: a pooler in transaction mode). On PGlite they are
 * statements of the session (src/db/pglite-dialect.ts, `queryNamed`): the same rows and types as
 * PGlite's own `query`, and errors that name their statement and leave the session usable. On
 * PostgreSQL the driver names them for `pg` (src/db/postgres-dialect.ts), per connection.
 */
import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import type { PGlite } from '@electric-sql/pglite';
import { sql } from 'kysely';
import { openDatabase } from '../../src/db/connect.js';
import { queryNamed } from '../../src/db/pglite-dialect.js';
import { createTestDatabase, testDatabaseKind, type TestDatabase } from '../support/database.js';

const skip = testDatabaseKind === 'pglite' ? false : 'PGlite only';

describe.skipIf(skip)('named statements on PGlite', () => {
  let testDatabase: TestDatabase;
  let pglite: PGlite;
  beforeAll(async () => {
    testDatabase = await createTestDatabase();
    pglite = testDatabase.database.pglite!;
  });
  afterAll(() => testDatabase?.drop());

  async function preparedCount(text: string): Promise<number> {
    const { rows } = await pglite.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM pg_prepared_statements WHERE statement = $1',
      [text],
    );
    return rows[0]!.n;
  }

  test('rows and types as PGlite query gives them; one prepared statement per text', async () => {
    const text =
      'SELECT $1::int8 AS big, $2::jsonb AS doc, $3::timestamptz AS at, $4::text[] AS tags, $5::text AS nothing';
    const values = [4_000_000_000, { items: [1, 'deux'] }, new Date('2026-11-26T10:00:00Z'), ['a', "b'c"], null];
    const named = await queryNamed(pglite, text, values);
    const plain = await pglite.query(text, values);
    assert.deepEqual(named.rows, plain.rows);
    assert.deepEqual(named.rows[0], {
      big: 4_000_000_000,
      doc: { items: [1, 'deux'] },
      at: new Date('2026-11-26T10:00:00Z'),
      tags: ['a', "b'c"],
      nothing: null,
    });
    await queryNamed(pglite, text, values);
    assert.equal(await preparedCount(text), 1);

    // Kysely's statements go the same way, and report the rows they changed.
    const { db } = testDatabase.database;
    const selected = await sql<{ one: number }>`SELECT ${1}::int AS one`.execute(db);
    assert.deepEqual(selected.rows, [{ one: 1 }]);
    assert.equal(await preparedCount('SELECT $1::int AS one'), 1);
    const updated = await sql`UPDATE periodic_tasks SET last_error = ${'x'} WHERE name = ${'no such task'}`.execute(db);
    assert.equal(updated.numAffectedRows, 0n);
  });

  test('a failed statement names its text, and the session goes on', async () => {
    const text = 'SELECT 10 / $1::int AS quotient';
    await assert.rejects(queryNamed(pglite, text, [0]), (error: Error & { code?: string; query?: string }) => {
      assert.equal(error.code, '22012');
      assert.equal(error.query, text);
      return true;
    });
    assert.deepEqual((await queryNamed(pglite, text, [5])).rows, [{ quotient: 2 }]);

    // A text PostgreSQL cannot parse is not kept as a statement.
    const broken = 'SELEC $1::int';
    await assert.rejects(queryNamed(pglite, broken, [1]), (error: Error & { code?: string; query?: string }) => {
      assert.equal(error.code, '42601');
      assert.equal(error.query, broken);
      return true;
    });
    assert.equal(await preparedCount(broken), 0);
    assert.deepEqual((await queryNamed(pglite, 'SELECT $1::text AS ok', ['yes'])).rows, [{ ok: 'yes' }]);
  });

  test('turned off, statements go unnamed, with the same rows', async () => {
    // The same session, through a database opened without names (left open: the test's own closes it).
    const unnamed = await openDatabase({ kind: 'pglite', instance: pglite, namedStatements: false });
    const text = 'SELECT $1::int + 1 AS next';
    const { rows } = await sql<{ next: number }>`SELECT ${41}::int + 1 AS next`.execute(unnamed.db);
    assert.deepEqual(rows, [{ next: 42 }]);
    assert.deepEqual(await unnamed.query({ name: 'unnamed_next', text }, [1]), [{ next: 2 }]);
    assert.equal(await preparedCount(text), 0);
  });
});

describe.skipIf(testDatabaseKind === 'postgres' ? false : 'PostgreSQL only')('named statements on PostgreSQL', () => {
  let testDatabase: TestDatabase;
  beforeAll(async () => {
    testDatabase = await createTestDatabase();
  });
  afterAll(() => testDatabase?.drop());

  /** Runs a parameterized statement, then counts the prepared statements of its text on the same connection. */
  async function preparedOnConnection(namedStatements: boolean): Promise<number> {
    const database = await openDatabase({ kind: 'postgres', url: testDatabase.url!, poolSize: 1, namedStatements });
    try {
      return await database.db.transaction().execute(async (trx) => {
        const { rows } = await sql<{ one: number }>`SELECT ${1}::int AS one`.execute(trx);
        assert.deepEqual(rows, [{ one: 1 }]);
        const counted = await sql<{ n: number }>`
          SELECT count(*)::int AS n FROM pg_prepared_statements WHERE statement = 'SELECT $1::int AS one'`.execute(trx);
        return counted.rows[0]!.n;
      });
    } finally {
      await database.close();
    }
  }

  test('each text prepared once per connection; none when turned off', async () => {
    assert.equal(await preparedOnConnection(true), 1);
    assert.equal(await preparedOnConnection(false), 0);
  });
});
