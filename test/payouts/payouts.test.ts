import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { SANDBOX_FAILING_PAYOUT_PHONE } from '../../src/modules/sandbox/sandbox.js';
import { expectError, expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { eventNames, eventsOf } from '../support/read-api.js';
import { LOCKED, RICH, walletBalance } from '../orders/support.js';
import {
  allBalanceTransactions,
  assertBalanceExplained,
  assertLedgerSound,
  fold,
  setPlan,
} from '../payments/support.js';
import { createPayout, earn, getPayout, newPhone, PAYOUTS, payoutTo, sendPayouts } from './support.js';

/** Issue 35: money out, one payout at a time. */
describe('payouts', () => {
  let t: TestApp;
  let business: TestBusiness;
  let sk: string;
  const balance = async (key = sk) => (await t.request('GET', '/api/v1/dev/balance', { key })).body.data.available;

  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    business = await t.createBusiness({ name: 'Payout shop' });
    sk = business.keys.secretTest;
    // A flat fee of 1.00 MRU plus 1 %; payments keep 2.5 %.
    await setPlan(t, business.id, { providerBps: 250, payerFee: 0, tofBps: 500, tteBps: 0 });
    expectStatus(
      await t.admin('PUT', `/businesses/${business.id}/fees`, { payoutFeeFlat: 100, payoutFeeBps: 100 }),
      200,
    );
    await earn(t, sk, 100_000);
  });
  afterAll(() => t.close());

  test('a payout reserves its amount and fee at once, and the worker pays it to a new sandbox wallet', async () => {
    const before = await balance();
    const phone = newPhone();
    const created = await createPayout(
      t,
      sk,
      payoutTo(phone, 10_000, { description: 'Weekly', metadata: { week: '48' } }),
    );
    expectStatus(created, 201);
    const payout = created.body.data;
    assert.match(payout.referenceNumber, /^PO-[0-9]{16}$/);
    assert.deepEqual(
      {
        status: payout.status,
        amount: payout.amount,
        fee: payout.fee,
        totalDebited: payout.totalDebited,
        destination: payout.destination,
        description: payout.description,
        metadata: payout.metadata,
        failureCode: payout.failureCode,
        batchId: payout.batchId,
        sandbox: payout.sandbox,
      },
      {
        status: 'PENDING',
        amount: 10_000,
        fee: 200,
        totalDebited: 10_200,
        destination: { type: 'WALLET', phone },
        description: 'Weekly',
        metadata: { week: '48' },
        failureCode: null,
        batchId: null,
        sandbox: true,
      },
    );
    assert.equal(await balance(), before - 10_200, 'reserved in the same transaction');
    const own = await allBalanceTransactions(t, sk, `&source=${payout.referenceNumber}`);
    assert.deepEqual(own.map((item) => [item.type, item.amount, item.fee, item.net, item.source.kind]).sort(), [
      ['payout', -10_000, 0, -10_000, 'payout'],
      ['payout_fee', -200, 0, -200, 'payout'],
    ]);

    assert.equal(await sendPayouts(t), 1);
    const paid = await getPayout(t, sk, payout.referenceNumber);
    assert.equal(paid.status, 'PAID');
    assert.ok(paid.paidAt);
    assert.equal(await walletBalance(t, phone), 10_000, 'the wallet got the amount, not the fee');
    assert.equal(await balance(), before - 10_200, 'paying moves nothing more of the balance');
    assert.deepEqual(await eventNames(t, sk, payout.referenceNumber), ['payout.created', 'payout.paid']);
    const [, paidEvent] = await eventsOf(t, sk, payout.referenceNumber);
    assert.equal(paidEvent!.data.destination.phone, `+222******${phone.slice(-2)}`);
    assert.equal(paidEvent!.data.status, 'PAID');
    assert.equal(await sendPayouts(t), 0, 'never sent twice');
    await fold(t);
    await assertLedgerSound(t);
    await assertBalanceExplained(t, sk);
  });

  test('an unknown or locked wallet fails the payout with a typed code and gives the money back', async () => {
    const before = await balance();
    const unknown = (await createPayout(t, sk, payoutTo(SANDBOX_FAILING_PAYOUT_PHONE, 5_000))).body.data;
    const locked = (await createPayout(t, sk, payoutTo(LOCKED.phone, 5_000))).body.data;
    assert.equal(await balance(), before - 2 * 5_150);
    const lockedWalletBefore = await walletBalance(t, LOCKED.phone);
    assert.equal(await sendPayouts(t), 2);
    const failedUnknown = await getPayout(t, sk, unknown.referenceNumber);
    const failedLocked = await getPayout(t, sk, locked.referenceNumber);
    assert.deepEqual(
      [failedUnknown.status, failedUnknown.failureCode, failedLocked.status, failedLocked.failureCode],
      ['FAILED', 'WALLET_NOT_FOUND', 'FAILED', 'WALLET_LOCKED'],
    );
    assert.ok(failedUnknown.failureMessage && failedUnknown.failedAt);
    assert.equal(await balance(), before, 'amount and fee are back');
    assert.equal(await walletBalance(t, LOCKED.phone), lockedWalletBefore);
    const reversal = await allBalanceTransactions(t, sk, `&source=${unknown.referenceNumber}&type=payout_reversal`);
    assert.deepEqual(
      reversal.map((item) => [item.amount, item.fee, item.net]),
      [[5_150, 0, 5_150]],
    );
    assert.deepEqual(await eventNames(t, sk, unknown.referenceNumber), ['payout.created', 'payout.failed']);
    const [, failedEvent] = await eventsOf(t, sk, locked.referenceNumber);
    assert.equal(failedEvent!.data.failure_code, 'WALLET_LOCKED');
    await fold(t);
    await assertLedgerSound(t);
    await assertBalanceExplained(t, sk);
  });

  test('a PENDING payout can be cancelled, once; a paid one cannot', async () => {
    const before = await balance();
    const pending = (await createPayout(t, sk, payoutTo(RICH.phone, 1_000))).body.data;
    const cancel = (reference: string) =>
      t.request('POST', `${PAYOUTS}/${reference}/cancel`, { key: sk, idempotencyKey: true, body: {} });
    const cancelled = await cancel(pending.referenceNumber);
    expectStatus(cancelled, 200);
    assert.equal(cancelled.body.data.status, 'CANCELLED');
    assert.ok(cancelled.body.data.cancelledAt);
    assert.equal(await balance(), before);
    expectError(await cancel(pending.referenceNumber), 400, 'PAYOUT_NOT_PENDING');
    assert.equal(await sendPayouts(t), 0, 'a cancelled payout is not sent');
    assert.deepEqual(await eventNames(t, sk, pending.referenceNumber), ['payout.created', 'payout.cancelled']);

    const sent = (await createPayout(t, sk, payoutTo(RICH.phone, 1_000))).body.data;
    await sendPayouts(t);
    expectError(await cancel(sent.referenceNumber), 400, 'PAYOUT_NOT_PENDING');
    await fold(t);
    await assertLedgerSound(t);
  });

  test('too little balance is 402 INSUFFICIENT_FUNDS and reserves nothing', async () => {
    const before = await balance();
    const refused = await createPayout(t, sk, payoutTo(RICH.phone, before));
    expectError(refused, 402, 'INSUFFICIENT_FUNDS');
    assert.equal(await balance(), before);
    // The fee is on top: an amount the balance covers alone is still refused with its fee.
    expectError(await createPayout(t, sk, payoutTo(RICH.phone, before - 100)), 402, 'INSUFFICIENT_FUNDS');
    const empty = await t.createBusiness({ name: 'Empty shop' });
    expectError(await createPayout(t, empty.keys.secretTest, payoutTo(RICH.phone, 1)), 402, 'INSUFFICIENT_FUNDS');
    expectError(await createPayout(t, empty.keys.secretLive, payoutTo(RICH.phone, 1)), 402, 'INSUFFICIENT_FUNDS');
  });

  test('bad input is a clear 4xx and writes nothing', async () => {
    const before = await balance();
    expectError(await createPayout(t, sk, payoutTo(RICH.phone, 0)), 400, 'AMOUNT_OUT_OF_RANGE');
    expectError(await createPayout(t, sk, payoutTo(RICH.phone, 100_000_001)), 400, 'AMOUNT_OUT_OF_RANGE');
    expectError(await createPayout(t, sk, payoutTo(RICH.phone, 1.5)), 400, 'VALIDATION_ERROR');
    expectError(await createPayout(t, sk, payoutTo('20000001', 100)), 400, 'VALIDATION_ERROR');
    expectError(await createPayout(t, sk, payoutTo('+0222', 100)), 400, 'VALIDATION_ERROR');
    expectError(
      await createPayout(t, sk, { amount: 100, destination: { type: 'BANK', phone: RICH.phone } }),
      400,
      'VALIDATION_ERROR',
    );
    expectError(await createPayout(t, sk, { amount: 100 }), 400, 'VALIDATION_ERROR');
    expectError(await createPayout(t, sk, payoutTo(RICH.phone, 100, { colour: 'blue' })), 400, 'VALIDATION_ERROR');
    const tooMany = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'v']));
    expectError(
      await createPayout(t, sk, payoutTo(RICH.phone, 100, { metadata: tooMany })),
      400,
      'METADATA_TOO_MANY_KEYS',
    );
    expectError(
      await createPayout(t, sk, payoutTo(RICH.phone, 100, { metadata: { a: 'x'.repeat(501) } })),
      400,
      'METADATA_VALUE_TOO_LONG',
    );
    expectError(
      await t.request('POST', PAYOUTS, { key: sk, body: payoutTo(RICH.phone, 100) }),
      400,
      'IDEMPOTENCY_KEY_REQUIRED',
    );
    assert.equal(await balance(), before);
  });

  test('keys: secret only, payouts scopes, the right environment', async () => {
    const reader = await t.admin('POST', '/keys', {
      businessId: business.id,
      kind: 'secret',
      environment: 'test',
      scopes: ['payouts:read'],
    });
    expectStatus(reader, 201);
    const readOnly = reader.body.data.key;
    expectError(await createPayout(t, readOnly, payoutTo(RICH.phone, 100)), 403, 'SCOPE_REQUIRED');
    expectStatus(await t.request('GET', PAYOUTS, { key: readOnly }), 200);
    expectError(await t.request('GET', PAYOUTS, { key: business.keys.publishableTest }), 403, 'SECRET_KEY_REQUIRED');
    const payout = (await createPayout(t, sk, payoutTo(RICH.phone, 100))).body.data;
    expectError(
      await t.request('GET', `${PAYOUTS}/${payout.referenceNumber}`, { key: business.keys.secretLive }),
      403,
      'SANDBOX_MISMATCH',
    );
    expectError(
      await t.request('POST', `${PAYOUTS}/${payout.referenceNumber}/cancel`, {
        key: business.keys.secretLive,
        idempotencyKey: true,
        body: {},
      }),
      403,
      'SANDBOX_MISMATCH',
    );
    expectError(await t.request('GET', `${PAYOUTS}/PO-0000000000000000`, { key: sk }), 404, 'PAYOUT_NOT_FOUND');
    expectError(await t.request('GET', `${PAYOUTS}/PI-1`, { key: sk }), 400, 'VALIDATION_ERROR');
    const stranger = await t.createBusiness({ name: 'Stranger' });
    expectError(
      await t.request('GET', `${PAYOUTS}/${payout.referenceNumber}`, { key: stranger.keys.secretTest }),
      404,
      'PAYOUT_NOT_FOUND',
    );
    const unapproved = await t.createBusiness({ name: 'Not live yet', approveLive: false });
    expectError(
      await createPayout(t, unapproved.keys.secretLive, payoutTo(RICH.phone, 100)),
      403,
      'LIVE_ACCESS_NOT_APPROVED',
    );
    await sendPayouts(t);
  });

  test('one idempotency key, one payout', async () => {
    const before = await balance();
    const body = payoutTo(RICH.phone, 700);
    const first = await createPayout(t, sk, body, 'payout-once');
    const again = await createPayout(t, sk, body, 'payout-once');
    expectStatus(first, 201);
    expectStatus(again, 201);
    assert.equal(again.body.data.referenceNumber, first.body.data.referenceNumber);
    assert.equal(await balance(), before - 700 - 107);
    expectError(await createPayout(t, sk, payoutTo(RICH.phone, 701), 'payout-once'), 422, 'IDEMPOTENCY_KEY_REUSED');
    await sendPayouts(t);
  });

  test('the list filters by status and dates and pages', async () => {
    const all = await t.request('GET', `${PAYOUTS}?limit=100`, { key: sk });
    expectStatus(all, 200);
    const items = all.body.data.items;
    assert.equal(all.body.data.total, items.length);
    assert.ok(items.length >= 6);
    const times = items.map((item: { createdAt: string }) => item.createdAt);
    assert.deepEqual(times, [...times].sort().reverse(), 'newest first');
    const failed = await t.request('GET', `${PAYOUTS}?status=FAILED`, { key: sk });
    assert.equal(failed.body.data.total, 2);
    const page = await t.request('GET', `${PAYOUTS}?limit=2&page=2`, { key: sk });
    assert.deepEqual(
      page.body.data.items.map((item: { referenceNumber: string }) => item.referenceNumber),
      items.slice(2, 4).map((item: { referenceNumber: string }) => item.referenceNumber),
    );
    assert.equal((await t.request('GET', `${PAYOUTS}?to=2020-01-01`, { key: sk })).body.data.total, 0);
    expectError(await t.request('GET', `${PAYOUTS}?status=LOST`, { key: sk }), 400, 'VALIDATION_ERROR');
    expectError(
      await t.request('GET', `${PAYOUTS}?from=2026-05-02&to=2026-05-01`, { key: sk }),
      400,
      'VALIDATION_ERROR',
    );
    expectError(await t.request('GET', `${PAYOUTS}?colour=blue`, { key: sk }), 400, 'VALIDATION_ERROR');
  });

  test('each payout lists the transactions it settles: those since the previous payout', async () => {
    const shop = await t.createBusiness({ name: 'Settling shop' });
    const key = shop.keys.secretTest;
    const first = [await earn(t, key, 10_000), await earn(t, key, 20_000)];
    const p1 = (await createPayout(t, key, payoutTo(RICH.phone, 5_000))).body.data;
    const later = await earn(t, key, 30_000);
    const p2 = (await createPayout(t, key, payoutTo(RICH.phone, 5_000))).body.data;
    const settled = async (reference: string) => {
      const response = await t.request('GET', `${PAYOUTS}/${reference}/transactions`, { key });
      expectStatus(response, 200);
      return response.body.data.items.map((item: { source: { reference: string } }) => item.source.reference).sort();
    };
    assert.deepEqual(await settled(p1.referenceNumber), [...first].sort());
    assert.deepEqual(await settled(p2.referenceNumber), [later]);
    // A cancelled payout settles nothing: the next one takes its transactions.
    expectStatus(
      await t.request('POST', `${PAYOUTS}/${p2.referenceNumber}/cancel`, { key, idempotencyKey: true, body: {} }),
      200,
    );
    assert.deepEqual(await settled(p2.referenceNumber), []);
    const p3 = (await createPayout(t, key, payoutTo(RICH.phone, 5_000))).body.data;
    assert.deepEqual(await settled(p3.referenceNumber), [later]);
    expectError(
      await t.request('GET', `${PAYOUTS}/${p3.referenceNumber}/transactions`, { key: sk }),
      404,
      'PAYOUT_NOT_FOUND',
    );
    await sendPayouts(t);
    await fold(t);
    await assertLedgerSound(t);
  });

  test('payout events go to endpoints subscribed with payouts:read, and only to keys that may read them', async () => {
    const endpoint = await t.request('POST', '/api/v1/dev/webhooks/endpoints', {
      key: sk,
      idempotencyKey: true,
      body: { url: 'https://93.184.216.34/hooks', events: ['payout.created', 'payout.paid'] },
    });
    expectStatus(endpoint, 201);
    const payout = (await createPayout(t, sk, payoutTo(RICH.phone, 300))).body.data;
    await sendPayouts(t);
    const deliveries = await t.request('GET', `/api/v1/dev/webhooks/events?endpointId=${endpoint.body.data.id}`, {
      key: sk,
    });
    expectStatus(deliveries, 200);
    // Newest first: the oldest delivery is the last of the page.
    assert.deepEqual(deliveries.body.data.items.map((delivery: { event: string }) => delivery.event).reverse(), [
      'payout.created',
      'payout.paid',
    ]);
    const intentsOnly = await t.admin('POST', '/keys', {
      businessId: business.id,
      kind: 'secret',
      environment: 'test',
      scopes: ['intents:read', 'webhooks:read', 'webhooks:write'],
    });
    const narrow = intentsOnly.body.data.key;
    expectError(
      await t.request('POST', '/api/v1/dev/webhooks/endpoints', {
        key: narrow,
        idempotencyKey: true,
        body: { url: 'https://93.184.216.34/hooks', events: ['payout.paid'] },
      }),
      403,
      'EVENTS_NOT_PERMITTED',
    );
    const seen = async (key: string) =>
      (await t.request('GET', '/api/v1/dev/events?limit=100', { key })).body.data.items
        .filter((event: { type: string }) => event.type.startsWith('payout.'))
        .map((event: { object: string }) => event.object);
    assert.ok((await seen(sk)).includes(payout.referenceNumber));
    assert.deepEqual(await seen(narrow), []);
  });
});
