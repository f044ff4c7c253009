import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { endWaitingPayments } from '../../src/modules/intents/waiting-payments.js';
import { PAYMENT_FAILURES } from '../../src/modules/payments/state.js';
import { pay, RICH, NEARLY_EMPTY, LOCKED } from '../checkout/support.js';
import { act, ageIntent, createIntent } from '../intents/support.js';
import { eventNames } from '../support/read-api.js';
import { orderAction, ORDERS } from '../orders/support.js';
import { expectError, expectStatus, startTestApp, type TestApp } from '../support/harness.js';
import { assertLedgerSound } from './support.js';

const TIMEOUT_SECONDS = 900;

/** A phone no test has used, with a wallet of `balance` and PIN 1234. */
async function walletWith(t: TestApp, balance: number): Promise<{ phone: string; pin: string }> {
  const phone = `+2223${String(randomInt(10_000_000)).padStart(7, '0')}`;
  expectStatus(await t.admin('POST', '/wallets', { phone, pin: '1234', balance, environment: 'test' }), 201);
  return { phone, pin: '1234' };
}

/** The payments of an intent, oldest first, as rows. */
async function paymentsOf(t: TestApp, reference: string) {
  return t.runtime.db
    .selectFrom('payments')
    .innerJoin('payment_intents', 'payment_intents.id', 'payments.intent_id')
    .selectAll('payments')
    .where('payment_intents.reference_number', '=', reference)
    .orderBy('payments.created_at')
    .orderBy('payments.id')
    .execute();
}

/** What the worker's task does `seconds` from now. */
const endWaitingIn = (t: TestApp, seconds: number) =>
  endWaitingPayments(t.runtime.db, {
    timeoutSeconds: TIMEOUT_SECONDS,
    now: new Date(Date.now() + seconds * 1000),
  });

