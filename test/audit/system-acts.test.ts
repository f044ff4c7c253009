import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { payDailySellers } from '../../src/modules/payouts/daily.js';
import { expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { act, createIntent } from '../intents/support.js';
import { newPhone } from '../payouts/support.js';
import { createSeller } from '../sellers/support.js';
import { entriesOf } from './support.js';

const PAYER = '+22249000901';

/** Issue 53 item 4: a payout the platform makes by itself (a DAILY seller's) is recorded, by `system`. */
describe("the audit log: the platform's own acts", () => {
  let t: TestApp;
  let business: TestBusiness;
  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '1000000' } });
    business = await t.createBusiness();
    expectStatus(
      await t.admin('POST', '/wallets', { phone: PAYER, pin: '1234', balance: 10_000_000, environment: 'test' }),
      201,
    );
  });
  afterAll(() => t?.close());

  test("a DAILY seller's payout: one entry, actor system, in the seller's mode, the day's run again writes none", async () => {
    const key = business.keys.secretTest;
    const seller = await createSeller(t, key, { name: 'Daily stall', phone: newPhone(), payoutSchedule: 'DAILY' });
    const intent = await createIntent(t, key, { amount: 50_000, splits: [{ seller: seller.id, amount: 40_000 }] });
    expectStatus(await act(t, key, intent.referenceNumber, 'simulate', { payerPhone: PAYER }), 200);
    const limits = {
      maxAmount: t.runtime.config.intentMaxAmount,
      maxPendingSandbox: t.runtime.config.sandboxPendingPayoutsMax,
    };
    const now = new Date();
    await payDailySellers(t.runtime.db, limits, { now });
    await payDailySellers(t.runtime.db, limits, { now });
    const entries = await entriesOf(t, business.id, 'payout.created');
    assert.equal(entries.length, 1);
    const entry = entries[0]!;
    assert.deepEqual(
      [entry.actor_kind, entry.actor_id, entry.actor_label, entry.environment, entry.target_kind, entry.ip],
      ['system', null, 'daily seller payouts', 'test', 'payout', null],
    );
    assert.equal(entry.details.seller, seller.id);
    const payout = await t.runtime.db
      .selectFrom('payouts')
      .select(['reference', 'amount'])
      .where('seller_id', '=', seller.id)
      .executeTakeFirstOrThrow();
    assert.deepEqual([entry.target_id, entry.details.amount], [payout.reference, payout.amount]);
  });
});
