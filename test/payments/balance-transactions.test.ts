import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { parse } from 'csv-parse/sync';
import { expectError, expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { createProduct } from '../products/support.js';
import { act, createIntent } from '../intents/support.js';
import { freshPhone, orderAction, simulate } from '../orders/support.js';
import {
  allBalanceTransactions,
  assertBalanceExplained,
  assertLedgerSound,
  BALANCE,
  fold,
  setPlan,
} from './support.js';

/** Issue 33: where a merchant's balance comes from, movement by movement. */
describe('balance transactions (issue 33)', () => {
  let t: TestApp;
  let business: TestBusiness;
  let sk: string;
  let intentRef: string;
  let orderRef: string;
  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    business = await t.createBusiness({ name: 'Balance shop' });
    sk = business.keys.secretTest;
    await setPlan(t, business.id, { providerBps: 250, payerFee: 100, tofBps: 500, tteBps: 0 });
    // A payment of 100.00 MRU refunded in part, an order of 2 × 20.00 MRU lowered to 1 and refunded.
    const intent = await createIntent(t, sk, { amount: 10_000, label: 'Thé vert, "bio"' });
    intentRef = intent.referenceNumber;
    expectStatus(await act(t, sk, intentRef, 'simulate'), 200);
    expectStatus(await act(t, sk, intentRef, 'refund', { amount: 2_500 }), 200);
    const tea = await createProduct(t, sk, { name: 'Tea', price: 2000, quantity: 100, status: 'ACTIVE' });
    const placed = await simulate(t, sk, [{ productId: tea.id, quantity: 2 }], freshPhone());
    expectStatus(placed, 201);
    orderRef = placed.body.data.referenceNumber;
    expectStatus(
      await orderAction(t, sk, `/${orderRef}/propose-modification`, { items: [{ productId: tea.id, quantity: 1 }] }),
      200,
    );
    expectStatus(await orderAction(t, sk, `/${orderRef}/modification/accept`), 200);
    expectStatus(await orderAction(t, sk, `/${orderRef}/refund`, { amount: 500 }), 200);
  });
  afterAll(() => t.close());

  const list = (query = '', key = sk) => t.request('GET', `${BALANCE}/transactions${query}`, { key });

  test('every movement is listed newest first with its gross, fee and net, and they add up to the balance', async () => {
    const items = await assertBalanceExplained(t, sk);
    assert.deepEqual(
      items.map((item) => [item.type, item.amount, item.fee, item.net, item.source.reference, item.source.kind]),
      [
        ['order_refund', -500, -12, -488, orderRef, 'order'],
        ['order_adjustment', -2000, -50, -1950, orderRef, 'order'],
        ['order_payment', 4000, 100, 3900, orderRef, 'order'],
        ['refund', -2500, -62, -2438, intentRef, 'payment_intent'],
        ['payment', 10_000, 250, 9750, intentRef, 'payment_intent'],
      ],
    );
    const [latest] = items;
    assert.match(latest.id, /^txn_[0-9a-z]{10}[0-9A-Za-z]{14}$/);
    assert.equal(latest.currency, 'MRU');
    assert.equal(latest.sandbox, true);
    assert.match(latest.description, new RegExp(orderRef));
    assert.equal(items.at(-1).description, `Payment ${intentRef}: Thé vert, "bio"`);
    const page = await list('?limit=2');
    expectStatus(page, 200);
    assert.deepEqual(
      { ...page.body.data, items: page.body.data.items.length },
      { items: 2, page: 1, limit: 2, total: 5, hasMore: true },
    );
  });

  test('balanceAfter, once the movements settle, is the running balance in the order they settled', async () => {
    await fold(t);
    const items = await allBalanceTransactions(t, sk);
    const balance = (await t.request('GET', BALANCE, { key: sk })).body.data.available;
    assert.ok(items.every((item) => Number.isInteger(item.balanceAfter)));
    // Made one after the other, folded together: settled in the order made.
    let running = 0;
    for (const item of [...items].reverse()) {
      running += item.net;
      assert.equal(item.balanceAfter, running, item.type);
    }
    assert.equal(items[0].balanceAfter, balance, 'the newest leaves the balance');
  });

  test('filters: type, source, from and to', async () => {
    const refunds = await list('?type=refund');
    expectStatus(refunds, 200);
    assert.deepEqual(
      refunds.body.data.items.map((item: { type: string }) => item.type),
      ['refund'],
    );
    assert.equal(refunds.body.data.total, 1);
    const ofOrder = await list(`?source=${orderRef}`);
    assert.equal(ofOrder.body.data.total, 3);
    assert.ok(
      ofOrder.body.data.items.every((item: { source: { reference: string } }) => item.source.reference === orderRef),
    );
    const ofOrderRefunds = await list(`?source=${orderRef}&type=order_refund`);
    assert.equal(ofOrderRefunds.body.data.total, 1);
    const today = new Date().toISOString().slice(0, 10);
    assert.equal((await list(`?from=${today}&to=${today}`)).body.data.total, 5);
    assert.equal((await list('?to=2020-01-01')).body.data.total, 0);
    assert.equal((await list(`?from=2999-01-01`)).body.data.total, 0);
  });

  test('bad filters are 400 in the envelope', async () => {
    expectError(await list('?type=payout_to_mars'), 400, 'VALIDATION_ERROR');
    expectError(await list('?from=2026-13-01'), 400, 'VALIDATION_ERROR');
    expectError(await list('?from=2026-02-30'), 400, 'VALIDATION_ERROR');
    expectError(await list('?from=2026-05-02&to=2026-05-01'), 400, 'VALIDATION_ERROR');
    expectError(await list('?source=INV-1'), 400, 'VALIDATION_ERROR');
    expectError(await list('?colour=blue'), 400, 'VALIDATION_ERROR');
    expectError(await list('?limit=0'), 400, 'VALIDATION_ERROR');
    expectError(
      await t.request('GET', `${BALANCE}/transactions/export?from=2026-05-02&to=2026-05-01`, { key: sk }),
      400,
      'VALIDATION_ERROR',
    );
  });

  test('one transaction by id; unknown, malformed and the other environment answer their codes', async () => {
    const [latest] = await allBalanceTransactions(t, sk);
    const one = await t.request('GET', `${BALANCE}/transactions/${latest.id}`, { key: sk });
    expectStatus(one, 200);
    assert.deepEqual(one.body.data, latest);
    expectError(
      await t.request('GET', `${BALANCE}/transactions/txn_0000000000nothinghere0`, { key: sk }),
      404,
      'BALANCE_TRANSACTION_NOT_FOUND',
    );
    expectError(await t.request('GET', `${BALANCE}/transactions/PI-1`, { key: sk }), 400, 'VALIDATION_ERROR');
    expectError(
      await t.request('GET', `${BALANCE}/transactions/${latest.id}`, { key: business.keys.secretLive }),
      403,
      'SANDBOX_MISMATCH',
    );
    const other = await t.createBusiness({ name: 'Someone else' });
    expectError(
      await t.request('GET', `${BALANCE}/transactions/${latest.id}`, { key: other.keys.secretTest }),
      404,
      'BALANCE_TRANSACTION_NOT_FOUND',
    );
  });

  test('a secret key with balance:read only; publishable keys and keys without the scope are refused', async () => {
    expectError(await list('', business.keys.publishableTest), 403, 'SECRET_KEY_REQUIRED');
    const created = await t.admin('POST', '/keys', {
      businessId: business.id,
      kind: 'secret',
      environment: 'test',
      scopes: ['intents:read'],
    });
    expectStatus(created, 201);
    expectError(await list('', created.body.data.key), 403, 'SCOPE_REQUIRED');
    const keys = await t.admin('GET', `/keys?businessId=${business.id}`);
    if (keys.status === 200) {
      const secret = keys.body.data.find?.((key: { kind: string; scopes: string[] }) => key.kind === 'secret');
      if (secret) assert.ok(secret.scopes.includes('balance:read'), 'new secret keys get the scope');
    }
  });

  test('the CSV export streams the same items with a header row', async () => {
    const response = await t.request('GET', `${BALANCE}/transactions/export`, { key: sk });
    expectStatus(response, 200);
    assert.match(String(response.headers.get('content-type')), /^text\/csv/);
    assert.match(
      String(response.headers.get('content-disposition')),
      /attachment; filename="balance-transactions.csv"/,
    );
    const rows = parse(response.text, { columns: true }) as Record<string, string>[];
    const items = await allBalanceTransactions(t, sk);
    assert.deepEqual(
      rows.map((row) => [
        row.id,
        row.type,
        Number(row.amount),
        Number(row.fee),
        Number(row.net),
        row.sourceReference,
        row.description,
        row.createdAt,
      ]),
      items.map((item) => [
        item.id,
        item.type,
        item.amount,
        item.fee,
        item.net,
        item.source.reference,
        item.description,
        item.createdAt,
      ]),
    );
    assert.deepEqual(Object.keys(rows[0]!), [
      'id',
      'type',
      'amount',
      'fee',
      'net',
      'currency',
      'sourceReference',
      'sourceKind',
      'description',
      'balanceAfter',
      'createdAt',
    ]);
    const empty = await t.request('GET', `${BALANCE}/transactions/export?to=2020-01-01`, { key: sk });
    expectStatus(empty, 200);
    assert.equal(empty.text.trim().split('\n').length, 1, 'the header alone');
    await assertLedgerSound(t);
  });

  test("the export takes exactly the list's filters: type, source, from, to (issue 47 item 13)", async () => {
    const exported = async (query: string) => {
      const response = await t.request('GET', `${BALANCE}/transactions/export?${query}`, { key: sk });
      expectStatus(response, 200);
      return (parse(response.text, { columns: true }) as Record<string, string>[]).map((row) => row.id);
    };
    const listed = async (query: string) => (await allBalanceTransactions(t, sk, `&${query}`)).map((item) => item.id);
    const everything = await allBalanceTransactions(t, sk);
    const from = everything.at(-1).createdAt;
    const queries = [
      'type=order_refund',
      'type=refund',
      `source=${orderRef}`,
      `source=${intentRef}`,
      `source=${orderRef}&type=order_payment`,
      `type=payment&from=${encodeURIComponent(from)}&to=${encodeURIComponent(new Date().toISOString())}`,
      'type=payout',
    ];
    for (const query of queries) {
      const ids = await listed(query);
      assert.deepEqual(await exported(query), ids, query);
    }
    assert.ok((await listed(`source=${orderRef}`)).length >= 2 && (await listed('type=refund')).length === 1);
    // What the list refuses, the export refuses the same way; what is only the list's (its page), too.
    for (const query of ['type=bogus', 'source=XX-1', 'from=2026-02-01&to=2026-01-01', 'page=2', 'limit=5']) {
      const list = await t.request('GET', `${BALANCE}/transactions?${query.replace(/^(page|limit)=.*/, 'x=1')}`, {
        key: sk,
      });
      expectError(list, 400, 'VALIDATION_ERROR');
      expectError(
        await t.request('GET', `${BALANCE}/transactions/export?${query}`, { key: sk }),
        400,
        'VALIDATION_ERROR',
      );
    }
  });
});
