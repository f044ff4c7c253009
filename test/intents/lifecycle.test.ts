import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { expectError, expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { eventNames, eventsOf } from '../support/read-api.js';
import { act, createIntent, getIntent, INTENTS } from './support.js';

const ZERO = { provider_ttc: 0, payer_ttc: 0, tof: 0, tte: 0, total_revenue: 0 };

describe('intent state machine (api.md 3.1, decisions "Payment intents", "Refunds", "Commission")', () => {
  let t: TestApp;
  let business: TestBusiness;
  let sk: string;
  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    business = await t.createBusiness();
    sk = business.keys.secretTest;
  });
  afterAll(() => t.close());

  const get = (reference: string, key = sk) => getIntent(t, key, reference);
  const storedCode = async (reference: string) =>
    (
      await t.runtime.db
        .selectFrom('payment_intents')
        .select('payment_code')
        .where('reference_number', '=', reference)
        .executeTakeFirstOrThrow()
    ).payment_code;

  test('GET answers every field of api.md 2.2 for a pending intent; payment null, refunds []', async () => {
    const created = await createIntent(t, sk, { amount: 900, label: 'Tea' });
    const intent = await get(created.referenceNumber, business.keys.publishableTest);
    assert.deepEqual(Object.keys(intent).sort(), [
      'amount',
      'amountType',
      'cancelUrl',
      'code',
      'codeExpiresAt',
      'createdAt',
      'currency',
      'expiresAt',
      'label',
      'metadata',
      'payUrl',
      'payment',
      'referenceNumber',
      'refunds',
      'sandbox',
      'shortCode',
      'status',
      'successUrl',
      'suggestedAmount',
      'totalAmountRefunded',
      'type',
      'updatedAt',
    ]);
    assert.equal(intent.type, 'API');
    assert.equal(intent.payment, null);
    assert.deepEqual(intent.refunds, []);
    assert.equal(intent.totalAmountRefunded, 0);
    assert.equal(intent.code, created.code);
    assert.equal(intent.updatedAt, intent.createdAt);
  });

  test('PENDING → PAID (simulate): payment.confirmed with paid_at, masked payer_phone and commission', async () => {
    const fees = await t.admin('PUT', `/businesses/${business.id}/fees`, {
      providerBps: 150,
      payerFee: 200,
      tofBps: 500,
      tteBps: 100,
    });
    expectStatus(fees, 200);
    try {
      const wallet = await t.admin('POST', '/wallets', {
        phone: '+22236123456',
        pin: '4321',
        balance: 500_000,
        environment: 'test',
      });
      expectStatus(wallet, 201);
      const created = await createIntent(t, sk, { amount: 123_457, metadata: { order: '7' } });
      const response = await act(t, sk, created.referenceNumber, 'simulate', { payerPhone: '+22236123456' });
      expectStatus(response, 200);
      const paid = response.body.data;
      assert.equal(paid.status, 'PAID');
      assert.equal(paid.code, null, 'the code is released on payment');
      assert.equal(paid.codeExpiresAt, null);
      assert.equal(await storedCode(created.referenceNumber), null);
      assert.deepEqual(Object.keys(paid.payment).sort(), ['amountPaid', 'method', 'paidAt']);
      assert.equal(paid.payment.amountPaid, 123_457);
      assert.equal(paid.payment.method, 'WALLET');
      assert.deepEqual(await get(created.referenceNumber), paid);

      const events = await eventsOf(t, sk, created.referenceNumber);
      assert.deepEqual(
        events.map((e) => e.event),
        ['payment.created', 'payment.confirmed'],
      );
      const confirmed = events[1]!;
      assert.equal(confirmed.created_at, paid.payment.paidAt);
      assert.deepEqual(confirmed.data, {
        reference_number: created.referenceNumber,
        short_code: created.shortCode,
        amount: 123_457,
        currency: 'MRU',
        status: 'PAID',
        paid_at: paid.payment.paidAt,
        payer_phone: '+222******56',
        metadata: { order: '7' },
        // 1.5 % of 123,457 = 1851.855 → 1852; payer fee 200; TOF 5 % inside 2052 → 97.71 → 98;
        // TTE 1 % inside 2052 → 20.32 → 20; revenue 2052 − 98 − 20.
        commission: { provider_ttc: 1852, payer_ttc: 200, tof: 98, tte: 20, total_revenue: 1934 },
      });
    } finally {
      await t.admin('PUT', `/businesses/${business.id}/fees`, {
        providerBps: 100,
        payerFee: 0,
        tofBps: 500,
        tteBps: 0,
      });
    }
  });

  test('the default fee plan: 1 % provider fee, no payer fee, TOF 5 % inside the fee', async () => {
    const created = await createIntent(t, sk, { amount: 10_000 });
    expectStatus(await act(t, sk, created.referenceNumber, 'simulate'), 200);
    const [, confirmed] = await eventsOf(t, sk, created.referenceNumber);
    // 1 % of 10,000 = 100; TOF inside 100 at 5 % = 4.76 → 5.
    assert.deepEqual(confirmed!.data.commission, {
      provider_ttc: 100,
      payer_ttc: 0,
      tof: 5,
      tte: 0,
      total_revenue: 95,
    });
    assert.equal(confirmed!.data.payer_phone, '+222******01', 'the default sandbox payer, masked');
  });

  test('OPEN intent: simulate needs an amount; the paid amount is in payment.amountPaid and the event', async () => {
    const created = await createIntent(t, sk, { amountType: 'OPEN' });
    expectError(await act(t, sk, created.referenceNumber, 'simulate'), 400, 'VALIDATION_ERROR');
    expectError(await act(t, sk, created.referenceNumber, 'simulate', { amount: 0 }), 400, 'AMOUNT_OUT_OF_RANGE');
    const response = await act(t, sk, created.referenceNumber, 'simulate', { amount: 3210 });
    expectStatus(response, 200);
    assert.equal(response.body.data.amount, null);
    assert.equal(response.body.data.payment.amountPaid, 3210);
    const [, confirmed] = await eventsOf(t, sk, created.referenceNumber);
    assert.equal(confirmed!.data.amount, 3210);
  });

  test('FIXED intent: simulate with another amount is refused and changes nothing', async () => {
    const created = await createIntent(t, sk, { amount: 500 });
    expectError(await act(t, sk, created.referenceNumber, 'simulate', { amount: 400 }), 400, 'VALIDATION_ERROR');
    expectError(
      await act(t, sk, created.referenceNumber, 'simulate', { payerPhone: '0612345678' }),
      400,
      'VALIDATION_ERROR',
    );
    assert.equal((await get(created.referenceNumber)).status, 'PENDING');
    assert.deepEqual(await eventNames(t, sk, created.referenceNumber), ['payment.created']);
  });

  test('PENDING → FAILED (simulated failure): payment.failed, still payable, then FAILED → PAID', async () => {
    const created = await createIntent(t, sk, { amount: 800 });
    const failed = await act(t, sk, created.referenceNumber, 'simulate', { outcome: 'failure' });
    expectStatus(failed, 200);
    assert.equal(failed.body.data.status, 'FAILED');
    assert.equal(failed.body.data.code, created.code, 'a FAILED intent keeps its code: the customer may retry');
    assert.equal(failed.body.data.payment, null);
    assert.deepEqual(await get(created.referenceNumber), failed.body.data, 'the answer is the stored intent');
    const [, failure] = await eventsOf(t, sk, created.referenceNumber);
    assert.equal(failure!.event, 'payment.failed');
    assert.deepEqual(failure!.data, {
      reference_number: created.referenceNumber,
      short_code: created.shortCode,
      amount: 800,
      currency: 'MRU',
      status: 'FAILED',
      paid_at: null,
      payer_phone: null,
      metadata: {},
      commission: ZERO,
    });
    expectError(await act(t, sk, created.referenceNumber, 'cancel'), 400, 'INTENT_CANCEL_INVALID_STATUS');
    const paid = await act(t, sk, created.referenceNumber, 'simulate');
    expectStatus(paid, 200);
    assert.equal(paid.body.data.status, 'PAID');
    assert.deepEqual(await eventNames(t, sk, created.referenceNumber), [
      'payment.created',
      'payment.failed',
      'payment.confirmed',
    ]);
  });

  test('the reserved sandbox amount 1313 always fails, FIXED or OPEN', async () => {
    const fixed = await createIntent(t, sk, { amount: 1313 });
    const response = await act(t, sk, fixed.referenceNumber, 'simulate', { outcome: 'success' });
    expectStatus(response, 200);
    assert.equal(response.body.data.status, 'FAILED');
    const open = await createIntent(t, sk, { amountType: 'OPEN' });
    const openResponse = await act(t, sk, open.referenceNumber, 'simulate', { amount: 1313 });
    assert.equal(openResponse.body.data.status, 'FAILED');
    const [, failure] = await eventsOf(t, sk, open.referenceNumber);
    assert.equal(failure!.event, 'payment.failed');
    assert.equal(failure!.data.amount, 1313, 'an OPEN failure carries the amount tried');
  });

  test('PENDING → CANCELLED (cancel): payment.cancelled, code released; cancel again is refused', async () => {
    const created = await createIntent(t, sk, { amount: 600 });
    const response = await act(t, sk, created.referenceNumber, 'cancel');
    expectStatus(response, 200);
    assert.equal(response.body.data.status, 'CANCELLED');
    assert.equal(response.body.data.code, null);
    assert.deepEqual(await get(created.referenceNumber), response.body.data, 'the answer is the stored intent');
    assert.equal(await storedCode(created.referenceNumber), null);
    const [, cancelled] = await eventsOf(t, sk, created.referenceNumber);
    assert.equal(cancelled!.event, 'payment.cancelled');
    assert.deepEqual(cancelled!.data, {
      reference_number: created.referenceNumber,
      short_code: created.shortCode,
      amount: 600,
      currency: 'MRU',
      status: 'CANCELLED',
      paid_at: null,
      payer_phone: null,
      metadata: {},
      commission: ZERO,
    });
    expectError(await act(t, sk, created.referenceNumber, 'cancel'), 400, 'INTENT_CANCEL_INVALID_STATUS');
    expectError(await act(t, sk, created.referenceNumber, 'simulate'), 400, 'INTENT_NOT_PENDING');
    expectError(await act(t, sk, created.referenceNumber, 'refund'), 400, 'INTENT_REFUND_INVALID_STATUS');
    expectError(await act(t, sk, created.referenceNumber, 'simulate-expiry'), 400, 'INTENT_NOT_PENDING');
    expectError(await act(t, sk, created.referenceNumber, 'cancel', { reason: 'x' }), 400, 'VALIDATION_ERROR');
  });

  test('PENDING → CANCELLED (simulate-expiry): payment.expired, code released', async () => {
    const created = await createIntent(t, sk, { amount: 700 });
    const response = await act(t, sk, created.referenceNumber, 'simulate-expiry');
    expectStatus(response, 200);
    assert.equal(response.body.data.status, 'CANCELLED');
    assert.equal(response.body.data.code, null);
    const [, expired] = await eventsOf(t, sk, created.referenceNumber);
    assert.equal(expired!.event, 'payment.expired');
    assert.equal(expired!.data.status, 'CANCELLED');
    assert.deepEqual(expired!.data.commission, ZERO);
    expectError(await act(t, sk, created.referenceNumber, 'simulate'), 400, 'INTENT_NOT_PENDING');
  });

  test('FAILED → CANCELLED by expiry', async () => {
    const created = await createIntent(t, sk, { amount: 1313 });
    await act(t, sk, created.referenceNumber, 'simulate');
    const response = await act(t, sk, created.referenceNumber, 'simulate-expiry');
    expectStatus(response, 200);
    assert.equal(response.body.data.status, 'CANCELLED');
    assert.deepEqual(await eventNames(t, sk, created.referenceNumber), [
      'payment.created',
      'payment.failed',
      'payment.expired',
    ]);
  });

  test('PAID → REFUNDED: partial then full refunds, records, totals, and the refunded commission', async () => {
    await t.admin('PUT', `/businesses/${business.id}/fees`, {
      providerBps: 150,
      payerFee: 200,
      tofBps: 500,
      tteBps: 100,
    });
    let created;
    try {
      created = await createIntent(t, sk, { amount: 123_457 });
      await act(t, sk, created.referenceNumber, 'simulate');
    } finally {
      await t.admin('PUT', `/businesses/${business.id}/fees`, {
        providerBps: 100,
        payerFee: 0,
        tofBps: 500,
        tteBps: 0,
      });
    }
    const ref = created.referenceNumber;
    expectError(await act(t, sk, ref, 'refund', { amount: 0 }), 400, 'REFUND_AMOUNT_INVALID');
    expectError(await act(t, sk, ref, 'refund', { amount: -5 }), 400, 'REFUND_AMOUNT_INVALID');
    expectError(await act(t, sk, ref, 'refund', { amount: 123_458 }), 400, 'REFUND_AMOUNT_INVALID');
    expectError(await act(t, sk, ref, 'refund', { amount: 10.5 }), 400, 'VALIDATION_ERROR');
    expectError(await act(t, sk, ref, 'refund', { reason: 'r'.repeat(501) }), 400, 'VALIDATION_ERROR');

    const first = await act(t, sk, ref, 'refund', { amount: 50_000, reason: 'damaged' });
    expectStatus(first, 200);
    assert.equal(first.body.data.status, 'REFUNDED');
    assert.equal(first.body.data.totalAmountRefunded, 50_000);
    assert.equal(first.body.data.refunds.length, 1);
    const refund = first.body.data.refunds[0];
    assert.deepEqual(Object.keys(refund).sort(), ['amount', 'createdAt', 'id', 'reason', 'status']);
    assert.match(refund.id, /^RF-\d+$/);
    assert.equal(refund.amount, 50_000);
    assert.equal(refund.reason, 'damaged');
    assert.equal(refund.status, 'SUCCEEDED');

    expectError(await act(t, sk, ref, 'refund', { amount: 73_458 }), 400, 'REFUND_AMOUNT_INVALID');
    const rest = await act(t, sk, ref, 'refund');
    expectStatus(rest, 200);
    assert.equal(rest.body.data.totalAmountRefunded, 123_457);
    assert.deepEqual(
      rest.body.data.refunds.map((r: { amount: number }) => r.amount),
      [50_000, 73_457],
    );
    assert.equal(rest.body.data.refunds[1].reason, null);
    expectError(await act(t, sk, ref, 'refund', { amount: 1 }), 400, 'INTENT_REFUND_INVALID_STATUS');

    const events = (await eventsOf(t, sk, ref)).filter((e) => e.event === 'payment.refunded');
    assert.equal(events.length, 2);
    assert.deepEqual(events[0]!.data, {
      reference_number: ref,
      short_code: created.shortCode,
      amount: 123_457,
      currency: 'MRU',
      status: 'REFUNDED',
      paid_at: first.body.data.payment.paidAt,
      payer_phone: '+222******01',
      metadata: {},
      // The provider fee (1852) back pro rata, rounded down: 1852 × 50000 / 123457 = 750.06 → 750.
      // The payment credited fees of 2052 (payer fee 200 included): TOF 98, TTE 20. Their share of
      // 750: 118 × 750 / 2052 = 43.1 → 43 taxes, of which TOF 98 × 43 / 118 = 35.7 → 36, TTE 7.
      // The payer fee is not returned.
      commission: { provider_ttc: 750, payer_ttc: 0, tof: 36, tte: 7, total_revenue: 707 },
      refund_id: refund.id,
      amount_refunded: 50_000,
      total_amount_refunded: 50_000,
    });
    // The last refund gives back the rest of the fee, so the parts add up to the whole: 1852 − 750.
    // Taxes on 1852 of 2052: 118 × 1852 / 2052 = 106.499 → 106, TOF 98 × 106 / 118 = 88.03 → 88,
    // TTE 18; less what the first refund took back (36, 7).
    assert.deepEqual(events[1]!.data.commission, {
      provider_ttc: 1102,
      payer_ttc: 0,
      tof: 52,
      tte: 11,
      total_revenue: 1039,
    });
    assert.equal(events[1]!.data.total_amount_refunded, 123_457);
  });

  test('refund is refused for PENDING and FAILED intents', async () => {
    const pending = await createIntent(t, sk, { amount: 100 });
    const response = await act(t, sk, pending.referenceNumber, 'refund');
    expectError(response, 400, 'INTENT_REFUND_INVALID_STATUS');
    assert.match(response.body.error.message, /PAID/);
    const failed = await createIntent(t, sk, { amount: 1313 });
    await act(t, sk, failed.referenceNumber, 'simulate');
    expectError(await act(t, sk, failed.referenceNumber, 'refund'), 400, 'INTENT_REFUND_INVALID_STATUS');
  });

  test('paid and refunded intents refuse cancel, simulate and simulate-expiry', async () => {
    const created = await createIntent(t, sk, { amount: 100 });
    await act(t, sk, created.referenceNumber, 'simulate');
    expectError(await act(t, sk, created.referenceNumber, 'cancel'), 400, 'INTENT_CANCEL_INVALID_STATUS');
    expectError(await act(t, sk, created.referenceNumber, 'simulate'), 400, 'INTENT_NOT_PENDING');
    expectError(await act(t, sk, created.referenceNumber, 'simulate-expiry'), 400, 'INTENT_NOT_PENDING');
    await act(t, sk, created.referenceNumber, 'refund', { amount: 50 });
    expectError(await act(t, sk, created.referenceNumber, 'cancel'), 400, 'INTENT_CANCEL_INVALID_STATUS');
    expectError(await act(t, sk, created.referenceNumber, 'simulate'), 400, 'INTENT_NOT_PENDING');
    assert.deepEqual(await eventNames(t, sk, created.referenceNumber), [
      'payment.created',
      'payment.confirmed',
      'payment.refunded',
    ]);
  });

  test('an intent past expiresAt cannot be paid even before the expiry job runs', async () => {
    const created = await createIntent(t, sk, { amount: 100 });
    await t.runtime.db
      .updateTable('payment_intents')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('reference_number', '=', created.referenceNumber)
      .execute();
    expectError(await act(t, sk, created.referenceNumber, 'simulate'), 400, 'INTENT_NOT_PENDING');
  });

  test('simulate and simulate-expiry are sandbox only: live keys get SANDBOX_ONLY', async () => {
    const live = await createIntent(t, business.keys.secretLive, { amount: 100 });
    expectError(await act(t, business.keys.secretLive, live.referenceNumber, 'simulate'), 403, 'SANDBOX_ONLY');
    expectError(await act(t, business.keys.secretLive, live.referenceNumber, 'simulate-expiry'), 403, 'SANDBOX_ONLY');
    assert.equal((await get(live.referenceNumber, business.keys.secretLive)).status, 'PENDING');
  });

  test('a live intent can be cancelled with a live key', async () => {
    const live = await createIntent(t, business.keys.secretLive, { amount: 100 });
    const response = await act(t, business.keys.secretLive, live.referenceNumber, 'cancel');
    expectStatus(response, 200);
    assert.equal(response.body.data.sandbox, false);
  });

  test('SANDBOX_MISMATCH: a test key on a live intent of its own business, and the reverse', async () => {
    const live = await createIntent(t, business.keys.secretLive, { amount: 100 });
    const sandbox = await createIntent(t, sk, { amount: 100 });
    for (const [key, ref] of [
      [sk, live.referenceNumber],
      [business.keys.publishableTest, live.referenceNumber],
      [business.keys.secretLive, sandbox.referenceNumber],
      [business.keys.publishableLive, sandbox.referenceNumber],
    ] as const) {
      expectError(await t.request('GET', `${INTENTS}/${ref}`, { key }), 403, 'SANDBOX_MISMATCH');
    }
    expectError(await act(t, sk, live.referenceNumber, 'cancel'), 403, 'SANDBOX_MISMATCH');
    expectError(await act(t, business.keys.secretLive, sandbox.referenceNumber, 'cancel'), 403, 'SANDBOX_MISMATCH');
    expectError(await act(t, business.keys.secretLive, sandbox.referenceNumber, 'refund'), 403, 'SANDBOX_MISMATCH');
    expectError(await act(t, sk, live.referenceNumber, 'simulate'), 403, 'SANDBOX_MISMATCH');
    assert.equal((await get(live.referenceNumber, business.keys.secretLive)).status, 'PENDING');
    assert.equal((await get(sandbox.referenceNumber)).status, 'PENDING');
  });

  test("INTENT_NOT_FOUND: unknown references and another business's intents, on every endpoint", async () => {
    const other = await t.createBusiness({ name: 'Other' });
    const theirs = await createIntent(t, other.keys.secretTest, { amount: 100 });
    for (const ref of ['PI-000000000000', theirs.referenceNumber, 'nonsense', 'x'.repeat(64)]) {
      expectError(await t.request('GET', `${INTENTS}/${ref}`, { key: sk }), 404, 'INTENT_NOT_FOUND');
      for (const action of ['cancel', 'refund', 'simulate', 'simulate-expiry'] as const) {
        expectError(await act(t, sk, ref, action), 404, 'INTENT_NOT_FOUND');
      }
    }
    expectError(await t.request('GET', `${INTENTS}/${'x'.repeat(65)}`, { key: sk }), 400, 'VALIDATION_ERROR');
    const theirsNow = await get(theirs.referenceNumber, other.keys.secretTest);
    assert.equal(theirsNow.status, 'PENDING');
  });

  test('actions need a secret key with intents:write and an idempotency key', async () => {
    const created = await createIntent(t, sk, { amount: 100 });
    for (const action of ['cancel', 'refund', 'simulate', 'simulate-expiry']) {
      const path = `${INTENTS}/${created.referenceNumber}/${action}`;
      expectError(
        await t.request('POST', path, { key: business.keys.publishableTest, idempotencyKey: true }),
        403,
        'SECRET_KEY_REQUIRED',
      );
      expectError(await t.request('POST', path, { key: sk }), 400, 'IDEMPOTENCY_KEY_REQUIRED');
    }
    const readOnly = await t.admin('POST', '/keys', {
      businessId: business.id,
      kind: 'secret',
      environment: 'test',
      scopes: ['intents:read'],
    });
    expectError(await act(t, readOnly.body.data.key, created.referenceNumber, 'cancel'), 403, 'SCOPE_REQUIRED');
    const writeOnly = await t.admin('POST', '/keys', {
      businessId: business.id,
      kind: 'secret',
      environment: 'test',
      scopes: ['intents:write'],
    });
    expectError(
      await t.request('GET', `${INTENTS}/${created.referenceNumber}`, { key: writeOnly.body.data.key }),
      403,
      'SCOPE_REQUIRED',
    );
    assert.equal((await get(created.referenceNumber)).status, 'PENDING');
  });

  test('a replayed cancel answers the first response and writes no second event', async () => {
    const created = await createIntent(t, sk, { amount: 100 });
    const path = `${INTENTS}/${created.referenceNumber}/cancel`;
    const first = await t.request('POST', path, { key: sk, idempotencyKey: 'cancel-once' });
    const second = await t.request('POST', path, { key: sk, idempotencyKey: 'cancel-once' });
    expectStatus(first, 200);
    expectStatus(second, 200);
    assert.equal(second.text, first.text);
    assert.deepEqual(await eventNames(t, sk, created.referenceNumber), ['payment.created', 'payment.cancelled']);
  });
});
