import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { payoutFee } from '../../src/modules/payments/fees.js';
import { payDailySellers, wholeBalanceAmount } from '../../src/modules/payouts/daily.js';
import { periodicTasks } from '../../src/worker/worker.js';
import { expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { allBalanceTransactions, assertLedgerSound, fold, setPlan } from '../payments/support.js';
import { act, createIntent } from '../intents/support.js';
import { createPayout, newPhone, sendPayouts } from '../payouts/support.js';
import { createSeller, patchSeller, sellerEvents } from './support.js';

/**
 * Issue 52 item 4, the daily automatic payout (decision 082): a DAILY seller is paid its whole
 * balance less the fee once per UTC day, through the code of `POST /payouts` with `seller`.
 */

const PAYER = '+22252000481';
const DAY_1 = new Date('2026-12-07T00:00:30Z');
const DAY_1_LATER = new Date('2026-12-07T23:59:00Z');
const DAY_2 = new Date('2026-12-08T00:01:00Z');
// A flat fee and a rate, so that "the whole balance less the fee" is not a subtraction.
const FEES = { payoutFeeFlat: 50, payoutFeeBps: 100 };

async function sellerBalance(t: TestApp, key: string, id: string): Promise<number> {
  const response = await t.request('GET', `/api/v1/dev/sellers/${id}/balance`, { key });
  expectStatus(response, 200);
  return response.body.data.available;
}

function sellerPayouts(t: TestApp, seller: string) {
  return t.runtime.db.selectFrom('payouts').selectAll().where('seller_id', '=', seller).orderBy('created_at').execute();
}

function payoutDays(t: TestApp, seller: string) {
  return sql<{ day: string; payout_reference: string | null }>`
    SELECT day::text AS day, payout_reference FROM seller_payout_days WHERE seller_id = ${seller} ORDER BY day`
    .execute(t.runtime.db)
    .then((result) => result.rows);
}

describe("a seller's daily automatic payout (decision 082)", () => {
  let t: TestApp;
  let shop: TestBusiness;
  let key: string;
  const run = (now: Date) =>
    payDailySellers(
      t.runtime.db,
      { maxAmount: t.runtime.config.intentMaxAmount, maxPendingSandbox: t.runtime.config.sandboxPendingPayoutsMax },
      { now },
    );

  /** A split payment giving `seller` `share` (the business bears the fee); returns the intent's reference. */
  async function split(seller: string, amount: number, share: number): Promise<string> {
    const intent = await createIntent(t, key, { amount, splits: [{ seller, amount: share }] });
    expectStatus(await act(t, key, intent.referenceNumber, 'simulate', { payerPhone: PAYER }), 200);
    return intent.referenceNumber as string;
  }

  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '1000000' } });
    shop = await t.createBusiness({ name: 'Daily stalls', approveLive: true });
    key = shop.keys.secretTest;
    await setPlan(t, shop.id, { providerBps: 100, payerFee: 0, tofBps: 500, tteBps: 0 });
    expectStatus(await t.admin('PUT', `/businesses/${shop.id}/fees`, FEES), 200);
    expectStatus(
      await t.admin('POST', '/wallets', { phone: PAYER, pin: '1234', balance: 100_000_000, environment: 'test' }),
      201,
    );
  });
  afterAll(() => t.close());

  test('payoutSchedule: MANUAL by default, DAILY on create and PATCH, shown on the seller and in its events', async () => {
    const manual = await createSeller(t, key, { name: 'Stall M', phone: newPhone() });
    assert.equal(manual.payoutSchedule, 'MANUAL');
    const daily = await createSeller(t, key, { name: 'Stall D', phone: newPhone(), payoutSchedule: 'DAILY' });
    assert.equal(daily.payoutSchedule, 'DAILY');
    const patched = await patchSeller(t, key, manual.id, { payoutSchedule: 'DAILY' });
    expectStatus(patched, 200);
    assert.equal(patched.body.data.payoutSchedule, 'DAILY');
    const bad = await patchSeller(t, key, manual.id, { payoutSchedule: 'WEEKLY' });
    expectStatus(bad, 400);
    assert.equal(bad.body.error.code, 'VALIDATION_ERROR');
    const events = await sellerEvents(t, manual.id);
    assert.deepEqual(
      events.map((event) => [event.event, event.body.data.payout_schedule]),
      [
        ['seller.created', 'MANUAL'],
        ['seller.updated', 'DAILY'],
      ],
    );
    assert.equal((await sellerEvents(t, daily.id))[0]!.body.data.payout_schedule, 'DAILY');
  });

  test('the whole balance less the fee: the largest amount whose amount + fee fits', () => {
    const plan = { ...FEES, tofBps: 0, tteBps: 0 };
    for (const available of [0, 50, 51, 52, 101, 6_000, 10_049, 123_456_789]) {
      const amount = wholeBalanceAmount(available, plan, Number.MAX_SAFE_INTEGER);
      if (amount === 0) {
        assert.ok(1 + payoutFee(1, plan) > available, String(available));
        continue;
      }
      assert.ok(amount + payoutFee(amount, plan) <= available, String(available));
      assert.ok(amount + 1 + payoutFee(amount + 1, plan) > available, String(available));
    }
    assert.equal(wholeBalanceAmount(-500, plan, 1_000), 0);
    assert.equal(wholeBalanceAmount(1_000_000, plan, 1_000), 1_000, 'at most the largest payout');
  });

  test('a DAILY seller is paid its whole balance once a day, however often the task runs; the next day pays again', async () => {
    const phone = newPhone();
    const seller = (await createSeller(t, key, { name: 'Stall Daily', phone, payoutSchedule: 'DAILY' })).id;
    const manual = (await createSeller(t, key, { name: 'Stall Manual', phone: newPhone() })).id;
    await split(seller, 10_000, 6_000);
    await split(manual, 10_000, 4_000);

    await run(DAY_1);
    await run(DAY_1_LATER);
    const first = await sellerPayouts(t, seller);
    assert.equal(first.length, 1, 'paid once on day 1');
    const [payout] = first;
    assert.equal(payout!.destination_phone, phone);
    assert.equal(payout!.fee, payoutFee(payout!.amount, { ...FEES, tofBps: 0, tteBps: 0 }));
    assert.deepEqual(payout!.metadata, { payout_schedule: 'DAILY', day: '2026-12-07' });
    const left = await sellerBalance(t, key, seller);
    assert.equal(payout!.amount + payout!.fee + left, 6_000);
    assert.ok(left >= 0 && left < 2, `what is left cannot pay 1 centime more: ${left}`);
    assert.deepEqual(await payoutDays(t, seller), [{ day: '2026-12-07', payout_reference: payout!.reference }]);
    assert.deepEqual(await sellerPayouts(t, manual), [], 'a MANUAL seller is not paid');
    assert.equal(await sellerBalance(t, key, manual), 4_000);

    // The payout is one of POST /payouts: its event names the seller, the worker sends it.
    const events = await t.runtime.db
      .selectFrom('events')
      .select(['event', 'body'])
      .where('subject', '=', payout!.reference)
      .execute();
    assert.deepEqual(
      events.map((event) => [event.event, JSON.parse(event.body).data.seller]),
      [['payout.created', seller]],
    );
    await sendPayouts(t);

    // More money the same day waits for the next day.
    await split(seller, 10_000, 3_000);
    await run(DAY_1_LATER);
    assert.equal((await sellerPayouts(t, seller)).length, 1);
    await run(DAY_2);
    await run(DAY_2);
    const second = await sellerPayouts(t, seller);
    assert.equal(second.length, 2, 'paid again on day 2');
    assert.equal(second[1]!.amount + second[1]!.fee, 3_000 + left - (await sellerBalance(t, key, seller)));
    assert.deepEqual(
      (await payoutDays(t, seller)).map((row) => row.day),
      ['2026-12-07', '2026-12-08'],
    );

    await fold(t);
    const items = await allBalanceTransactions(t, key, `&seller=${seller}`);
    assert.equal(
      items.reduce((sum, item) => sum + item.net, 0),
      await sellerBalance(t, key, seller),
      "the seller's balance is the sum of its transactions",
    );
    assert.deepEqual(
      items
        .filter((item) => item.type === 'payout' || item.type === 'payout_fee')
        .map((item) => item.seller)
        .filter((id) => id !== seller),
      [],
    );
    await assertLedgerSound(t);
  });

  test('a negative or too small balance is skipped for the day; DISABLED and MANUAL sellers are not looked at', async () => {
    const negative = (await createSeller(t, key, { name: 'Stall Neg', phone: newPhone() })).id;
    const reference = await split(negative, 10_000, 5_000);
    expectStatus(await createPayout(t, key, { amount: 4_000, seller: negative }), 201);
    expectStatus(await act(t, key, reference, 'refund'), 200);
    assert.ok((await sellerBalance(t, key, negative)) < 0);
    expectStatus(await patchSeller(t, key, negative, { payoutSchedule: 'DAILY' }), 200);

    const small = (await createSeller(t, key, { name: 'Stall Small', phone: newPhone(), payoutSchedule: 'DAILY' })).id;
    await split(small, 10_000, 51); // 1 centime would cost 51 with its fee: nothing left to pay
    const disabled = (await createSeller(t, key, { name: 'Stall Off', phone: newPhone(), payoutSchedule: 'DAILY' })).id;
    await split(disabled, 10_000, 2_000);
    expectStatus(await patchSeller(t, key, disabled, { status: 'DISABLED' }), 200);

    const day = new Date('2026-12-09T00:00:10Z');
    const negativeBefore = await sellerBalance(t, key, negative);
    await run(day);
    assert.equal((await sellerPayouts(t, negative)).length, 1, 'only its manual payout');
    assert.equal(await sellerBalance(t, key, negative), negativeBefore);
    assert.deepEqual(await payoutDays(t, negative), [{ day: '2026-12-09', payout_reference: null }]);
    assert.deepEqual(await sellerPayouts(t, small), []);
    assert.deepEqual(await payoutDays(t, small), [{ day: '2026-12-09', payout_reference: null }]);
    assert.deepEqual(await sellerPayouts(t, disabled), []);
    assert.deepEqual(await payoutDays(t, disabled), []);

    // Skipped is for the day: money that arrives later that day is paid the next day.
    await split(small, 10_000, 1_000);
    await run(new Date('2026-12-09T12:00:00Z'));
    assert.deepEqual(await sellerPayouts(t, small), []);
    await run(new Date('2026-12-10T00:00:10Z'));
    assert.equal((await sellerPayouts(t, small)).length, 1);
    await fold(t);
    await assertLedgerSound(t);
  });

  test('two runs at once pay a seller once (the day row is the key)', async () => {
    const seller = (await createSeller(t, key, { name: 'Stall Race', phone: newPhone(), payoutSchedule: 'DAILY' })).id;
    await split(seller, 10_000, 7_000);
    const day = new Date('2026-12-11T00:00:10Z');
    await Promise.all([run(day), run(day), run(day)]);
    assert.equal((await sellerPayouts(t, seller)).length, 1);
    await fold(t);
    await assertLedgerSound(t);
  });

  test("the worker's 'seller-payouts' task is leased every minute", () => {
    const task = periodicTasks.find((each) => each.name === 'seller-payouts');
    assert.ok(task);
    assert.equal(task.everySeconds, 60);
  });
});
