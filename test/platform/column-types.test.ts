/**
 * int8 columns (centimes, counts) read through the app's database come back as numbers while
 * they are exact, and as bigint beyond, on both databases.
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

test('int8: exact numbers up to 2^53 - 1 either way, bigint past it', async () => {
  const texts = [
    '0',
    '-1',
    '999999999999999',
    '-99999999999999',
    '1000000000000000',
    '9007199254740991',
    '-9007199254740991',
    '9007199254740993',
    '-9223372036854775808',
  ];
  const { rows } = await sql<{ value: number | bigint }>`
    SELECT v::int8 AS value FROM unnest(${texts}::text[]) WITH ORDINALITY AS t(v, n) ORDER BY n`.execute(
    testDatabase.database.db,
  );
  assert.deepEqual(
    rows.map((row) => row.value),
    [
      0,
      -1,
      999_999_999_999_999,
      -99_999_999_999_999,
      1_000_000_000_000_000,
      Number.MAX_SAFE_INTEGER,
      -Number.MAX_SAFE_INTEGER,
      9_007_199_254_740_993n,
      -9_223_372_036_854_775_808n,
    ],
  );
});