describe('a payment is a row: every attempt, its outcome and its money (issue 48)', () => {
  let t: TestApp;
  let sk: string;
  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    sk = (await t.createBusiness()).keys.secretTest;
  });
  afterAll(() => t.close());

  test('checkout: a wrong PIN, a locked wallet and too little balance are FAILED attempts; the payment that pays is SUCCEEDED with its money', async () => {
    const intent = await createIntent(t, sk, { amount: 5000 });
    expectError(await pay(t, intent.shortCode, { ...RICH, pin: '9999' }), 401, 'INVALID_PIN');
    expectError(await pay(t, intent.shortCode, LOCKED), 403, 'WALLET_LOCKED');
    expectError(await pay(t, intent.shortCode, NEARLY_EMPTY), 402, 'INSUFFICIENT_BALANCE');
    expectStatus(await pay(t, intent.shortCode, RICH), 200);
    const payments = await paymentsOf(t, intent.referenceNumber);
    assert.deepEqual(
      payments.map((p) => [p.method, p.status, p.failure_code, p.payer_phone, p.amount]),
      [
        ['WALLET_PIN', 'FAILED', 'INVALID_PIN', RICH.phone, 5000],
        ['WALLET_PIN', 'FAILED', 'WALLET_LOCKED', LOCKED.phone, 5000],
        ['WALLET_PIN', 'FAILED', 'INSUFFICIENT_BALANCE', NEARLY_EMPTY.phone, 5000],
        ['WALLET_PIN', 'SUCCEEDED', null, RICH.phone, 5000],
      ],
    );
    // Only too little balance failed the intent, as before payments were rows.
    assert.deepEqual(await eventNames(t, sk, intent.referenceNumber), [
      'payment.created',
      'payment.failed',
      'payment.confirmed',
    ]);
    const paid = payments[3]!;
    assert.ok(paid.settled_at && paid.ledger_transaction_id && paid.commission);
    // The settlement lines are the credits of the ledger transaction, to the centime.
    const postings = await sql<{ kind: string; amount: number }>`
      SELECT a.kind, p.amount FROM ledger_postings p JOIN ledger_accounts a ON a.id = p.account_id
      WHERE p.transaction_id = ${paid.ledger_transaction_id} AND a.kind <> 'wallet' ORDER BY p.id`.execute(
      t.runtime.db,
    );
    assert.deepEqual(
      paid.settlement,
      postings.rows.map((row) => ({ account: row.kind, amount: Number(row.amount) })),
    );
    const credited = paid.settlement.reduce((sum, line) => sum + line.amount, 0);
    assert.equal(credited, 5000 + paid.commission.payer_ttc);
    for (const failed of payments.slice(0, 3)) {
      assert.deepEqual([failed.settlement, failed.commission, failed.ledger_transaction_id], [[], null, null]);
      assert.ok(failed.failure_message);
    }
    await assertLedgerSound(t);
  });

  test('simulate: a simulated failure, the reserved amount and a locked sandbox wallet are FAILED attempts', async () => {
    const intent = await createIntent(t, sk, { amountType: 'OPEN' });
    expectStatus(await act(t, sk, intent.referenceNumber, 'simulate', { outcome: 'failure', amount: 700 }), 200);
    expectStatus(await act(t, sk, intent.referenceNumber, 'simulate', { amount: 1313 }), 200);
    expectError(
      await act(t, sk, intent.referenceNumber, 'simulate', { amount: 700, payerPhone: LOCKED.phone }),
      403,
      'WALLET_LOCKED',
    );
    expectStatus(await act(t, sk, intent.referenceNumber, 'simulate', { amount: 700 }), 200);
    const payments = await paymentsOf(t, intent.referenceNumber);
    assert.deepEqual(
      payments.map((p) => [p.method, p.status, p.failure_code, p.amount]),
      [
        ['SANDBOX', 'FAILED', 'SIMULATED_FAILURE', 700],
        ['SANDBOX', 'FAILED', 'SANDBOX_DECLINED', 1313],
        ['SANDBOX', 'FAILED', 'WALLET_LOCKED', 700],
        ['SANDBOX', 'SUCCEEDED', null, 700],
      ],
    );
    await assertLedgerSound(t);
  });

  test('an attempt on a paid, cancelled or expired intent is refused before anything is written', async () => {
    const paid = await createIntent(t, sk, { amount: 100 });
    expectStatus(await act(t, sk, paid.referenceNumber, 'simulate'), 200);
    const cancelled = await createIntent(t, sk, { amount: 100 });
    expectStatus(await act(t, sk, cancelled.referenceNumber, 'cancel'), 200);
    const expired = await createIntent(t, sk, { amount: 100 });
    await ageIntent(t, expired.referenceNumber);
    for (const intent of [paid, cancelled, expired]) {
      const before = (await paymentsOf(t, intent.referenceNumber)).length;
      expectError(await act(t, sk, intent.referenceNumber, 'simulate'), 400, 'INTENT_NOT_PENDING');
      expectError(await pay(t, intent.shortCode, { ...RICH, pin: '9999' }), 400, 'INTENT_NOT_PENDING');
      assert.equal((await paymentsOf(t, intent.referenceNumber)).length, before, intent.referenceNumber);
    }
  });

  test('a payer who approves later: PROCESSING, holding nothing, then SUCCEEDED by a later transaction', async () => {
    const intent = await createIntent(t, sk, { amount: 2500 });
    const answered = await act(t, sk, intent.referenceNumber, 'simulate', { payerPhone: '+22220000004' });
    expectStatus(answered, 200);
    assert.equal(answered.body.data.status, 'PENDING');
    const [waiting] = await paymentsOf(t, intent.referenceNumber);
    assert.deepEqual([waiting!.status, waiting!.ledger_transaction_id], ['PROCESSING', null]);
    assert.equal(await endWaitingIn(t, 0), 0, 'not due before its 2 s');
    assert.equal(await endWaitingIn(t, 3), 1);
    const [ended] = await paymentsOf(t, intent.referenceNumber);
    assert.deepEqual([ended!.id, ended!.status, ended!.payer_phone], [waiting!.id, 'SUCCEEDED', '+22220000004']);
    assert.ok(ended!.ledger_transaction_id && ended!.settled_at);
    const stored = await t.request('GET', `/api/v1/dev/intents/${intent.referenceNumber}`, { key: sk });
    assert.equal(stored.body.data.status, 'PAID');
    assert.deepEqual(await eventNames(t, sk, intent.referenceNumber), ['payment.created', 'payment.confirmed']);
    await assertLedgerSound(t);
  });

  test('a payer who declines, or never answers: FAILED DECLINED, FAILED TIMED_OUT at the timeout; the intent stays payable', async () => {
    const declined = await createIntent(t, sk, { amount: 2500 });
    expectStatus(await act(t, sk, declined.referenceNumber, 'simulate', { payerPhone: '+22220000005' }), 200);
    const silent = await createIntent(t, sk, { amount: 2500 });
    expectStatus(await act(t, sk, silent.referenceNumber, 'simulate', { payerPhone: '+22220000006' }), 200);
    await endWaitingIn(t, 3);
    assert.deepEqual(
      (await paymentsOf(t, declined.referenceNumber)).map((p) => [p.status, p.failure_code]),
      [['FAILED', 'DECLINED']],
    );
    assert.deepEqual(
      (await paymentsOf(t, silent.referenceNumber)).map((p) => [p.status, p.failure_code]),
      [['PROCESSING', null]],
    );
    await endWaitingIn(t, TIMEOUT_SECONDS + 1);
    assert.deepEqual(
      (await paymentsOf(t, silent.referenceNumber)).map((p) => [p.status, p.failure_code]),
      [['FAILED', 'TIMED_OUT']],
    );
    // Neither moved the intent: it can still be paid.
    for (const intent of [declined, silent]) {
      assert.deepEqual(await eventNames(t, sk, intent.referenceNumber), ['payment.created']);
      expectStatus(await act(t, sk, intent.referenceNumber, 'simulate'), 200);
    }
    await assertLedgerSound(t);
  });

  test('a yes that comes after the intent was cancelled is FAILED NOT_PAYABLE and moves nothing', async () => {
    const intent = await createIntent(t, sk, { amount: 2500 });
    expectStatus(await act(t, sk, intent.referenceNumber, 'simulate', { payerPhone: '+22220000004' }), 200);
    expectStatus(await act(t, sk, intent.referenceNumber, 'cancel'), 200);
    await endWaitingIn(t, 3);
    assert.deepEqual(
      (await paymentsOf(t, intent.referenceNumber)).map((p) => [p.status, p.failure_code, p.ledger_transaction_id]),
      [['FAILED', 'NOT_PAYABLE', null]],
    );
    assert.deepEqual(await eventNames(t, sk, intent.referenceNumber), ['payment.created', 'payment.cancelled']);
    await assertLedgerSound(t);
  });

  test('a placed order has its SUCCEEDED payment, SANDBOX when simulated', async () => {
    const business = await t.createBusiness({ withShop: true });
    const key = business.keys.secretTest;
    const product = await t.request('POST', '/api/v1/dev/store/products', {
      key,
      idempotencyKey: true,
      body: { name: 'Tea', price: 1500, quantity: 5, status: 'ACTIVE' },
    });
    expectStatus(product, 201);
    const placed = await t.request('POST', `${ORDERS}/simulate`, {
      key,
      idempotencyKey: true,
      body: { items: [{ productId: product.body.data.id, quantity: 2 }], customerName: 'Aicha' },
    });
    expectStatus(placed, 201);
    const rows = await t.runtime.db
      .selectFrom('payments')
      .innerJoin('orders', 'orders.id', 'payments.order_id')
      .selectAll('payments')
      .where('orders.reference_number', '=', placed.body.data.referenceNumber)
      .execute();
    assert.deepEqual(
      rows.map((p) => [p.method, p.status, p.amount, p.intent_id, p.ledger_transaction_id]),
      [['SANDBOX', 'SUCCEEDED', 3000, null, placed.body.data.payment.ledgerTransactionId]],
    );
    await assertLedgerSound(t);
  });

  // Not the method (which payments were simulated was not recorded) nor when an attempt that
  // waited began: the backfill knows only when the intent or order was paid.
  test('the backfill rebuilds from the intents and orders the payments their live writes made', async () => {
    const columns = sql`coalesce(intent_id, -order_id) AS subject, status, amount, payer_phone, payer_wallet_id,
      commission, settlement, ledger_transaction_id, settled_at`;
    const business = await t.createBusiness({ withShop: true });
    const key = business.keys.secretTest;
    const byCheckout = await createIntent(t, key, { amount: 12_345 });
    expectStatus(await pay(t, byCheckout.shortCode, RICH), 200);
    const refunded = await createIntent(t, key, { amountType: 'OPEN' });
    expectStatus(await act(t, key, refunded.referenceNumber, 'simulate', { amount: 777 }), 200);
    expectStatus(await act(t, key, refunded.referenceNumber, 'refund', { amount: 300 }), 200);
    const product = await t.request('POST', '/api/v1/dev/store/products', {
      key,
      idempotencyKey: true,
      body: { name: 'Bread', price: 250, quantity: 50, status: 'ACTIVE' },
    });
    // Three orders: one as placed, one whose total went up after, one whose total went down.
    for (const quantity of [null, 6, 1]) {
      const placed = await t.request('POST', `${ORDERS}/simulate`, {
        key,
        idempotencyKey: true,
        body: { items: [{ productId: product.body.data.id, quantity: 3 }], customerName: 'Sidi' },
      });
      expectStatus(placed, 201);
      if (quantity === null) continue;
      const ref = placed.body.data.referenceNumber;
      expectStatus(
        await orderAction(t, key, `/${ref}/propose-modification`, {
          items: [{ productId: product.body.data.id, quantity }],
        }),
        200,
      );
      expectStatus(await orderAction(t, key, `/${ref}/modification/accept`), 200);
    }
    const live = await sql`SELECT ${columns} FROM payments WHERE status = 'SUCCEEDED' ORDER BY 1`.execute(t.runtime.db);
    assert.ok(live.rows.length >= 3);
    await sql`DELETE FROM payments WHERE status = 'SUCCEEDED'`.execute(t.runtime.db);
    const backfill = readFileSync(
      path.resolve(import.meta.dirname, '../../src/db/migrations/036_payments_backfill.sql'),
      'utf8',
    );
    for (const statement of backfill.split(/;\s*$/m).filter((text) => text.replace(/--.*$/gm, '').trim())) {
      await sql.raw(statement).execute(t.runtime.db);
    }
    const rebuilt = await sql`SELECT ${columns} FROM payments WHERE status = 'SUCCEEDED' ORDER BY 1`.execute(
      t.runtime.db,
    );
    assert.deepEqual(rebuilt.rows, live.rows);
  });
});

