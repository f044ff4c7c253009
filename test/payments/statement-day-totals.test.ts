import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { ensureMonthlyPartitions, monthStart } from '../../src/db/partitions.js';
import type { BalanceOwner } from '../../src/modules/payments/balance-transactions.js';
import { foldBalanceDays, sumsByType } from '../../src/modules/payments/balance-days.js';
import { checkLedger } from '../../src/modules/payments/ledger.js';
import { balanceStatement, monthPeriod, rangePeriod } from '../../src/modules/payments/statements.js';
import { expectStatus, startTestApp, type TestApp } from '../support/harness.js';
import { createSeller } from '../sellers/support.js';
import { assertLedgerSound } from './support.js';

const HOUR = 3_600_000;
const month = (at: Date) => at.toISOString().slice(0, 7);

/** What the statement's figures are by definition: a plain sum over the owner's rows, by type. */
async function plainSums(t: TestApp, owner: BalanceOwner, from: Date, to: Date) {
  const { rows } = await sql<{ type: string; count: number; gross: string; fees: string; net: string; before: string }>`
    SELECT type, count(*) FILTER (WHERE created_at >= ${from}::timestamptz)::int AS count,
      coalesce(sum(amount) FILTER (WHERE created_at >= ${from}::timestamptz), 0)::text AS gross,
      coalesce(sum(fee) FILTER (WHERE created_at >= ${from}::timestamptz), 0)::text AS fees,
      coalesce(sum(net) FILTER (WHERE created_at >= ${from}::timestamptz), 0)::text AS net,
      coalesce(sum(net) FILTER (WHERE created_at < ${from}::timestamptz), 0)::text AS before
    FROM balance_transactions
    WHERE business_id = ${owner.businessId} AND environment = ${owner.environment}
      AND seller_id IS NOT DISTINCT FROM ${owner.seller ?? null} AND created_at < ${to}::timestamptz
    GROUP BY type ORDER BY type`.execute(t.runtime.db);
  return rows.map((row) => ({
    ...row,
    gross: Number(row.gross),
    fees: Number(row.fees),
    net: Number(row.net),
    before: Number(row.before),
  }));
}

async function daySums(t: TestApp, owner: BalanceOwner, from: Date, to: Date) {
  const rows = await sumsByType(t.runtime.db, owner, { from, to });
  return rows
    .map((row) => ({
      type: row.type,
      count: Number(row.count),
      gross: Number(row.gross),
      fees: Number(row.fees),
      net: Number(row.net),
      before: Number(row.before),
    }))
    .sort((a, b) => a.type.localeCompare(b.type));
}

/** Rows of `owner` at `at` (one every `step`), with distinct amounts so a lost or doubled row shows. */
async function writeRows(t: TestApp, owner: BalanceOwner, tag: string, at: Date, count: number, step = HOUR) {
  await sql`
    INSERT INTO balance_transactions (id, business_id, environment, type, amount, fee, net, source_reference,
      source_kind, ledger_transaction_id, created_at, seller_id, settled_by)
    SELECT ${`btx_${tag}_`} || i, ${owner.businessId}, ${owner.environment},
      (ARRAY['payment', 'refund', 'payout'])[1 + i % 3], 1000 + i, i % 7, 1000 + i - i % 7, 'pi_days', 'payment_intent',
      ${`ltx_${tag}_`} || i, ${at}::timestamptz + make_interval(secs => i * ${step / 1000}), ${owner.seller ?? null},
      'po_days'
    FROM generate_series(1, ${count}) AS i`.execute(t.runtime.db);
}

