/**
 * A statement marked `withCommit` (src/db/with-commit.ts) is sent with its transaction's COMMIT,
 * its parameters written in as literals: the text comes back exactly, a failure rolls the whole
 * transaction back, a rollback drops it; outside a transaction or beside a savepoint it refuses.
 * A transaction's BEGIN is held until its first statement, and goes with it when that statement
 * is marked `withBegin` (src/db/with-begin.ts): the statement still runs inside the transaction.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql, type Transaction } from 'kysely';
import pg from 'pg';
import { openDatabase } from '../../src/db/connect.js';
import type { DB } from '../../src/db/schema.js';
import { HeldBegin, withBegin } from '../../src/db/with-begin.js';
import { CommitTail, executeWithCommit } from '../../src/db/with-commit.js';
import { createTestDatabase, testDatabaseKind, type TestDatabase } from '../support/database.js';

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
      await executeWithCommit(trx, sql`UPDATE with_commit_notes SET note = ${text}::text WHERE id = ${1}::int`);
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
        await executeWithCommit(trx, sql`UPDATE with_commit_notes SET note = ${null} WHERE id = ${1}::int`);
      }),
      /null value/,
    );
    assert.deepEqual(await notes(), before);
  });

  test('a transaction that rolls back drops its held write; the next one starts clean', async () => {
    const before = await notes();
    await assert.rejects(
      testDatabase.database.db.transaction().execute(async (trx) => {
        await executeWithCommit(trx, sql`UPDATE with_commit_notes SET note = ${'dropped'}::text WHERE id = ${2}::int`);
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

  test('a first statement carrying the BEGIN runs inside the transaction: its answer comes back, a rollback undoes it', async () => {
    const before = await notes();
    const text = `it's the first, \\ and 'quoted'`;
    await assert.rejects(
      testDatabase.database.db.transaction().execute(async (trx) => {
        const inserted = await withBegin(
          sql<{
            id: number;
            note: string;
          }>`INSERT INTO with_commit_notes VALUES (${3}::int, ${text}::text) RETURNING id, note`,
        ).execute(trx);
        assert.deepEqual(inserted.rows, [{ id: 3, note: text }]);
        throw new Error('handler failed');
      }),
      /handler failed/,
    );
    assert.deepEqual(await notes(), before);
    await testDatabase.database.db.transaction().execute(async (trx) => {
      await withBegin(sql`INSERT INTO with_commit_notes VALUES (${3}::int, ${text}::text)`).execute(trx);
      await executeWithCommit(trx, sql`UPDATE with_commit_notes SET note = ${'third'}::text WHERE id = ${3}::int`);
    });
    assert.deepEqual((await notes()).at(-1), { id: 3, note: 'third' });
    // Outside a transaction the mark is only a comment.
    const read = await withBegin(
      sql<{ note: string }>`SELECT note FROM with_commit_notes WHERE id = ${3}::int`,
    ).execute(testDatabase.database.db);
    assert.deepEqual(read.rows, [{ note: 'third' }]);
    await sql`DELETE FROM with_commit_notes WHERE id = 3`.execute(testDatabase.database.db);
  });

  test('a first statement that fails with its BEGIN rolls back, and the connection serves the next transaction', async () => {
    await assert.rejects(
      testDatabase.database.db.transaction().execute(async (trx) => {
        await withBegin(sql`INSERT INTO with_commit_notes VALUES (${1}::int, ${'duplicate'}::text)`).execute(trx);
      }),
      /duplicate key/,
    );
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        testDatabase.database.db.transaction().execute(async (trx) => {
          const row = await withBegin(sql<{ n: number }>`SELECT ${i}::int AS n`).execute(trx);
          return row.rows[0]!.n;
        }),
      ),
    );
    assert.deepEqual(
      results,
      Array.from({ length: 12 }, (_, i) => i),
    );
  });

  test(
    'on the wire: the BEGIN goes in one message with a marked first statement, before any other, and a failed BEGIN stops what follows',
    { skip: testDatabaseKind === 'postgres' ? false : 'PostgreSQL only: PGlite has no messages to save' },
    async () => {
      // Every query the pg client sends, as text: the driver wraps the client's own `query`.
      const sent: string[] = [];
      const original = pg.Client.prototype.query;
      pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
        const [first] = args;
        sent.push(typeof first === 'string' ? first : ((first as { text?: string }).text ?? ''));
        return (original as (...a: unknown[]) => unknown).apply(this, args);
      } as typeof original;
      const database = await openDatabase({ kind: 'postgres', url: testDatabase.url!, poolSize: 1 });
      try {
        const first = await database.db.transaction().execute(async (trx) => {
          const row = await withBegin(sql<{ n: number }>`SELECT ${7}::int AS n`).execute(trx);
          await sql`SELECT ${8}::int AS n`.execute(trx);
          return row.rows[0]!.n;
        });
        assert.equal(first, 7);
        assert.deepEqual(sent.splice(0), ["begin;\nSELECT '7'::int AS n", 'SELECT $1::int AS n', 'commit']);

        await database.db.transaction().execute(async (trx) => {
          await sql`SELECT ${9}::int AS n`.execute(trx);
        });
        assert.deepEqual(sent.splice(0), ['begin', 'SELECT $1::int AS n', 'commit']);

        // A transaction that runs nothing sends nothing.
        await database.db.transaction().execute(async () => {});
        assert.deepEqual(sent.splice(0), []);

        // A BEGIN the server refuses: the statement behind it is not sent, and fails with its error.
        await database.db.connection().execute(async (connection) => {
          await sql.raw('begin isolation level bogus').execute(connection);
          await assert.rejects(
            sql`INSERT INTO with_commit_notes VALUES (${9}::int, ${'autocommitted'}::text)`.execute(connection),
            /syntax error/,
          );
          await sql.raw('rollback').execute(connection);
        });
        assert.equal(sent.filter((text) => text.startsWith('INSERT')).length, 0);
        assert.equal((await notes()).filter((note) => note.id === 9).length, 0);
      } finally {
        pg.Client.prototype.query = original;
        await database.close();
      }
    },
  );

  test('only integers, text and null can be written in', async () => {
    await assert.rejects(
      testDatabase.database.db.transaction().execute(async (trx) => {
        await executeWithCommit(trx, sql`UPDATE with_commit_notes SET note = ${'x'} WHERE id = ${1.5}`);
      }),
      /takes only integers, text and null/,
    );
  });

  test('outside a transaction it refuses, before anything is held', async () => {
    await assert.rejects(
      executeWithCommit(
        // A Kysely that is not a transaction, as a caller without types would pass it.
        testDatabase.database.db as unknown as Transaction<DB>,
        sql`UPDATE with_commit_notes SET note = ${'x'}`,
      ),
      /needs a transaction/,
    );
  });
});

describe('what a connection holds for its COMMIT', () => {
  const statement = (text: string) => `/* with commit */ ${text}`;

  test('held only inside a transaction; sent with its COMMIT, integers quoted, then forgotten', () => {
    const tail = new CommitTail();
    assert.throws(() => tail.hold(statement('UPDATE t SET n = $1'), [1]), /outside a transaction/);
    assert.equal(tail.outgoing('begin'), undefined);
    tail.hold(statement('UPDATE t SET n = n-$1 WHERE id = $2'), [-5, 7]);
    assert.equal(tail.outgoing('commit'), "UPDATE t SET n = n-'-5' WHERE id = '7';\ncommit");
    assert.equal(tail.outgoing('commit'), undefined);
    assert.throws(() => tail.hold(statement('UPDATE t SET n = $1'), [1]), /outside a transaction/);
  });

  test('a driver that runs held statements itself takes them, text and parameters, once', () => {
    const tail = new CommitTail();
    tail.outgoing('BEGIN');
    tail.hold(statement('UPDATE t SET n = $1 WHERE id = $2'), [3, 'a']);
    assert.deepEqual(tail.takeForCommit(), [
      { text: 'UPDATE t SET n = $1 WHERE id = $2', values: [3, 'a'], inlined: "UPDATE t SET n = '3' WHERE id = E'a'" },
    ]);
    assert.deepEqual(tail.takeForCommit(), []);
    assert.throws(() => tail.hold(statement('UPDATE t SET n = $1'), [1]), /outside a transaction/);
  });

  test('a rollback drops it; a transaction with an isolation level opens like BEGIN', () => {
    const tail = new CommitTail();
    tail.outgoing('start transaction isolation level serializable');
    tail.hold(statement('UPDATE t SET n = $1'), [1]);
    assert.equal(tail.outgoing('rollback'), undefined);
    tail.outgoing('BEGIN');
    assert.equal(tail.outgoing('COMMIT'), undefined);
  });

  test('a savepoint while a statement is held is refused; text with quotes of its own too', () => {
    const tail = new CommitTail();
    tail.outgoing('begin');
    assert.throws(() => tail.hold(statement("UPDATE t SET s = 'done'"), []), /pass its text as parameters/);
    tail.hold(statement('UPDATE t SET n = $1'), [1]);
    assert.throws(() => tail.outgoing('savepoint a'), /savepoint/);
    assert.throws(() => tail.outgoing('rollback to savepoint a'), /savepoint/);
    assert.equal(tail.outgoing('SELECT 1'), undefined);
  });
});

describe('what a connection holds for its first statement', () => {
  const marked = (text: string) => `/* with begin */ ${text}`;

  test('the BEGIN is held, then sent with a marked first statement, its parameters written in', () => {
    const head = new HeldBegin();
    assert.deepEqual(head.opening('begin', [], undefined), { kind: 'held' });
    assert.deepEqual(head.opening(marked('SELECT f($1, $2)'), ["it's", 24], undefined), {
      kind: 'together',
      text: "begin;\nSELECT f(E'it''s', '24')",
    });
    // Once sent, nothing is held: later statements go as they are.
    assert.deepEqual(head.opening(marked('SELECT f($1)'), [1], undefined), { kind: 'as-is' });
    assert.deepEqual(head.opening('commit', [], undefined), { kind: 'as-is' });
  });

  test('an unmarked first statement (or one in another form) is preceded by the BEGIN on its own', () => {
    const head = new HeldBegin();
    // So is a marked one whose values cannot be written in: it runs as it would have unmarked.
    head.opening('begin', [], undefined);
    assert.deepEqual(head.opening(marked('SELECT $1'), [new Date(0)], undefined), {
      kind: 'begin-first',
      begin: 'begin',
    });
    head.opening('begin', [], undefined);
    assert.deepEqual(head.opening(marked('SELECT 1; SELECT $1'), [1], undefined), {
      kind: 'begin-first',
      begin: 'begin',
    });
    head.opening('start transaction isolation level serializable', [], undefined);
    assert.deepEqual(head.opening('SELECT $1', [1], undefined), {
      kind: 'begin-first',
      begin: 'start transaction isolation level serializable',
    });
    head.opening('BEGIN', [], undefined);
    assert.deepEqual(head.flush(), { kind: 'begin-first', begin: 'BEGIN' });
    assert.deepEqual(head.flush(), { kind: 'as-is' });
  });

  test('a transaction that ran nothing sends nothing; one with only a held write sends it all at once', () => {
    const head = new HeldBegin();
    head.opening('begin', [], undefined);
    assert.deepEqual(head.opening('rollback', [], undefined), { kind: 'nothing' });
    head.opening('begin', [], undefined);
    assert.deepEqual(head.opening('commit', [], undefined), { kind: 'nothing' });
    head.opening('begin', [], undefined);
    assert.deepEqual(head.opening('commit', [], "UPDATE t SET n = '1';\ncommit"), {
      kind: 'together',
      text: "begin;\nUPDATE t SET n = '1';\ncommit",
    });
    head.opening('begin', [], undefined);
    assert.deepEqual(head.opening('savepoint a', [], undefined), { kind: 'begin-first', begin: 'begin' });
  });
});
