import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { Commerce } from '@commerce-developer-api/sdk';
import { act, createIntent, INTENTS } from '../intents/support.js';
import { createProduct } from '../products/support.js';
import { expectError, expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { checkedFetch } from '../support/openapi-check.js';
import { assertLedgerSound, setPlan } from './support.js';

const PAYMENTS = '/api/v1/dev/payments';
const ORDERS = '/api/v1/dev/store/orders';

/** Issue 48 item 2: every attempt to pay is readable through HTTP, one by one and per intent. */
describe('payments as objects: GET /payments/{id} and GET /intents/{ref}/payments', () => {
  let t: TestApp;
  let business: TestBusiness;
  let sk: string;
  beforeAll(async () => {
    t = await startTestApp();
    business = await t.createBusiness();
    sk = business.keys.secretTest;
    await setPlan(t, business.id, { providerBps: 250, payerFee: 150, tofBps: 500, tteBps: 180 });
  });
  afterAll(() => t.close());

  const list = (ref: string, query = '', key = sk) => t.request('GET', `${INTENTS}/${ref}/payments${query}`, { key });

  test('a paid intent lists one SUCCEEDED payment: method, masked payer, commission and settlement', async () => {
    const intent = await createIntent(t, sk, { amount: 12_345 });
    expectStatus(await act(t, sk, intent.referenceNumber, 'simulate', { payerPhone: '+22220000001' }), 200);

    const listed = await list(intent.referenceNumber);
    expectStatus(listed, 200);
    assert.deepEqual(
      { ...listed.body.data, items: listed.body.data.items.length },
      { items: 1, page: 1, limit: 20, total: 1, hasMore: false },
    );
    const payment = listed.body.data.items[0];
    assert.match(payment.id, /^pay_[0-9A-Za-z]+$/);
    assert.equal(payment.intent, intent.referenceNumber);
    assert.equal(payment.order, null);
    assert.equal(payment.method, 'SANDBOX');
    assert.equal(payment.status, 'SUCCEEDED');
    assert.equal(payment.amount, 12_345);
    assert.equal(payment.currency, 'MRU');
    assert.equal(payment.payerPhone, '+222******01');
    assert.equal(payment.failure, null);
    assert.equal(payment.sandbox, true);
    assert.equal(payment.commission.payer_ttc, 150);
    assert.equal(
      payment.commission.total_revenue,
      payment.commission.provider_ttc + payment.commission.payer_ttc - payment.commission.tof - payment.commission.tte,
    );
    const lines = Object.fromEntries(
      payment.settlement.map((line: { account: string; amount: number }) => [line.account, line.amount]),
    );
    assert.equal(lines.merchant, 12_345 - payment.commission.provider_ttc);
    assert.equal(lines.revenue, payment.commission.total_revenue);
    assert.equal(lines.tof, payment.commission.tof);
    assert.equal(lines.tte, payment.commission.tte);
    const credited = payment.settlement.reduce((sum: number, line: { amount: number }) => sum + line.amount, 0);
    assert.equal(credited, 12_345 + 150, 'the lines add up to the amount and the payer fee');
    assert.ok(payment.settledAt && payment.settledAt >= payment.createdAt);

    const one = await t.request('GET', `${PAYMENTS}/${payment.id}`, { key: sk });
    expectStatus(one, 200);
    assert.deepEqual(one.body.data, payment);
    await assertLedgerSound(t);
  });

  test('failed attempts are FAILED payments with their code and message, newest first, and the last one pays', async () => {
    const intent = await createIntent(t, sk, { amount: 5_000 });
    const ref = intent.referenceNumber;
    // Too little in the wallet, a locked wallet, a simulated failure, then paid.
    const poor = await act(t, sk, ref, 'simulate', { payerPhone: '+22220000002' });
    expectStatus(poor, 200);
    assert.equal(poor.body.data.status, 'FAILED');
    expectError(await act(t, sk, ref, 'simulate', { payerPhone: '+22220000003' }), 403, 'WALLET_LOCKED');
    expectStatus(await act(t, sk, ref, 'simulate', { outcome: 'failure' }), 200);
    expectStatus(await act(t, sk, ref, 'simulate'), 200);

    const listed = await list(ref);
    expectStatus(listed, 200);
    const items = listed.body.data.items;
    assert.deepEqual(
      items.map((payment: { status: string; failure: { code: string } | null }) => [
        payment.status,
        payment.failure?.code ?? null,
      ]),
      [
        ['SUCCEEDED', null],
        ['FAILED', 'SIMULATED_FAILURE'],
        ['FAILED', 'WALLET_LOCKED'],
        ['FAILED', 'INSUFFICIENT_BALANCE'],
      ],
    );
    const [, simulated, locked, insufficient] = items;
    assert.equal(insufficient.payerPhone, '+222******02');
    assert.equal(locked.payerPhone, '+222******03');
    for (const failed of [simulated, locked, insufficient]) {
      assert.ok(failed.failure.message.length > 0, 'a failure has its message');
      assert.equal(failed.commission, null);
      assert.deepEqual(failed.settlement, []);
      assert.equal(failed.settledAt, null);
    }
    for (let i = 1; i < items.length; i++) assert.ok(items[i - 1].createdAt >= items[i].createdAt);
    await assertLedgerSound(t);
  });

  test('the reserved failing amount 1313 is a FAILED payment (SANDBOX_DECLINED)', async () => {
    const intent = await createIntent(t, sk, { amount: 1313 });
    await act(t, sk, intent.referenceNumber, 'simulate');
    const listed = await list(intent.referenceNumber);
    expectStatus(listed, 200);
    assert.equal(listed.body.data.total, 1);
    const [payment] = listed.body.data.items;
    assert.equal(payment.status, 'FAILED');
    assert.equal(payment.failure.code, 'SANDBOX_DECLINED');
    assert.equal(payment.amount, 1313);
  });

  test('pages like every list: limit, page, hasMore, the limit capped at 100', async () => {
    const intent = await createIntent(t, sk, { amount: 2_000 });
    const ref = intent.referenceNumber;
    for (let i = 0; i < 2; i++) expectStatus(await act(t, sk, ref, 'simulate', { outcome: 'failure' }), 200);
    expectStatus(await act(t, sk, ref, 'simulate'), 200);
    const all = (await list(ref)).body.data.items.map((payment: { id: string }) => payment.id);
    assert.equal(all.length, 3);

    const first = await list(ref, '?limit=1');
    assert.deepEqual(
      { ...first.body.data, items: first.body.data.items.map((p: { id: string }) => p.id) },
      { items: [all[0]], page: 1, limit: 1, total: 3, hasMore: true },
    );
    const second = await list(ref, '?limit=1&page=2');
    assert.deepEqual(
      { ...second.body.data, items: second.body.data.items.map((p: { id: string }) => p.id) },
      { items: [all[1]], page: 2, limit: 1, total: 3, hasMore: true },
    );
    const last = await list(ref, '?limit=2&page=2');
    assert.deepEqual(
      { ...last.body.data, items: last.body.data.items.map((p: { id: string }) => p.id) },
      { items: [all[2]], page: 2, limit: 2, total: 3, hasMore: false },
    );
    const beyond = await list(ref, '?page=9');
    assert.deepEqual(beyond.body.data, { items: [], page: 9, limit: 20, total: 3, hasMore: false });
    assert.equal((await list(ref, '?limit=500')).body.data.limit, 100, 'capped silently');
    expectError(await list(ref, '?limit=0'), 400, 'VALIDATION_ERROR');
    expectError(await list(ref, '?status=FAILED'), 400, 'VALIDATION_ERROR');

    const unpaid = await createIntent(t, sk, { amount: 2_000 });
    const none = await list(unpaid.referenceNumber);
    assert.deepEqual(none.body.data, { items: [], page: 1, limit: 20, total: 0, hasMore: false });
  });

  test('PAYMENT_NOT_FOUND, INTENT_NOT_FOUND and SANDBOX_MISMATCH across environments and businesses', async () => {
    const intent = await createIntent(t, sk, { amount: 3_000 });
    expectStatus(await act(t, sk, intent.referenceNumber, 'simulate'), 200);
    const [payment] = (await list(intent.referenceNumber)).body.data.items;

    expectError(await t.request('GET', `${PAYMENTS}/pay_unknown000000`, { key: sk }), 404, 'PAYMENT_NOT_FOUND');
    expectError(await t.request('GET', `${PAYMENTS}/not-a-payment`, { key: sk }), 400, 'VALIDATION_ERROR');
    expectError(await list('PI-0000000000000000'), 404, 'INTENT_NOT_FOUND');

    const { secretLive } = business.keys;
    expectError(await t.request('GET', `${PAYMENTS}/${payment.id}`, { key: secretLive }), 403, 'SANDBOX_MISMATCH');
    expectError(await list(intent.referenceNumber, '', secretLive), 403, 'SANDBOX_MISMATCH');

    const other = await t.createBusiness({ name: 'Someone else' });
    expectError(
      await t.request('GET', `${PAYMENTS}/${payment.id}`, { key: other.keys.secretTest }),
      404,
      'PAYMENT_NOT_FOUND',
    );
    expectError(await list(intent.referenceNumber, '', other.keys.secretTest), 404, 'INTENT_NOT_FOUND');
  });

  test('secret keys with intents:read only', async () => {
    const intent = await createIntent(t, sk, { amount: 3_000 });
    expectStatus(await act(t, sk, intent.referenceNumber, 'simulate'), 200);
    const [payment] = (await list(intent.referenceNumber)).body.data.items;
    const keyWith = async (scopes: string[]) =>
      (await t.admin('POST', '/keys', { businessId: business.id, kind: 'secret', environment: 'test', scopes })).body
        .data.key as string;

    const writeOnly = await keyWith(['intents:write']);
    expectError(await list(intent.referenceNumber, '', writeOnly), 403, 'SCOPE_REQUIRED');
    expectError(await t.request('GET', `${PAYMENTS}/${payment.id}`, { key: writeOnly }), 403, 'SCOPE_REQUIRED');
    const { publishableTest } = business.keys;
    expectError(await list(intent.referenceNumber, '', publishableTest), 403, 'SECRET_KEY_REQUIRED');
    expectError(
      await t.request('GET', `${PAYMENTS}/${payment.id}`, { key: publishableTest }),
      403,
      'SECRET_KEY_REQUIRED',
    );
    const readOnly = await keyWith(['intents:read']);
    expectStatus(await list(intent.referenceNumber, '', readOnly), 200);
    expectStatus(await t.request('GET', `${PAYMENTS}/${payment.id}`, { key: readOnly }), 200);
  });
});

describe('payments of the hosted checkout and through the SDK', () => {
  let t: TestApp;
  let business: TestBusiness;
  beforeAll(async () => {
    t = await startTestApp();
    business = await t.createBusiness();
  });
  afterAll(() => t.close());

  test('a wrong PIN, a wallet with too little, then one with enough: WALLET_PIN payments, read with the SDK', async () => {
    const sk = business.keys.secretTest;
    const intent = await createIntent(t, sk, { amount: 4_200 });
    const pay = (phone: string, pin = '1234') =>
      t.request('POST', `/checkout/intents/${intent.shortCode}/pay`, { body: { phone, pin } });
    expectError(await pay('+22220000001', '9999'), 401, 'INVALID_PIN');
    expectError(await pay('+22220000002'), 402, 'INSUFFICIENT_BALANCE');
    expectStatus(await pay('+22220000001'), 200);

    const commerce = new Commerce(sk, { baseUrl: t.baseUrl, fetch: checkedFetch });
    const page = await commerce.intents.payments(intent.referenceNumber);
    assert.deepEqual(
      page.items.map((payment) => [payment.method, payment.status, payment.failure?.code ?? null]),
      [
        ['WALLET_PIN', 'SUCCEEDED', null],
        ['WALLET_PIN', 'FAILED', 'INSUFFICIENT_BALANCE'],
        ['WALLET_PIN', 'FAILED', 'INVALID_PIN'],
      ],
    );
    const collected = [];
    for await (const payment of commerce.intents.payments(intent.referenceNumber, { limit: 1 }))
      collected.push(payment);
    assert.deepEqual(
      collected.map((payment) => payment.id),
      page.items.map((payment) => payment.id),
    );
    const paid = await commerce.payments.retrieve(page.items[0]!.id);
    assert.equal(paid.intent, intent.referenceNumber);
    assert.equal(paid.payerPhone, '+222******01');
    await assert.rejects(commerce.payments.retrieve('pay_unknown000000'), { code: 'PAYMENT_NOT_FOUND' });
  });
});

describe("an order's payments: GET /store/orders/{ref}/payments and the order's payment by id", () => {
  let t: TestApp;
  let business: TestBusiness;
  let sk: string;
  beforeAll(async () => {
    t = await startTestApp();
    business = await t.createBusiness();
    sk = business.keys.secretTest;
    await setPlan(t, business.id, { providerBps: 300, payerFee: 200, tofBps: 500, tteBps: 0 });
  });
  afterAll(() => t.close());

  async function simulatedOrder(): Promise<{ referenceNumber: string; totalAmount: number; payment: any }> {
    const product = await createProduct(t, sk, { name: 'Mint tea', price: 4_500, status: 'ACTIVE', quantity: 50 });
    const order = await t.request('POST', `${ORDERS}/simulate`, {
      key: sk,
      idempotencyKey: true,
      body: { items: [{ productId: product.id, quantity: 2 }], customerName: 'Aicha' },
    });
    expectStatus(order, 201);
    return order.body.data;
  }

  test('a simulated order lists its one SUCCEEDED payment, which reads by id', async () => {
    const order = await simulatedOrder();
    const listed = await t.request('GET', `${ORDERS}/${order.referenceNumber}/payments`, { key: sk });
    expectStatus(listed, 200);
    assert.equal(listed.body.data.total, 1);
    assert.equal(listed.body.data.hasMore, false);
    const [payment] = listed.body.data.items;
    assert.equal(payment.order, order.referenceNumber);
    assert.equal(payment.intent, null);
    assert.equal(payment.method, 'SANDBOX');
    assert.equal(payment.status, 'SUCCEEDED');
    assert.equal(payment.amount, order.totalAmount);
    assert.equal(payment.payerPhone, '+222******01');
    assert.equal(payment.commission.payer_ttc, order.payment.payerFee);
    const credited = payment.settlement.reduce((sum: number, line: { amount: number }) => sum + line.amount, 0);
    assert.equal(credited, order.totalAmount + order.payment.payerFee);

    const one = await t.request('GET', `${PAYMENTS}/${payment.id}`, { key: sk });
    expectStatus(one, 200);
    assert.deepEqual(one.body.data, payment);
    await assertLedgerSound(t);
  });

  test("ORDER_NOT_FOUND, SANDBOX_MISMATCH, and the scopes an order's payment needs", async () => {
    const order = await simulatedOrder();
    const path = `${ORDERS}/${order.referenceNumber}/payments`;
    const [payment] = (await t.request('GET', path, { key: sk })).body.data.items;

    expectError(await t.request('GET', `${ORDERS}/OR-0000000000000000/payments`, { key: sk }), 404, 'ORDER_NOT_FOUND');
    const { secretLive } = business.keys;
    expectError(await t.request('GET', path, { key: secretLive }), 403, 'SANDBOX_MISMATCH');
    expectError(await t.request('GET', `${PAYMENTS}/${payment.id}`, { key: secretLive }), 403, 'SANDBOX_MISMATCH');
    const other = await t.createBusiness({ name: 'Someone else' });
    expectError(await t.request('GET', path, { key: other.keys.secretTest }), 404, 'ORDER_NOT_FOUND');

    const keyWith = async (scopes: string[]) =>
      (await t.admin('POST', '/keys', { businessId: business.id, kind: 'secret', environment: 'test', scopes })).body
        .data.key as string;
    const intentsOnly = await keyWith(['intents:read']);
    const ordersOnly = await keyWith(['store.orders:read']);
    const both = await keyWith(['intents:read', 'store.orders:read']);
    expectError(await t.request('GET', path, { key: intentsOnly }), 403, 'SCOPE_REQUIRED');
    expectStatus(await t.request('GET', path, { key: ordersOnly }), 200);
    const byId = (key: string) => t.request('GET', `${PAYMENTS}/${payment.id}`, { key });
    const refused = await byId(intentsOnly);
    expectError(refused, 403, 'SCOPE_REQUIRED');
    assert.match(refused.body.error.message, /store\.orders:read/);
    expectError(await byId(ordersOnly), 403, 'SCOPE_REQUIRED');
    expectStatus(await byId(both), 200);
    expectError(await t.request('GET', path, { key: business.keys.publishableTest }), 403, 'SECRET_KEY_REQUIRED');
  });
});