describe('statements from day totals: the same figures as a plain sum, through folds and archiving', () => {
  let t: TestApp;
  let business: BalanceOwner;
  let seller: BalanceOwner;
  const now = new Date();
  const oldest = monthStart(now, -15);
  beforeAll(async () => {
    t = await startTestApp();
    await ensureMonthlyPartitions(t.runtime.db, oldest, now);
    const created = await t.createBusiness();
    const { id } = await createSeller(t, created.keys.secretTest);
    business = { businessId: created.id, environment: 'test' };
    seller = { businessId: created.id, environment: 'test', seller: id };
    // Fifteen months of history, the business's and the seller's: rows every few hours of a month's first days.
    for (let back = 15; back >= 1; back--) {
      const start = monthStart(now, -back);
      await writeRows(t, business, `b${back}`, start, 40, 2.5 * HOUR);
      await writeRows(t, seller, `s${back}`, start, 12, 4 * HOUR);
    }
  });
  afterAll(() => t?.close());

  test('months and ranges of days, and a period whose edges cut through days, sum as the rows do', async () => {
    for (const owner of [business, seller]) {
      const periods = [
        monthPeriod(month(monthStart(now, -3))),
        monthPeriod(month(monthStart(now, -15))),
        monthPeriod(month(now)),
        rangePeriod(monthStart(now, -9).toISOString().slice(0, 10), monthStart(now, -4).toISOString().slice(0, 10)),
        // Not a statement period today: edges at 05:00 and 17:30, inside one day and across many.
        {
          from: new Date(monthStart(now, -6).getTime() + 5 * HOUR),
          to: new Date(monthStart(now, -2).getTime() + 17.5 * HOUR),
        },
        {
          from: new Date(monthStart(now, -6).getTime() + 5 * HOUR),
          to: new Date(monthStart(now, -6).getTime() + 22 * HOUR),
        },
      ];
      for (const period of periods) {
        assert.deepEqual(
          await daySums(t, owner, period.from, period.to),
          await plainSums(t, owner, period.from, period.to),
        );
      }
    }
  });

  test('a row moved to another day, month or owner (tests backdate rows) moves its totals', async () => {
    const db = t.runtime.db;
    await sql`UPDATE balance_transactions SET created_at = created_at - interval '40 days', type = 'adjustment'
      WHERE id IN ('btx_b3_1', 'btx_b3_2')`.execute(db);
    await sql`UPDATE balance_transactions SET created_at = created_at + interval '3 hours' WHERE id = 'btx_s4_5'`.execute(
      db,
    );
    await sql`UPDATE balance_transactions SET seller_id = NULL WHERE id = 'btx_s5_1'`.execute(db);
    for (const owner of [business, seller]) {
      for (const back of [5, 4, 3]) {
        const period = monthPeriod(month(monthStart(now, -back)));
        assert.deepEqual(
          await daySums(t, owner, period.from, period.to),
          await plainSums(t, owner, period.from, period.to),
        );
      }
    }
  });

  test('rows written into days whose totals were folded still count, folded or not', async () => {
    assert.ok((await foldBalanceDays(t.runtime.db)) > 0, 'the writers left slots to fold');
    const period = monthPeriod(month(monthStart(now, -2)));
    const before = await balanceStatement(t.runtime.db, business, period);
    // Late rows in a folded month (an import, a backdated fix): their own slot until the next fold.
    await writeRows(t, business, 'late', new Date(monthStart(now, -5).getTime() + 3 * HOUR), 5);
    await writeRows(t, business, 'late-in', new Date(period.from.getTime() + 3 * HOUR), 4);
    for (const step of ['unfolded', 'folded']) {
      const after = await balanceStatement(t.runtime.db, business, period);
      const plain = await plainSums(t, business, period.from, period.to);
      assert.equal(
        after.openingBalance,
        plain.reduce((sum, row) => sum + row.before, 0),
        step,
      );
      assert.equal(after.transactionCount, before.transactionCount + 4, step);
      assert.ok(after.openingBalance > before.openingBalance, step);
      await foldBalanceDays(t.runtime.db);
    }
  });

  test('ledger check compares every day total with its rows', async () => {
    const db = t.runtime.db;
    await assertLedgerSound(t);
    const day = monthStart(now, -7).toISOString().slice(0, 10);
    const nudge = (
      by: number,
    ) => sql`UPDATE balance_days SET net = net + ${by} WHERE business_id = ${business.businessId}
      AND seller_id = '' AND day = ${day}::date AND type = 'payment' AND slot = 0`;
    await nudge(1).execute(db);
    const { problems } = await checkLedger(db);
    assert.equal(problems.length, 1);
    assert.match(problems[0]!, new RegExp(`balance day totals of ${business.businessId} test on ${day} \\(payment\\)`));
    await nudge(-1).execute(db);
    await assertLedgerSound(t);
  });

  test("archiving a month leaves every later opening balance as it was, the business's and the seller's", async () => {
    const archived = monthStart(now, -14);
    const next = monthPeriod(month(monthStart(now, -13)));
    const latest = monthPeriod(month(monthStart(now, -1)));
    const openings = async () =>
      Promise.all(
        [business, seller].flatMap((owner) =>
          [next, latest].map((period) => balanceStatement(t.runtime.db, owner, period)),
        ),
      );
    const before = await openings();
    const response = await t.admin('POST', '/partitions/archive', {
      table: 'balance_transactions',
      month: month(archived),
    });
    expectStatus(response, 200);
    assert.ok(Number(response.body.data.rows) > 0);
    const after = await openings();
    assert.deepEqual(after, before);
    // The rows are gone from the table: a plain sum no longer says it.
    const plain = await plainSums(t, business, next.from, next.to);
    assert.ok(plain.reduce((sum, row) => sum + row.before, 0) < before[0]!.openingBalance);
    await assertLedgerSound(t);
  });
});
