import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import pg from 'pg';
import { accountBalance, checkLedger, foldPendingMovements, post } from '../../src/modules/payments/ledger.js';
import { testDatabaseKind } from '../support/database.js';
import { expectError, expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { act, createIntent } from '../intents/support.js';
import { testPayout } from '../support/money.js';

const MERCHANT_PAID = (amount: number) => amount - Math.round(amount / 100); // the default 1 % provider fee

describe('a ledger without hot rows', () => {
  let t: TestApp;
  let business: TestBusiness;
  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '1000000' } });
    business = await t.createBusiness();
  });
  afterAll(() => t.close());

  const merchant = () => ({ kind: 'merchant' as const, ownerId: business.id });
  const rowsIn = async (table: 'ledger_pending_movements' | 'ledger_postings') =>
    Number(
      (
        await t.runtime.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  const pendingRows = () => rowsIn('ledger_pending_movements');
  const sandboxWallet = (phone: string) =>
    t.runtime.db
      .selectFrom('wallets')
      .select('id')
      .where('environment', '=', 'test')
      .where('phone', '=', phone)
      .executeTakeFirst();

  test('every account exists before its first movement: platform, merchant and wallet accounts', async () => {
    const accounts = await t.runtime.db
      .selectFrom('ledger_accounts')
      .select(['kind', 'environment'])
      .where((eb) => eb.or([eb('owner_id', '=', ''), eb('owner_id', '=', business.id)]))
      .execute();
    for (const environment of ['test', 'live'] as const) {
      for (const kind of ['revenue', 'tof', 'tte', 'funding', 'merchant']) {
        assert.ok(
          accounts.some((account) => account.kind === kind && account.environment === environment),
          `${environment} ${kind} account`,
        );
      }
    }
    const wallets = await t.runtime.db.selectFrom('wallets').select('id').execute();
    const walletAccounts = await t.runtime.db
      .selectFrom('ledger_accounts')
      .select('owner_id')
      .where('kind', '=', 'wallet')
      .execute();
    assert.deepEqual(walletAccounts.map((a) => a.owner_id).sort(), wallets.map((w) => w.id).sort());
  });

  test('payments credit shared accounts as pending movements; folding keeps every balance exact', async () => {
    const sk = business.keys.secretTest;
    const before = await accountBalance(t.runtime.db, 'test', merchant());
    for (const amount of [10_000, 2_500, 700]) {
      const intent = await createIntent(t, sk, { amount });
      expectStatus(await act(t, sk, intent.referenceNumber, 'simulate', {}), 200);
    }
    const expected = before + MERCHANT_PAID(10_000) + MERCHANT_PAID(2_500) + MERCHANT_PAID(700);
    assert.ok((await pendingRows()) > 0, 'the merchant and platform credits wait as pending movements');
    assert.equal(await accountBalance(t.runtime.db, 'test', merchant()), expected);
    const balance = await t.request('GET', '/api/v1/dev/balance', { key: sk });
    assert.equal(balance.body.data.available, expected);
    assert.ok((await checkLedger(t.runtime.db)).ok);

    assert.ok((await foldPendingMovements(t.runtime.db)) > 0);
    assert.equal(await pendingRows(), 0);
    const row = await t.runtime.db
      .selectFrom('ledger_accounts')
      .select('balance')
      .where('kind', '=', 'merchant')
      .where('owner_id', '=', business.id)
      .where('environment', '=', 'test')
      .executeTakeFirstOrThrow();
    assert.equal(row.balance, expected, 'the row now holds what was pending');
    assert.equal(await accountBalance(t.runtime.db, 'test', merchant()), expected);
    assert.deepEqual((await checkLedger(t.runtime.db)).problems, []);
  });

  test('a transfer naming an account that does not exist fails whole: nothing is posted', async () => {
    const [postingsBefore, pendingBefore] = [await rowsIn('ledger_postings'), await pendingRows()];
    await assert.rejects(
      t.runtime.db.transaction().execute((trx) =>
        post(trx, {
          environment: 'test',
          kind: 'credit',
          reference: 'to-nobody',
          balance: testPayout(1_000),
          lines: [
            { account: { kind: 'merchant', ownerId: 'biz_does_not_exist' }, amount: 1_000 },
            { account: { kind: 'funding' }, amount: -1_000 },
          ],
        }),
      ),
      /account_id/,
    );
    assert.equal(await rowsIn('ledger_postings'), postingsBefore);
    assert.equal(await pendingRows(), pendingBefore);
    assert.deepEqual((await checkLedger(t.runtime.db)).problems, []);
  });

  test('a payment whose transfer cannot be written fails whole: intent, event and wallet stay as they were', async () => {
    const fresh = await t.createBusiness({ name: 'No merchant account' });
    const sk = fresh.keys.secretTest;
    const intent = await createIntent(t, sk, { amount: 3_000 });
    // Accounts are never deleted; this one is, so that the transfer written with the intent's
    // change names an account that does not exist.
    await t.runtime.db
      .deleteFrom('ledger_accounts')
      .where('environment', '=', 'test')
      .where('kind', '=', 'merchant')
      .where('owner_id', '=', fresh.id)
      .execute();
    assert.equal(
      await sandboxWallet('+22246100001'),
      undefined,
      'the payer is new: the failed payment must not leave its wallet either',
    );
    const failed = await act(t, sk, intent.referenceNumber, 'simulate', { payerPhone: '+22246100001' });
    expectError(failed, 500, 'INTERNAL_ERROR');
    const after = await t.request('GET', `/api/v1/dev/intents/${intent.referenceNumber}`, { key: sk });
    assert.equal(after.body.data.status, 'PENDING');
    const events = await t.runtime.db
      .selectFrom('events')
      .select('event')
      .where('subject', '=', intent.referenceNumber)
      .execute();
    assert.deepEqual(
      events.map((row) => row.event),
      ['payment.created'],
    );
    const postings = await t.runtime.db
      .selectFrom('ledger_postings')
      .select('id')
      .where('reference', '=', intent.referenceNumber)
      .execute();
    assert.deepEqual(postings, []);
    assert.equal(
      await sandboxWallet('+22246100001'),
      undefined,
      'the sandbox wallet made for the payer rolled back too',
    );
  });

  test('a refund may spend what is still pending, never more', async () => {
    const fresh = await t.createBusiness({ name: 'Pending only' });
    const intent = await createIntent(t, fresh.keys.secretTest, { amount: 5_000 });
    expectStatus(await act(t, fresh.keys.secretTest, intent.referenceNumber, 'simulate', {}), 200);
    // Nothing folded yet: the merchant row holds 0, its pending credit 4,950.
    const refunded = await act(t, fresh.keys.secretTest, intent.referenceNumber, 'refund', {});
    expectStatus(refunded, 200);
    assert.equal(await accountBalance(t.runtime.db, 'test', { kind: 'merchant', ownerId: fresh.id }), 0);
    await foldPendingMovements(t.runtime.db);
    assert.deepEqual((await checkLedger(t.runtime.db)).problems, []);
    // A payout (a merchant debit) leaves less than the next refund needs, all of it pending.
    const again = await createIntent(t, fresh.keys.secretTest, { amount: 5_000 });
    expectStatus(await act(t, fresh.keys.secretTest, again.referenceNumber, 'simulate', {}), 200);
    await t.runtime.db.transaction().execute((trx) =>
      post(trx, {
        environment: 'test',
        kind: 'credit',
        reference: 'payout-pending',
        balance: testPayout(-4_000),
        lines: [
          { account: { kind: 'merchant', ownerId: fresh.id }, amount: -4_000 },
          { account: { kind: 'funding' }, amount: 4_000 },
        ],
      }),
    );
    const refused = await act(t, fresh.keys.secretTest, again.referenceNumber, 'refund', {});
    assert.equal(refused.status, 402, refused.text);
    assert.equal(refused.body.error.code, 'INSUFFICIENT_FUNDS');
  });

  test.skipIf(
    testDatabaseKind === 'pglite' ? 'PGlite runs one transaction at a time: nothing can hold a row meanwhile' : false,
  )('payments never wait on the merchant or platform rows (another transaction holds them all)', async () => {
    const sk = business.keys.secretTest;
    const intents = await Promise.all([1, 2, 3].map(() => createIntent(t, sk, { amount: 1_000 })));
    const holder = new pg.Client({ connectionString: t.testDatabase.url });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      const held = await holder.query(
        `SELECT id FROM ledger_accounts WHERE environment = 'test' AND kind <> 'wallet' FOR UPDATE`,
      );
      assert.ok(held.rowCount! >= 5);
      // Three payments from three wallets to the held merchant all complete meanwhile.
      const payers = ['+22230000001', '+22230000002', '+22230000003'];
      const paid = await Promise.all(
        intents.map((intent, i) => act(t, sk, intent.referenceNumber, 'simulate', { payerPhone: payers[i] })),
      );
      for (const response of paid) {
        expectStatus(response, 200);
        assert.equal(response.body.data.status, 'PAID');
      }
      await holder.query('ROLLBACK');
    } finally {
      await holder.end();
    }
    assert.deepEqual((await checkLedger(t.runtime.db)).problems, []);
  });

  // Under READ COMMITTED a statement that waits for a row lock still reads other tables with the
  // snapshot it began with: a balance summed in the locking statement misses what the transaction
  // it waited for wrote, or counts twice what a fold moved meanwhile.
  // Read from a session of its own: within a transaction, pg_stat_activity keeps its first answer.
  const whenWaitingOnLocks = async (count: number) => {
    const watcher = new pg.Client({ connectionString: t.testDatabase.url });
    await watcher.connect();
    try {
      for (;;) {
        const waiting = await watcher.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity
           WHERE datname = current_database() AND wait_event_type = 'Lock' AND query ILIKE '%ledger_accounts%'`,
        );
        if (waiting.rows[0]!.n >= count) return;
        await new Promise((resolve) => setImmediate(resolve));
      }
    } finally {
      await watcher.end();
    }
  };

  /** A new merchant paid `payments` intents of 5,000 (4,950 each to it), then paid `payout` out. */
  const paidThenPaidOut = async (name: string, payments: number, payout: number) => {
    const merchant = await t.createBusiness({ name });
    const sk = merchant.keys.secretTest;
    const intents = [];
    for (let i = 0; i < payments; i++) {
      const intent = await createIntent(t, sk, { amount: 5_000 });
      expectStatus(await act(t, sk, intent.referenceNumber, 'simulate', {}), 200);
      intents.push(intent);
    }
    await t.runtime.db.transaction().execute((trx) =>
      post(trx, {
        environment: 'test',
        kind: 'credit',
        reference: `payout-${merchant.id}`,
        balance: testPayout(-payout),
        lines: [
          { account: { kind: 'merchant', ownerId: merchant.id }, amount: -payout },
          { account: { kind: 'funding' }, amount: payout },
        ],
      }),
    );
    return { fresh: merchant, sk, intents };
  };

  test.skipIf(testDatabaseKind === 'postgres' ? false : 'PostgreSQL only: PGlite runs one transaction at a time')(
    'two refunds racing for the last of a merchant balance: one is paid, the other is refused',
    async () => {
      // 9,900 received, 4,900 paid out: 5,000 left, and each full refund takes 4,950 from the merchant.
      const { fresh, sk, intents } = await paidThenPaidOut('Two refunds, one balance', 2, 4_900);
      const holder = new pg.Client({ connectionString: t.testDatabase.url });
      await holder.connect();
      try {
        // Both refunds reach the merchant's lock before either can take it.
        await holder.query('BEGIN');
        await holder.query(
          `SELECT id FROM ledger_accounts WHERE environment = 'test' AND kind = 'merchant' AND owner_id = $1 FOR UPDATE`,
          [fresh.id],
        );
        const refunds = Promise.all(intents.map((intent) => act(t, sk, intent.referenceNumber, 'refund', {})));
        await whenWaitingOnLocks(2);
        await holder.query('ROLLBACK');
        const statuses = (await refunds).map((response) => response.status).sort();
        assert.deepEqual(statuses, [200, 402]);
      } finally {
        await holder.end();
      }
      assert.equal(await accountBalance(t.runtime.db, 'test', { kind: 'merchant', ownerId: fresh.id }), 50);
      await foldPendingMovements(t.runtime.db);
      assert.deepEqual((await checkLedger(t.runtime.db)).problems, []);
    },
  );

  test.skipIf(testDatabaseKind === 'postgres' ? false : 'PostgreSQL only: PGlite runs one transaction at a time')(
    'a refund that waited for a fold of its merchant counts the folded movements once',
    async () => {
      // 4,950 received, 10 paid out: 4,940 left, all of it pending; the refund needs 4,950.
      const { fresh, sk, intents } = await paidThenPaidOut('Refund behind a fold', 1, 10);
      const intent = intents[0]!;
      // A fold of the merchant's movements (what the worker does) holds the row while the refund
      // starts; were the movements it moves into the row counted again, 9,880 would seem there.
      const folder = new pg.Client({ connectionString: t.testDatabase.url });
      await folder.connect();
      try {
        await folder.query('BEGIN');
        const account = await folder.query<{ id: string }>(
          `SELECT id FROM ledger_accounts WHERE environment = 'test' AND kind = 'merchant' AND owner_id = $1 FOR UPDATE`,
          [fresh.id],
        );
        const id = account.rows[0]!.id;
        const refund = act(t, sk, intent.referenceNumber, 'refund', {});
        await whenWaitingOnLocks(1);
        await folder.query(
          `WITH moved AS (DELETE FROM ledger_pending_movements WHERE account_id = $1 RETURNING amount)
           UPDATE ledger_accounts SET balance = balance + (SELECT coalesce(sum(amount), 0) FROM moved) WHERE id = $1`,
          [id],
        );
        await folder.query('COMMIT');
        const refused = await refund;
        assert.equal(refused.status, 402, refused.text);
        assert.equal(refused.body.error.code, 'INSUFFICIENT_FUNDS');
      } finally {
        await folder.end();
      }
      assert.equal(await accountBalance(t.runtime.db, 'test', { kind: 'merchant', ownerId: fresh.id }), 4_940);
      assert.deepEqual((await checkLedger(t.runtime.db)).problems, []);
    },
  );

  test('an account that cannot be folded does not stop the others; the run fails naming it', async () => {
    const paid = await t.createBusiness({ name: 'Folded anyway' });
    const intent = await createIntent(t, paid.keys.secretTest, { amount: 5_000 });
    expectStatus(await act(t, paid.keys.secretTest, intent.referenceNumber, 'simulate', {}), 200);
    // A movement that would take another merchant's row below zero (no path of the API makes one).
    const poisoned = await t.createBusiness({ name: 'Cannot fold' });
    const account = await t.runtime.db
      .selectFrom('ledger_accounts')
      .select('id')
      .where('environment', '=', 'test')
      .where('kind', '=', 'merchant')
      .where('owner_id', '=', poisoned.id)
      .executeTakeFirstOrThrow();
    await t.runtime.db
      .insertInto('ledger_pending_movements')
      .values({ account_id: account.id, amount: -100 })
      .execute();
    try {
      await assert.rejects(
        foldPendingMovements(t.runtime.db),
        new RegExp(`could not fold 1 account\\(s\\): ${account.id}`),
      );
      const left = await t.runtime.db.selectFrom('ledger_pending_movements').select('account_id').distinct().execute();
      assert.deepEqual(
        left.map((row) => row.account_id),
        [account.id],
        'every other account was folded',
      );
    } finally {
      await t.runtime.db.deleteFrom('ledger_pending_movements').where('account_id', '=', account.id).execute();
    }
    assert.equal(await accountBalance(t.runtime.db, 'test', { kind: 'merchant', ownerId: paid.id }), 4_950);
    assert.deepEqual((await checkLedger(t.runtime.db)).problems, []);
  });

  test('payments racing refunds and folds of one merchant stay exact', async () => {
    const sk = business.keys.secretTest;
    const paid = [];
    for (let i = 0; i < 6; i++) {
      const intent = await createIntent(t, sk, { amount: 2_000 + i });
      expectStatus(await act(t, sk, intent.referenceNumber, 'simulate', {}), 200);
      paid.push(intent);
    }
    const fresh = await Promise.all([1, 2, 3, 4, 5, 6].map(() => createIntent(t, sk, { amount: 3_000 })));
    await Promise.all([
      ...fresh.map((intent, i) =>
        act(t, sk, intent.referenceNumber, 'simulate', { payerPhone: `+2224000000${i}` }).then((r) =>
          expectStatus(r, 200),
        ),
      ),
      ...paid.map((intent) => act(t, sk, intent.referenceNumber, 'refund', {}).then((r) => expectStatus(r, 200))),
      foldPendingMovements(t.runtime.db),
      foldPendingMovements(t.runtime.db),
    ]);
    await foldPendingMovements(t.runtime.db);
    const check = await checkLedger(t.runtime.db);
    assert.deepEqual(check.problems, []);
  });
});
