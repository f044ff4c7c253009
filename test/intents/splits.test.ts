import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { post } from '../../src/modules/payments/ledger.js';
import { expectError, expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { assertBalanceExplained, assertLedgerSound, BALANCE, fold, setPlan } from '../payments/support.js';
import { pay, RICH } from '../checkout/support.js';
import { createRequest, endDueIn } from '../requests/support.js';
import { createSeller, patchSeller, SELLERS } from '../sellers/support.js';
import { act, createIntent, getIntent, INTENTS } from './support.js';

/**
 * Issue 52 item 2 and 3 for intents (decision 080): a split credits each seller in the posting
 * that pays, refunds take back in proportion, and every refusal writes nothing.
 */

const PAYER = '+22252000052';

async function sellerBalance(t: TestApp, key: string, id: string): Promise<number> {
  const response = await t.request('GET', `${SELLERS}/${id}/balance`, { key });
  expectStatus(response, 200);
  return response.body.data.available;
}

async function merchantBalance(t: TestApp, key: string): Promise<number> {
  const response = await t.request('GET', BALANCE, { key });
  expectStatus(response, 200);
  return response.body.data.available;
}

async function intentCount(t: TestApp, businessId: string): Promise<number> {
  const row = await t.runtime.db
    .selectFrom('payment_intents')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('business_id', '=', businessId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

async function confirmedEvent(t: TestApp, reference: string) {
  const row = await t.runtime.db
    .selectFrom('events')
    .select('body')
    .where('subject', '=', reference)
    .where('event', '=', 'payment.confirmed')
    .executeTakeFirstOrThrow();
  return JSON.parse(row.body);
}

describe('intent splits (issue 52, decision 080)', () => {
  let t: TestApp;
  let business: TestBusiness;
  let sk: string;
  let sellers: string[];
  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '1000000' } });
    business = await t.createBusiness({ name: 'Marché Capitale', approveLive: true });
    sk = business.keys.secretTest;
    await setPlan(t, business.id, { providerBps: 100, payerFee: 0, tofBps: 500, tteBps: 0 });
    expectStatus(
      await t.admin('POST', '/wallets', { phone: PAYER, pin: '1234', balance: 100_000_000, environment: 'test' }),
      201,
    );
    sellers = [];
    for (const name of ['Stall A', 'Stall B', 'Stall C']) sellers.push((await createSeller(t, sk, { name })).id);
  });
  afterAll(() => t.close());

  describe('refusals: a named code, nothing written', () => {
    const refused = async (body: Record<string, unknown>, status: number, code: string, names?: string) => {
      const before = await intentCount(t, business.id);
      const response = await t.request('POST', INTENTS, { key: sk, body, idempotencyKey: true });
      expectError(response, status, code);
      if (names) assert.ok(response.body.error.message.includes(names), response.text);
      assert.equal(await intentCount(t, business.id), before, 'nothing written');
      return response;
    };

    test('unknown seller and another business’s: 404 SELLER_NOT_FOUND naming the field', async () => {
      const other = await t.createBusiness({ name: 'Other market' });
      const theirs = (await createSeller(t, other.keys.secretTest)).id;
      const body = (seller: string) => ({
        amount: 10_000,
        splits: [
          { seller: sellers[0], amount: 1_000 },
          { seller, amount: 1_000 },
        ],
      });
      await refused(body('SL-0000000000000000'), 404, 'SELLER_NOT_FOUND', 'body.splits[1].seller');
      await refused(body(theirs), 404, 'SELLER_NOT_FOUND', 'body.splits[1].seller');
    });

    test('a live seller with a test key: 403 SANDBOX_MISMATCH', async () => {
      const live = (await createSeller(t, business.keys.secretLive)).id;
      await refused({ amount: 10_000, splits: [{ seller: live, bps: 1_000 }] }, 403, 'SANDBOX_MISMATCH');
    });

    test('a DISABLED seller: 409 SELLER_DISABLED', async () => {
      const disabled = (await createSeller(t, sk, { name: 'Closed stall' })).id;
      expectStatus(await patchSeller(t, sk, disabled, { status: 'DISABLED' }), 200);
      await refused(
        { amount: 10_000, splits: [{ seller: disabled, amount: 100 }] },
        409,
        'SELLER_DISABLED',
        'body.splits[0].seller',
      );
    });

    test('duplicates, bps out of range or over 10,000 in all, mixed kinds, too many lines: VALIDATION_ERROR', async () => {
      const [a, b] = sellers as [string, string];
      await refused(
        {
          amount: 10_000,
          splits: [
            { seller: a, amount: 1 },
            { seller: a, amount: 2 },
          ],
        },
        400,
        'VALIDATION_ERROR',
        'body.splits[1].seller',
      );
      await refused(
        { amount: 10_000, splits: [{ seller: a, bps: 10_001 }] },
        400,
        'VALIDATION_ERROR',
        'body.splits[0].bps',
      );
      await refused({ amount: 10_000, splits: [{ seller: a, bps: 0 }] }, 400, 'VALIDATION_ERROR', 'body.splits[0].bps');
      await refused(
        {
          amount: 10_000,
          feeBearer: 'PROPORTIONAL',
          splits: [
            { seller: a, bps: 6_000 },
            { seller: b, bps: 4_001 },
          ],
        },
        400,
        'VALIDATION_ERROR',
        'body.splits',
      );
      await refused(
        {
          amount: 10_000,
          splits: [
            { seller: a, amount: 100 },
            { seller: b, bps: 100 },
          ],
        },
        400,
        'VALIDATION_ERROR',
        'body.splits[1].bps',
      );
      await refused(
        { amountType: 'OPEN', splits: [{ seller: a, amount: 100 }] },
        400,
        'VALIDATION_ERROR',
        'body.splits[0].amount',
      );
      await refused({ amount: 10_000, splits: [] }, 400, 'VALIDATION_ERROR', 'body.splits');
      const eleven = Array.from({ length: 11 }, (_, i) => ({ seller: `SL-${String(i).padStart(16, '0')}`, bps: 1 }));
      await refused({ amount: 10_000, splits: eleven }, 400, 'VALIDATION_ERROR', 'body.splits');
      await refused({ amount: 10_000, feeBearer: 'PROPORTIONAL' }, 400, 'VALIDATION_ERROR', 'body.feeBearer');
      await refused({ amount: 10_000, splits: [{ seller: a }] }, 400, 'VALIDATION_ERROR');
      await refused({ amount: 10_000, splits: [{ seller: a, amount: -5 }] }, 400, 'VALIDATION_ERROR');
    });

    test('shares over what is left after the fees the payment bears: VALIDATION_ERROR naming the line', async () => {
      const [a, b] = sellers as [string, string];
      // 10,000 less the 1 % provider fee the business bears leaves 9,900.
      await refused(
        {
          amount: 10_000,
          splits: [
            { seller: a, amount: 5_000 },
            { seller: b, amount: 4_901 },
          ],
        },
        400,
        'VALIDATION_ERROR',
        'body.splits[1].amount',
      );
      await refused({ amount: 10_000, splits: [{ seller: a, bps: 10_000 }] }, 400, 'VALIDATION_ERROR', 'body.splits');
      // OPEN, the business bearing the fee: at most 10,000 - 100 bps.
      await refused(
        { amountType: 'OPEN', splits: [{ seller: a, bps: 9_901 }] },
        400,
        'VALIDATION_ERROR',
        'body.splits',
      );
      // The same sums fit when the fee is spread over the shares, or exactly at the limit.
      await createIntent(t, sk, {
        amount: 10_000,
        feeBearer: 'PROPORTIONAL',
        splits: [
          { seller: a, amount: 5_000 },
          { seller: b, amount: 5_000 },
        ],
      });
      await createIntent(t, sk, { amount: 10_000, splits: [{ seller: a, amount: 9_900 }] });
      await createIntent(t, sk, { amountType: 'OPEN', splits: [{ seller: a, bps: 9_900 }] });
    });
  });

  test('the worked example of docs/payments.md: three sellers, one payment, one partial refund, then the rest', async () => {
    const shop = await t.createBusiness({ name: 'Three stalls' });
    const key = shop.keys.secretTest;
    await setPlan(t, shop.id, { providerBps: 100, payerFee: 0, tofBps: 500, tteBps: 0 });
    const [a, b, c] = [
      (await createSeller(t, key, { name: 'Stall A' })).id,
      (await createSeller(t, key, { name: 'Stall B' })).id,
      (await createSeller(t, key, { name: 'Stall C' })).id,
    ] as [string, string, string];
    const created = await createIntent(t, key, {
      amount: 100_000,
      feeBearer: 'PROPORTIONAL',
      splits: [
        { seller: a, amount: 33_333 },
        { seller: b, amount: 25_001 },
        { seller: c, amount: 11_111 },
      ],
    });
    assert.deepEqual(created.splits, [
      { seller: a, amount: 33_333 },
      { seller: b, amount: 25_001 },
      { seller: c, amount: 11_111 },
    ]);
    assert.equal(created.feeBearer, 'PROPORTIONAL');
    const reference = created.referenceNumber as string;
    expectStatus(await act(t, key, reference, 'simulate', { payerPhone: PAYER }), 200);
    const shares = [
      { seller: a, gross: 33_333, fee: 333, net: 33_000 },
      { seller: b, gross: 25_001, fee: 250, net: 24_751 },
      { seller: c, gross: 11_111, fee: 111, net: 11_000 },
    ];
    assert.deepEqual((await getIntent(t, key, reference)).splits, shares);
    assert.deepEqual((await confirmedEvent(t, reference)).data.splits, shares);
    const payments = await t.request('GET', `${INTENTS}/${reference}/payments`, { key });
    expectStatus(payments, 200);
    const [payment] = payments.body.data.items;
    assert.deepEqual(
      payment.settlement.filter((line: { account: string }) => line.account !== 'tof' && line.account !== 'revenue'),
      [
        { account: 'merchant', amount: 30_249 },
        { account: 'seller', amount: 33_000, seller: a },
        { account: 'seller', amount: 24_751, seller: b },
        { account: 'seller', amount: 11_000, seller: c },
      ],
    );
    assert.deepEqual(
      [await sellerBalance(t, key, a), await sellerBalance(t, key, b), await sellerBalance(t, key, c)],
      [33_000, 24_751, 11_000],
    );
    assert.equal(await merchantBalance(t, key), 30_249, 'the business: 30,555 less its 306 of the fee');

    expectStatus(await act(t, key, reference, 'refund', { amount: 40_000 }), 200);
    // 40 % back: 400 of the fee, 13,200, 9,901 (9,900.4 rounded up) and 4,400 from the sellers.
    assert.deepEqual(
      [await sellerBalance(t, key, a), await sellerBalance(t, key, b), await sellerBalance(t, key, c)],
      [19_800, 14_850, 6_600],
    );
    assert.equal(await merchantBalance(t, key), 18_150, 'the business gives back 12,099');

    expectStatus(await act(t, key, reference, 'refund'), 200);
    assert.deepEqual(
      [await sellerBalance(t, key, a), await sellerBalance(t, key, b), await sellerBalance(t, key, c)],
      [0, 0, 0],
    );
    assert.equal(await merchantBalance(t, key), 0);
    await fold(t);
    await assertLedgerSound(t);
    await assertBalanceExplained(t, key);
  });

  test('BUSINESS bears the fee: each seller gets its gross exactly; an OPEN intent splits by bps of what is paid', async () => {
    const [a, b] = sellers as [string, string];
    const fixed = await createIntent(t, sk, {
      amount: 20_000,
      splits: [
        { seller: a, bps: 2_500 },
        { seller: b, bps: 3_333 },
      ],
    });
    const before = [await sellerBalance(t, sk, a), await sellerBalance(t, sk, b)];
    expectStatus(await act(t, sk, fixed.referenceNumber, 'simulate', { payerPhone: PAYER }), 200);
    assert.deepEqual((await getIntent(t, sk, fixed.referenceNumber)).splits, [
      { seller: a, gross: 5_000, fee: 0, net: 5_000 },
      { seller: b, gross: 6_666, fee: 0, net: 6_666 },
    ]);
    assert.deepEqual(
      [await sellerBalance(t, sk, a), await sellerBalance(t, sk, b)],
      [before[0]! + 5_000, before[1]! + 6_666],
    );

    const open = await createIntent(t, sk, { amountType: 'OPEN', splits: [{ seller: a, bps: 9_900 }] });
    assert.equal(open.feeBearer, 'BUSINESS');
    expectStatus(await act(t, sk, open.referenceNumber, 'simulate', { payerPhone: PAYER, amount: 777 }), 200);
    // 1 % of 777 is 7.77, rounded half up to 8; 99 % of 777 rounded down is 769: 777 - 8 - 769 = 0 left.
    assert.deepEqual((await getIntent(t, sk, open.referenceNumber)).splits, [
      { seller: a, gross: 769, fee: 0, net: 769 },
    ]);
    await fold(t);
    await assertLedgerSound(t);
    await assertBalanceExplained(t, sk);
  });

  test('a refund is never refused because a seller withdrew: its balance goes below zero, ledger check passes', async () => {
    const shop = await t.createBusiness({ name: 'Withdrawn stall' });
    const key = shop.keys.secretTest;
    const seller = (await createSeller(t, key)).id;
    const intent = await createIntent(t, key, { amount: 10_000, splits: [{ seller, amount: 6_000 }] });
    expectStatus(await act(t, key, intent.referenceNumber, 'simulate', { payerPhone: PAYER }), 200);
    // The seller's share leaves its account (its payouts are issue 52's later slice).
    await post(t.runtime.db, {
      environment: 'test',
      kind: 'payout',
      reference: 'withdrawn',
      // Every movement of a seller's account is a balance transaction of the seller (decision 082).
      businessId: shop.id,
      balance: {
        type: 'payout',
        amount: -6_000,
        source: { reference: 'withdrawn', kind: 'payout' },
        detail: { label: 'Withdrawn by hand' },
      },
      lines: [
        { account: { kind: 'seller', ownerId: seller }, amount: -6_000 },
        { account: { kind: 'funding' }, amount: 6_000 },
      ],
    });
    assert.equal(await sellerBalance(t, key, seller), 0);
    expectStatus(await act(t, key, intent.referenceNumber, 'refund', { amount: 5_000 }), 200);
    assert.equal(await sellerBalance(t, key, seller), -3_000);
    await fold(t);
    assert.equal(await sellerBalance(t, key, seller), -3_000, 'the fold keeps it below zero');
    await assertLedgerSound(t);
    // The next split pays it back first.
    const next = await createIntent(t, key, { amount: 10_000, splits: [{ seller, amount: 5_000 }] });
    expectStatus(await act(t, key, next.referenceNumber, 'simulate', { payerPhone: PAYER }), 200);
    assert.equal(await sellerBalance(t, key, seller), 2_000);
  });

  test('every channel splits: the hosted checkout (WALLET_PIN) and a payment request the payer approves (WALLET_REQUEST)', async () => {
    const [a, b] = sellers as [string, string];
    const before = [await sellerBalance(t, sk, a), await sellerBalance(t, sk, b)];
    const checkout = await createIntent(t, sk, { amount: 8_000, splits: [{ seller: a, amount: 1_000 }] });
    expectStatus(await pay(t, checkout.shortCode, RICH), 200);
    const asked = await createIntent(t, sk, { amount: 6_000, splits: [{ seller: b, bps: 5_000 }] });
    await createRequest(t, sk, asked.referenceNumber, { phone: '+22220000021' });
    assert.ok((await endDueIn(t, 3)) >= 1, 'the sandbox phone approved');
    assert.equal((await getIntent(t, sk, asked.referenceNumber)).status, 'PAID');
    assert.deepEqual(
      [await sellerBalance(t, sk, a), await sellerBalance(t, sk, b)],
      [before[0]! + 1_000, before[1]! + 3_000],
    );
    assert.deepEqual((await confirmedEvent(t, asked.referenceNumber)).data.splits, [
      { seller: b, gross: 3_000, fee: 0, net: 3_000 },
    ]);
  });
});