describe('payments racing (issue 48)', () => {
  let t: TestApp;
  let sk: string;
  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    sk = (await t.createBusiness()).keys.secretTest;
  });
  afterAll(() => t.close());

  test('twenty payers racing one intent: exactly one SUCCEEDED payment, the others refused', async () => {
    const payers = await Promise.all(Array.from({ length: 20 }, () => walletWith(t, 100_000)));
    const intent = await createIntent(t, sk, { amount: 4000 });
    const answers = await Promise.all(payers.map((payer) => pay(t, intent.shortCode, payer)));
    const paid = answers.filter((answer) => answer.status === 200);
    assert.equal(paid.length, 1, answers.map((answer) => answer.text).join('\n'));
    for (const refused of answers.filter((answer) => answer.status !== 200)) {
      expectError(refused, 400, 'INTENT_NOT_PENDING');
    }
    const payments = await paymentsOf(t, intent.referenceNumber);
    assert.deepEqual(
      payments.map((p) => p.status),
      ['SUCCEEDED'],
    );
    assert.deepEqual(await eventNames(t, sk, intent.referenceNumber), ['payment.created', 'payment.confirmed']);
    await assertLedgerSound(t);
  });

  test('an approval racing a cancel and an expiry: one outcome, the payment and the intent agree', async () => {
    for (let round = 0; round < 6; round++) {
      const intent = await createIntent(t, sk, { amount: 900 });
      expectStatus(await act(t, sk, intent.referenceNumber, 'simulate', { payerPhone: '+22220000004' }), 200);
      const [, cancel, expire] = await Promise.all([
        endWaitingIn(t, 3),
        act(t, sk, intent.referenceNumber, 'cancel'),
        act(t, sk, intent.referenceNumber, 'simulate-expiry'),
      ]);
      const [payment] = await paymentsOf(t, intent.referenceNumber);
      const names = await eventNames(t, sk, intent.referenceNumber);
      if (payment!.status === 'SUCCEEDED') {
        assert.deepEqual(names, ['payment.created', 'payment.confirmed']);
        assert.notEqual(cancel.status, 200);
        assert.notEqual(expire.status, 200);
      } else {
        assert.deepEqual([payment!.status, payment!.failure_code], ['FAILED', 'NOT_PAYABLE']);
        assert.equal(names.length, 2, names.join());
        assert.ok(['payment.cancelled', 'payment.expired'].includes(names[1]!), names.join());
        assert.equal([cancel, expire].filter((answer) => answer.status === 200).length, 1);
      }
    }
    await assertLedgerSound(t);
  });
});

test('docs/payments.md words every failure code a payment can have, and no other', () => {
  const doc = readFileSync(path.resolve(import.meta.dirname, '../../docs/payments.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## Payments: every attempt'), doc.indexOf('## Wallets and the ledger'));
  const listed = [...section.matchAll(/^\| `([A-Z_]+)` +\|/gm)].map((match) => match[1]!);
  assert.deepEqual(
    listed.filter((code) => !['SUCCEEDED', 'FAILED', 'PROCESSING'].includes(code)),
    [...PAYMENT_FAILURES],
  );
});
