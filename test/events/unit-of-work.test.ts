import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { unitOfWork } from '../../src/modules/events/unit-of-work.js';
import { checkLedger, transfer } from '../../src/modules/payments/ledger.js';
import { startTestApp, type TestApp } from '../support/harness.js';

/** Issue 49 item 3: the unit names every CTE of its statement, so its parts never clash. */
describe('a unit of work', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t?.close());

  const funding = (reference: string, amount: number) =>
    transfer({
      environment: 'test',
      kind: 'credit',
      reference,
      lines: [
        { account: { kind: 'revenue' }, amount },
        { account: { kind: 'funding' }, amount: -amount },
      ],
    });

  test('two ledger transfers in one statement: each gets its own CTE names', async () => {
    const first = funding(`uow-a-${Date.now()}`, 300);
    const second = funding(`uow-b-${Date.now()}`, 200);
    await t.runtime.db.transaction().execute((trx) => unitOfWork().money(first).money(second).run(trx));
    const posted = await t.runtime.db
      .selectFrom('ledger_postings')
      .select(['transaction_id', 'amount'])
      .where('transaction_id', 'in', [first.transactionId, second.transactionId])
      .execute();
    assert.equal(posted.length, 4);
    assert.deepEqual((await checkLedger(t.runtime.db)).problems, []);
  });

  test('a unit with nothing in it writes nothing and answers no rows', async () => {
    assert.deepEqual(await t.runtime.db.transaction().execute((trx) => unitOfWork().run(trx)), []);
  });
});
