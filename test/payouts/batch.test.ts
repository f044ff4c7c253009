import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { SANDBOX_FAILING_PAYOUT_PHONE } from '../../src/modules/sandbox/sandbox.js';
import { expectError, expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { RICH } from '../orders/support.js';
import { assertBalanceExplained, assertLedgerSound, fold, setPlan } from '../payments/support.js';
import { earn, newPhone, PAYOUTS, payoutTo, sendPayouts } from './support.js';

/** Issue 35: many payouts in one request, all or nothing. */
describe('payout batches', () => {
  let t: TestApp;
  let business: TestBusiness;
  let sk: string;
  const balance = async () => (await t.request('GET', '/api/v1/dev/balance', { key: sk })).body.data.available;
  const batch = (items: unknown[], idempotencyKey: string | true = true) =>
    t.request('POST', `${PAYOUTS}/batches`, { key: sk, body: { items }, idempotencyKey });

  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    business = await t.createBusiness({ name: 'Batch shop' });
    sk = business.keys.secretTest;
    await setPlan(t, business.id, { providerBps: 0, payerFee: 0, tofBps: 500, tteBps: 0 });
    expectStatus(await t.admin('PUT', `/businesses/${business.id}/fees`, { payoutFeeFlat: 10 }), 200);
    await earn(t, sk, 1_000_000);
  });
  afterAll(() => t.close());

  test('a batch reserves its total at once, and each item becomes its own payout', async () => {
    const before = await balance();
    const twice = newPhone();
    const items = [
      payoutTo(newPhone(), 1_000, { description: 'Salary' }),
      payoutTo(twice, 2_000),
      payoutTo(twice, 3_000),
      payoutTo(SANDBOX_FAILING_PAYOUT_PHONE, 4_000),
    ];
    const created = await batch(items);
    expectStatus(created, 201);
    const data = created.body.data;
    assert.match(data.id, /^pob_/);
    assert.deepEqual(
      [data.itemCount, data.totalAmount, data.totalFee, data.counts],
      [4, 10_000, 40, { PENDING: 4, PAID: 0, FAILED: 0, CANCELLED: 0 }],
    );
    assert.deepEqual(
      data.payouts.map((payout: { amount: number; batchId: string; status: string }) => [
        payout.amount,
        payout.batchId,
        payout.status,
      ]),
      items.map((item) => [item.amount, data.id, 'PENDING']),
    );
    assert.equal(await balance(), before - 10_040);

    assert.equal(await sendPayouts(t), 4);
    const after = await t.request('GET', `${PAYOUTS}/batches/${data.id}`, { key: sk });
    expectStatus(after, 200);
    assert.deepEqual(after.body.data.counts, { PENDING: 0, PAID: 3, FAILED: 1, CANCELLED: 0 });
    assert.equal(await balance(), before - 10_040 + 4_010, 'the failed item came back');
    const listed = await t.request('GET', `${PAYOUTS}?batch=${data.id}`, { key: sk });
    assert.deepEqual(
      listed.body.data.items.map((payout: { referenceNumber: string }) => payout.referenceNumber),
      data.payouts.map((payout: { referenceNumber: string }) => payout.referenceNumber),
      'a batch lists in item order',
    );
    await fold(t);
    await assertLedgerSound(t);
    await assertBalanceExplained(t, sk);
  });

  test('every invalid item is named and nothing is created', async () => {
    const before = await balance();
    const payoutsBefore = (await t.request('GET', PAYOUTS, { key: sk })).body.data.total;
    const refused = await batch([
      payoutTo(RICH.phone, 100),
      payoutTo('20000001', 100),
      payoutTo(RICH.phone, 0),
      payoutTo(RICH.phone, 100, { metadata: { a: 'x'.repeat(501) } }),
    ]);
    expectError(refused, 400, 'VALIDATION_ERROR');
    const fields = refused.body.error.details.map((detail: { field: string }) => detail.field);
    assert.ok(
      fields.some((field: string) => field.includes('items/1') || field.includes('items.1')),
      fields.join(),
    );
    // The schema names the phone; the limits (amount, metadata) are named once the shape is right.
    const limits = await batch([
      payoutTo(RICH.phone, 100),
      payoutTo(RICH.phone, 0),
      payoutTo(RICH.phone, 100, { metadata: { a: 'x'.repeat(501) } }),
    ]);
    expectError(limits, 400, 'VALIDATION_ERROR');
    assert.deepEqual(
      limits.body.error.details.map((detail: { field: string }) => detail.field),
      ['body.items.1.amount', 'body.items.2.metadata.a'],
    );
    assert.match(limits.body.error.message, /items\[1\], items\[2\]/);
    expectError(await batch([]), 400, 'VALIDATION_ERROR');
    const tooMany = Array.from({ length: 1001 }, () => payoutTo(RICH.phone, 1));
    expectError(await batch(tooMany), 400, 'VALIDATION_ERROR');
    assert.equal(await balance(), before);
    assert.equal((await t.request('GET', PAYOUTS, { key: sk })).body.data.total, payoutsBefore);
  });

  test('a batch the balance cannot cover is 402 and reserves nothing', async () => {
    const before = await balance();
    const refused = await batch([payoutTo(RICH.phone, before - 100), payoutTo(RICH.phone, 100)]);
    expectError(refused, 402, 'INSUFFICIENT_FUNDS');
    assert.equal(await balance(), before);
  });

  test('1,000 items in one request, one idempotency key', async () => {
    const before = await balance();
    const items = Array.from({ length: 1000 }, (_, i) => payoutTo(`+2224${String(i).padStart(7, '0')}`, 100 + i));
    const total = items.reduce((sum, item) => sum + item.amount + 10, 0);
    const first = await batch(items, 'batch-of-1000');
    expectStatus(first, 201);
    assert.equal(first.body.data.payouts.length, 1000);
    const replay = await batch(items, 'batch-of-1000');
    expectStatus(replay, 201);
    assert.equal(replay.body.data.id, first.body.data.id);
    assert.equal(await balance(), before - total);
    while ((await sendPayouts(t)) > 0);
    const done = await t.request('GET', `${PAYOUTS}/batches/${first.body.data.id}`, { key: sk });
    assert.deepEqual(done.body.data.counts, { PENDING: 0, PAID: 1000, FAILED: 0, CANCELLED: 0 });
    await fold(t);
    await assertLedgerSound(t);
    await assertBalanceExplained(t, sk);
  });

  test('a batch settles the transactions before it, as a whole', async () => {
    const shop = await t.createBusiness({ name: 'Batch settling shop' });
    const key = shop.keys.secretTest;
    const earned = await earn(t, key, 50_000);
    const created = await t.request('POST', `${PAYOUTS}/batch`, {
      key,
      idempotencyKey: true,
      body: { items: [payoutTo(RICH.phone, 100), payoutTo(RICH.phone, 200)] },
    });
    expectStatus(created, 201);
    for (const payout of created.body.data.payouts) {
      const settled = await t.request('GET', `${PAYOUTS}/${payout.referenceNumber}/transactions`, { key });
      assert.deepEqual(
        settled.body.data.items.map((item: { source: { reference: string } }) => item.source.reference),
        [earned],
      );
    }
    expectError(
      await t.request('GET', `${PAYOUTS}/batches/${created.body.data.id}`, { key: shop.keys.secretLive }),
      403,
      'SANDBOX_MISMATCH',
    );
    expectError(
      await t.request('GET', `${PAYOUTS}/batches/${created.body.data.id}`, { key: sk }),
      404,
      'PAYOUT_BATCH_NOT_FOUND',
    );
    await sendPayouts(t);
  });
});
