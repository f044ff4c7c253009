import assert from 'node:assert/strict';
import { afterAll, beforeAll, beforeEach, describe, test } from 'vitest';
import { manualClock } from '../support/clock.js';
import { testDatabaseKind } from '../support/database.js';
import {
  expectError,
  expectStatus,
  startTestApp,
  waitUntil,
  type TestApp,
  type TestBusiness,
} from '../support/harness.js';
import { listEvents } from '../support/read-api.js';
import { createLink, getLink, ledgerIsSound, LINKS, newWallet, patchLink, payLink, walletBalance } from './support.js';

const FUNDS = 10_000;
const PRICE = 1000;

describe('payment link limits hold under races (issue 50 item 3)', () => {
  const clock = manualClock();
  let t: TestApp;
  let business: TestBusiness;
  let sk: string;
  beforeAll(async () => {
    t = await startTestApp({ clock, config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    business = await t.createBusiness();
    sk = business.keys.secretTest;
  });
  afterAll(() => t.close());
  beforeEach(() => clock.advance(60_000));

  const wallets = (n: number) => Promise.all(Array.from({ length: n }, () => newWallet(t, FUNDS)));

  /** How many intents of the link are stored, whatever their status. */
  async function storedIntents(reference: string): Promise<number> {
    const row = await t.runtime.db
      .selectFrom('payment_intents')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('payment_link', '=', reference)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  test.skipIf(testDatabaseKind === 'postgres' ? false : 'PostgreSQL only: PGlite runs one transaction at a time')(
    '20 payers at once on a link of maxPayments 5: exactly 5 paid, 15 refused and debited nothing, one payment_link.completed',
    async () => {
      for (let round = 0; round < 2; round++) {
        clock.advance(60_000);
        const link = await createLink(t, sk, {
          label: `Cinq ${round}`,
          amountType: 'FIXED',
          amount: PRICE,
          maxPayments: 5,
        });
        const payers = await wallets(20);
        const responses = await Promise.all(payers.map((payer) => payLink(t, link, payer)));

        const paid = responses.filter((response) => response.status === 200);
        assert.equal(paid.length, 5, responses.map((response) => response.text.slice(0, 200)).join('\n'));
        for (const response of responses) {
          if (response.status !== 200) expectError(response, 409, 'PAYMENT_LINK_COMPLETED');
        }
        const balances = await Promise.all(payers.map((payer) => walletBalance(t, payer.phone)));
        assert.equal(
          balances.reduce((sum, balance) => sum + balance, 0),
          20 * FUNDS - 5 * PRICE,
        );
        for (const [i, response] of responses.entries()) {
          assert.equal(balances[i], response.status === 200 ? FUNDS - PRICE : FUNDS, `payer ${i}: ${response.status}`);
        }

        const after = await getLink(t, sk, link.referenceNumber);
        assert.deepEqual([after.status, after.paymentsCount, after.amountCollected], ['COMPLETED', 5, 5 * PRICE]);
        assert.equal(await storedIntents(link.referenceNumber), 5);
        const listed = await t.request('GET', `${LINKS}/${link.referenceNumber}/intents`, { key: sk });
        assert.deepEqual(
          listed.body.data.items
            .map((intent: { receipt?: unknown; referenceNumber: string }) => intent.referenceNumber)
            .sort(),
          paid.map((response) => response.body.data.receipt.reference).sort(),
        );
        const completed = await listEvents(t, sk, link.referenceNumber, 'payment_link.completed');
        assert.equal(completed.length, 1);
        assert.equal(completed[0]!.payload.data.payments_count, 5);
        await ledgerIsSound(t);
      }
    },
  );

  test('deactivating a link while payers pay: each payment counted before it, or refused with nothing debited', async () => {
    const outcomes = new Set<string>();
    for (let round = 0; round < 4; round++) {
      clock.advance(60_000);
      const link = await createLink(t, sk, { label: `Stop ${round}`, amountType: 'FIXED', amount: PRICE });
      const payers = await wallets(10);
      const payments = payers.map((payer) => payLink(t, link, payer));
      // The switch lands among the payments, after a number of them that grows from round to round
      // (0: before any); the others are still on their way, most of them hashing their PIN.
      await waitUntil(
        async () => (await getLink(t, sk, link.referenceNumber)).paymentsCount >= round,
        `${round} payments`,
      );
      const deactivated = await patchLink(t, sk, link.referenceNumber, { active: false });
      expectStatus(deactivated, 200);
      const responses = await Promise.all(payments);

      for (const response of responses) {
        if (response.status === 200) outcomes.add('paid');
        else {
          expectError(response, 409, 'PAYMENT_LINK_INACTIVE');
          outcomes.add('refused');
        }
      }
      const paid = responses.filter((response) => response.status === 200).length;
      const balances = await Promise.all(payers.map((payer) => walletBalance(t, payer.phone)));
      for (const [i, response] of responses.entries()) {
        assert.equal(balances[i], response.status === 200 ? FUNDS - PRICE : FUNDS, `payer ${i}: ${response.status}`);
      }
      const after = await getLink(t, sk, link.referenceNumber);
      assert.equal(after.status, 'INACTIVE');
      assert.equal(after.paymentsCount, paid);
      assert.equal(after.amountCollected, paid * PRICE);
      // The PATCH waited for the payments counting themselves and saw them; none was counted after it.
      assert.equal(deactivated.body.data.paymentsCount, paid);
      assert.equal(await storedIntents(link.referenceNumber), paid);
      // Once it is off, nobody pays.
      expectError(await payLink(t, link, payers[0]!), 409, 'PAYMENT_LINK_INACTIVE');
    }
    await ledgerIsSound(t);
    assert.deepEqual([...outcomes].sort(), ['paid', 'refused']);
  });
});
