import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { post } from '../../src/modules/payments/ledger.js';
import { manualClock } from '../support/clock.js';
import {
  expectError,
  expectStatus,
  sharedDatabase,
  startTestApp,
  type TestApp,
  type TestBusiness,
} from '../support/harness.js';
import { act, createIntent } from '../intents/support.js';
import { eventNames, eventsOf } from '../support/read-api.js';
import { LOCKED, merchantBalance, NEARLY_EMPTY, pay, RICH, walletBalance } from './support.js';
import { testPayout } from '../support/money.js';

describe('customer payments: checkout API, wallets, ledger (issue 7; decisions "Wallets and hosted checkout")', () => {
  let t: TestApp;
  let business: TestBusiness;
  let sk: string;
  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    business = await t.createBusiness({ name: 'Boutique Nouakchott' });
    sk = business.keys.secretTest;
  });
  afterAll(() => t.close());

  const newWallet = async (balance: number, pin = '4321') => {
    const phone = `+2224${String(Math.floor(Math.random() * 1e7)).padStart(7, '0')}`;
    expectStatus(await t.admin('POST', '/wallets', { phone, pin, balance, environment: 'test' }), 201);
    return { phone, pin };
  };

  test('the checkout view shows what the customer needs and nothing else', async () => {
    const intent = await createIntent(t, sk, {
      amount: 5000,
      label: 'Order 7',
      metadata: { internal: 'secret' },
      success_url: 'https://shop.example/ok',
    });
    const response = await t.request('GET', `/checkout/intents/${intent.shortCode}`);
    expectStatus(response, 200);
    const view = response.body.data;
    assert.deepEqual(Object.keys(view).sort(), [
      'amount',
      'amountRefunded',
      'amountType',
      'cancelUrl',
      'currency',
      'expiresAt',
      'label',
      'merchantName',
      'payerFee',
      'receipt',
      'sandbox',
      'shortCode',
      'state',
      'successUrl',
      'suggestedAmount',
      'testWallets',
    ]);
    assert.equal(view.merchantName, 'Boutique Nouakchott');
    assert.equal(view.amount, 5000);
    assert.equal(view.state, 'PAYABLE');
    assert.equal(view.sandbox, true);
    assert.ok(view.testWallets.some((w: { phone: string }) => w.phone === RICH.phone));
    assert.ok(!response.text.includes('secret'), 'no metadata');
    assert.ok(!response.text.includes(intent.referenceNumber), 'no reference before payment');
    expectError(await t.request('GET', '/checkout/intents/nope00'), 404, 'INTENT_NOT_FOUND');
  });

  test('paying with a wallet: one transaction moves the money, marks the intent PAID and sends payment.confirmed', async () => {
    const payer = await newWallet(100_000);
    const before = await merchantBalance(t, sk);
    const intent = await createIntent(t, sk, { amount: 10_000 });
    const response = await pay(t, intent.shortCode, { phone: payer.phone, pin: payer.pin });
    expectStatus(response, 200);
    assert.equal(response.body.data.state, 'PAID');
    assert.equal(response.body.data.receipt.reference, intent.referenceNumber);
    assert.equal(response.body.data.receipt.amountPaid, 10_000);
    assert.match(response.body.data.receipt.payerPhone, /^\+222\*+\d\d$/);
    // Default plan: provider fee 1 % (100), no payer fee.
    assert.equal(await walletBalance(t, payer.phone), 90_000);
    assert.equal((await merchantBalance(t, sk)) - before, 9_900);
    const stored = await t.request('GET', `/api/v1/dev/intents/${intent.referenceNumber}`, { key: sk });
    assert.equal(stored.body.data.status, 'PAID');
    assert.equal(stored.body.data.code, null, 'the code is freed');
    const [, confirmed] = await eventsOf(t, sk, intent.referenceNumber);
    assert.equal(confirmed!.event, 'payment.confirmed');
    assert.equal(confirmed!.data.payer_phone, `+222******${payer.phone.slice(-2)}`);
    assert.deepEqual(confirmed!.data.commission, {
      provider_ttc: 100,
      payer_ttc: 0,
      tof: 5,
      tte: 0,
      total_revenue: 95,
    });
    expectError(await pay(t, intent.shortCode, { phone: payer.phone, pin: payer.pin }), 400, 'INTENT_NOT_PENDING');
    assert.equal(await walletBalance(t, payer.phone), 90_000, 'not charged twice');
    const check = await t.admin('GET', '/ledger/check');
    assert.equal(check.body.data.ok, true, check.text);
  });

  test('the payer fee is charged on top of the amount', async () => {
    await t.admin('PUT', `/businesses/${business.id}/fees`, { payerFee: 150 });
    try {
      const payer = await newWallet(20_000);
      const intent = await createIntent(t, sk, { amount: 10_000 });
      expectStatus(await pay(t, intent.shortCode, { phone: payer.phone, pin: payer.pin }), 200);
      assert.equal(await walletBalance(t, payer.phone), 20_000 - 10_150);
    } finally {
      await t.admin('PUT', `/businesses/${business.id}/fees`, { payerFee: 0 });
    }
  });

  test('wrong PINs: INVALID_PIN changes nothing; the fifth locks the wallet for 15 minutes', async () => {
    const payer = await newWallet(100_000, '2468');
    const intent = await createIntent(t, sk, { amount: 1000 });
    for (let attempt = 1; attempt <= 4; attempt++) {
      const response = await pay(t, intent.shortCode, { phone: payer.phone, pin: '0000' });
      expectError(response, 401, 'INVALID_PIN');
      assert.equal(response.body.error.message, 'Wrong phone number or PIN.');
    }
    const fifth = await pay(t, intent.shortCode, { phone: payer.phone, pin: '0000' });
    expectError(fifth, 403, 'WALLET_LOCKED');
    const until = /until (\S+)\.$/.exec(fifth.body.error.message)?.[1];
    assert.ok(until);
    const minutes = (Date.parse(until) - Date.now()) / 60_000;
    assert.ok(minutes > 14.9 && minutes <= 15, String(minutes));
    expectError(await pay(t, intent.shortCode, { phone: payer.phone, pin: '2468' }), 403, 'WALLET_LOCKED');
    assert.deepEqual(
      await eventNames(t, sk, intent.referenceNumber),
      ['payment.created'],
      'a wrong PIN changes nothing on the intent',
    );
    // Once the lock is over, the right PIN works again.
    await t.runtime.db
      .updateTable('wallets')
      .set({ locked_until: new Date(Date.now() - 1000) })
      .where('phone', '=', payer.phone)
      .execute();
    expectStatus(await pay(t, intent.shortCode, { phone: payer.phone, pin: '2468' }), 200);
    assert.equal(await walletBalance(t, payer.phone), 99_000);
  });

  test('insufficient balance: 402, the intent FAILED with payment.failed, nothing charged; another wallet can still pay', async () => {
    const intent = await createIntent(t, sk, { amount: 5000 });
    const response = await pay(t, intent.shortCode, NEARLY_EMPTY);
    expectError(response, 402, 'INSUFFICIENT_BALANCE');
    assert.equal(await walletBalance(t, NEARLY_EMPTY.phone), 100);
    const stored = await t.request('GET', `/api/v1/dev/intents/${intent.referenceNumber}`, { key: sk });
    assert.equal(stored.body.data.status, 'FAILED');
    assert.deepEqual(await eventNames(t, sk, intent.referenceNumber), ['payment.created', 'payment.failed']);
    expectStatus(await pay(t, intent.shortCode, RICH), 200);
    assert.deepEqual(await eventNames(t, sk, intent.referenceNumber), [
      'payment.created',
      'payment.failed',
      'payment.confirmed',
    ]);
  });

  test('a retried payment with the same X-Idempotency-Key answers the first attempt again and pays once', async () => {
    const payer = await newWallet(100_000);
    const intent = await createIntent(t, sk, { amount: 2_000 });
    const attempt = (key: string, body: Record<string, unknown> = payer) =>
      t.request('POST', `/checkout/intents/${intent.shortCode}/pay`, { body, idempotencyKey: key });
    const first = await attempt('attempt-1');
    expectStatus(first, 200);
    assert.equal(first.body.data.state, 'PAID');
    // The answer was lost on the way: the page sends the attempt again with its key.
    const again = await attempt('attempt-1');
    expectStatus(again, 200);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.equal(again.text, first.text);
    assert.equal(await walletBalance(t, payer.phone), 98_000, 'charged once');
    // Without the key, a second attempt is a new one: the intent is paid already.
    expectError(await pay(t, intent.shortCode, payer), 400, 'INTENT_NOT_PENDING');
    // The key covers the request: the same key with another body is refused.
    expectError(await attempt('attempt-1', { ...payer, amount: 2_000 }), 422, 'IDEMPOTENCY_KEY_REUSED');
  });

  test("a failed attempt is kept and its answer stored under the attempt's key", async () => {
    const intent = await createIntent(t, sk, { amount: 5_000 });
    const attempt = (body: Record<string, unknown>, key: string) =>
      t.request('POST', `/checkout/intents/${intent.shortCode}/pay`, { body, idempotencyKey: key });
    const refused = await attempt(NEARLY_EMPTY, 'poor-1');
    expectError(refused, 402, 'INSUFFICIENT_BALANCE');
    // Replayed byte for byte, the first request's requestId included.
    const replayed = await attempt(NEARLY_EMPTY, 'poor-1');
    assert.equal(replayed.status, 402);
    assert.equal(replayed.headers.get('idempotent-replayed'), 'true');
    assert.equal(replayed.text, refused.text);
    assert.deepEqual(await eventNames(t, sk, intent.referenceNumber), ['payment.created', 'payment.failed']);
    // A new attempt (a new key) from a funded wallet pays.
    expectStatus(await attempt(RICH, 'rich-1'), 200);
    assert.deepEqual(await eventNames(t, sk, intent.referenceNumber), [
      'payment.created',
      'payment.failed',
      'payment.confirmed',
    ]);
  });

  test('the reserved sandbox amount 1313 fails with PAYMENT_FAILED, nothing charged', async () => {
    const payer = await newWallet(100_000);
    const intent = await createIntent(t, sk, { amount: 1313 });
    expectError(await pay(t, intent.shortCode, payer), 402, 'PAYMENT_FAILED');
    assert.equal(await walletBalance(t, payer.phone), 100_000);
    assert.deepEqual(await eventNames(t, sk, intent.referenceNumber), ['payment.created', 'payment.failed']);
  });

  test('locked, unknown and malformed wallets', async () => {
    const intent = await createIntent(t, sk, { amount: 100 });
    expectError(await pay(t, intent.shortCode, LOCKED), 403, 'WALLET_LOCKED');
    // A phone without a wallet gets exactly the answer of a wrong PIN (issue 15 item 9).
    const unknown = await pay(t, intent.shortCode, { phone: '+22299999999', pin: '1234' });
    expectError(unknown, 401, 'INVALID_PIN');
    assert.equal(unknown.body.error.message, 'Wrong phone number or PIN.');
    expectError(await pay(t, intent.shortCode, { phone: '0612345678', pin: '1234' }), 400, 'VALIDATION_ERROR');
    expectError(await pay(t, intent.shortCode, { phone: RICH.phone, pin: '12' }), 400, 'VALIDATION_ERROR');
    expectError(await pay(t, 'nope00', RICH), 404, 'INTENT_NOT_FOUND');
  });

  test('OPEN intents: the customer enters the amount', async () => {
    const intent = await createIntent(t, sk, { amountType: 'OPEN', amount: 2000 });
    const view = await t.request('GET', `/checkout/intents/${intent.shortCode}`);
    assert.equal(view.body.data.amount, null);
    assert.equal(view.body.data.suggestedAmount, 2000);
    expectError(await pay(t, intent.shortCode, RICH), 400, 'VALIDATION_ERROR');
    expectError(await pay(t, intent.shortCode, { ...RICH, amount: 0 }), 400, 'AMOUNT_OUT_OF_RANGE');
    const paid = await pay(t, intent.shortCode, { ...RICH, amount: 2345 });
    expectStatus(paid, 200);
    assert.equal(paid.body.data.receipt.amountPaid, 2345);
  });

  test('two customers paying one intent at once: one pays, the other is refused and not charged', async () => {
    for (let round = 0; round < 3; round++) {
      const first = await newWallet(50_000);
      const second = await newWallet(50_000);
      const intent = await createIntent(t, sk, { amount: 7000 });
      const responses = await Promise.all([pay(t, intent.shortCode, first), pay(t, intent.shortCode, second)]);
      assert.equal(responses.filter((r) => r.status === 200).length, 1, responses.map((r) => r.text).join('\n'));
      expectError(
        responses.find((r) => r.status !== 200)!,
        400,
        'INTENT_NOT_PENDING',
      );
      const balances = [await walletBalance(t, first.phone), await walletBalance(t, second.phone)].sort();
      assert.deepEqual(balances, [43_000, 50_000]);
      assert.equal(
        (await eventNames(t, sk, intent.referenceNumber)).filter((e) => e === 'payment.confirmed').length,
        1,
      );
    }
  });

  test('expired and cancelled intents show their state and cannot be paid', async () => {
    const expiring = await createIntent(t, sk, { amount: 100 });
    await act(t, sk, expiring.referenceNumber, 'simulate-expiry');
    assert.equal((await t.request('GET', `/checkout/intents/${expiring.shortCode}`)).body.data.state, 'EXPIRED');
    expectError(await pay(t, expiring.shortCode, RICH), 400, 'INTENT_NOT_PENDING');
    const cancelled = await createIntent(t, sk, { amount: 100 });
    await act(t, sk, cancelled.referenceNumber, 'cancel');
    assert.equal((await t.request('GET', `/checkout/intents/${cancelled.shortCode}`)).body.data.state, 'CANCELLED');
    const late = await createIntent(t, sk, { amount: 100 });
    await t.runtime.db
      .updateTable('payment_intents')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('reference_number', '=', late.referenceNumber)
      .execute();
    assert.equal((await t.request('GET', `/checkout/intents/${late.shortCode}`)).body.data.state, 'EXPIRED');
  });

  test('pay by code: the 6-digit code finds the intent of its environment', async () => {
    const intent = await createIntent(t, sk, { amount: 4200, label: 'Counter sale' });
    const found = await t.request('GET', `/checkout/codes/${intent.code}?mode=test`);
    expectStatus(found, 200);
    assert.equal(found.body.data.shortCode, intent.shortCode);
    assert.equal(found.body.data.label, 'Counter sale');
    expectError(await t.request('GET', `/checkout/codes/${intent.code}`), 404, 'INTENT_NOT_FOUND');
    expectError(await t.request('GET', '/checkout/codes/12345'), 400, 'VALIDATION_ERROR');
    expectStatus(await pay(t, found.body.data.shortCode, RICH), 200);
    expectError(await t.request('GET', `/checkout/codes/${intent.code}?mode=test`), 404, 'INTENT_NOT_FOUND');
  });

  test('refunds move the money back through the ledger; a merchant balance too small answers 402', async () => {
    const payer = await newWallet(100_000);
    const intent = await createIntent(t, sk, { amount: 10_000 });
    await pay(t, intent.shortCode, payer);
    const merchantBefore = await merchantBalance(t, sk);
    expectStatus(await act(t, sk, intent.referenceNumber, 'refund', { amount: 4000 }), 200);
    assert.equal(await walletBalance(t, payer.phone), 94_000);
    // The provider fee comes back pro rata: 100 × 4000 / 10000 = 40.
    assert.equal(merchantBefore - (await merchantBalance(t, sk)), 3960);
    // A payout leaves the merchant with less than the rest of the refund needs.
    const available = await merchantBalance(t, sk);
    await t.runtime.db.transaction().execute(async (trx) => {
      await post(trx, {
        environment: 'test',
        kind: 'credit',
        reference: 'payout-test',
        balance: testPayout(-(available - 10)),
        lines: [
          { account: { kind: 'merchant', ownerId: business.id }, amount: -(available - 10) },
          { account: { kind: 'funding' }, amount: available - 10 },
        ],
      });
    });
    expectError(await act(t, sk, intent.referenceNumber, 'refund'), 402, 'INSUFFICIENT_FUNDS');
    const stored = await t.request('GET', `/api/v1/dev/intents/${intent.referenceNumber}`, { key: sk });
    assert.equal(stored.body.data.totalAmountRefunded, 4000, 'nothing changed');
    assert.equal(await walletBalance(t, payer.phone), 94_000);
    const check = await t.admin('GET', '/ledger/check');
    assert.equal(check.body.data.ok, true, check.text);
  });

  test('GET /dev/balance: the merchant balance of the key environment, secret keys only', async () => {
    const owner = await t.createBusiness({ name: 'Balance shop' });
    const response = await t.request('GET', '/api/v1/dev/balance', { key: owner.keys.secretTest });
    expectStatus(response, 200);
    assert.deepEqual(response.body.data, { available: 0, currency: 'MRU', sandbox: true });
    const intent = await createIntent(t, owner.keys.secretTest, { amount: 20_000 });
    await act(t, owner.keys.secretTest, intent.referenceNumber, 'simulate');
    assert.equal(
      (await t.request('GET', '/api/v1/dev/balance', { key: owner.keys.secretTest })).body.data.available,
      19_800,
    );
    assert.deepEqual((await t.request('GET', '/api/v1/dev/balance', { key: owner.keys.secretLive })).body.data, {
      available: 0,
      currency: 'MRU',
      sandbox: false,
    });
    expectError(
      await t.request('GET', '/api/v1/dev/balance', { key: owner.keys.publishableTest }),
      403,
      'SECRET_KEY_REQUIRED',
    );
  });

  test('the checkout API is rate limited per wallet', async () => {
    const intent = await createIntent(t, sk, { amount: 100 });
    // An app on this database whose limiter clock stands still: the 21 attempts fall in one
    // window however long they take (with the wall clock they could straddle a minute).
    const clocked = await startTestApp({ clock: manualClock(), testDatabase: sharedDatabase(t.testDatabase) });
    try {
      const phone = '+22298765432';
      const statuses = [];
      for (let i = 0; i < 20; i++) {
        const refused = await pay(clocked, intent.shortCode, { phone, pin: '1234' });
        statuses.push(`${refused.status} ${refused.body.error.code}`);
      }
      // A phone with no wallet is refused exactly as a wallet with a wrong PIN: it locks after
      // five attempts (test/hardening/lockout-probe.test.ts); every attempt counts against the limit.
      assert.deepEqual(statuses, [...Array(4).fill('401 INVALID_PIN'), ...Array(16).fill('403 WALLET_LOCKED')]);
      const limited = await pay(clocked, intent.shortCode, { phone, pin: '1234' });
      expectError(limited, 429, 'RATE_LIMITED');
      assert.ok(Number(limited.headers.get('retry-after')) >= 1);
    } finally {
      await clocked.close();
    }
  });

  test('the hosted pages: checkout with TEST MODE, languages, states; pay-by-code', async () => {
    const intent = await createIntent(t, sk, { amount: 123_456, label: 'Tapis <rouge>' });
    const page = await t.request('GET', `/p/${intent.shortCode}`);
    expectStatus(page, 200);
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
    assert.ok(page.text.includes('1,234.56\u00a0MRU'));
    assert.ok(page.text.includes('Tapis &lt;rouge&gt;'), 'merchant text is escaped');
    assert.ok(page.text.includes('Boutique Nouakchott'));
    assert.ok(page.text.includes('TEST MODE'));
    assert.ok(page.text.includes(RICH.phone), 'sandbox pages list the test wallets');
    assert.match(page.text, /<label for="phone">/);
    assert.match(page.text, /<html lang="en" dir="ltr">/);
    const french = await t.request('GET', `/p/${intent.shortCode}?lang=fr`);
    assert.match(french.text, /<html lang="fr" dir="ltr">/);
    assert.ok(french.text.includes('Payer'));
    const arabic = await t.request('GET', `/p/${intent.shortCode}`, {
      headers: { 'accept-language': 'ar-MR,ar;q=0.9' },
    });
    assert.match(arabic.text, /<html lang="ar" dir="rtl">/);
    await pay(t, intent.shortCode, RICH);
    const paid = await t.request('GET', `/p/${intent.shortCode}`);
    assert.match(paid.text, /data-state="PAID"/);
    assert.ok(!paid.text.includes('id="pay-form"'));
    const missing = await t.request('GET', '/p/nope00');
    assert.equal(missing.status, 404);
    assert.match(missing.text, /data-state="NOT_FOUND"/);
    const code = await t.request('GET', '/pay?mode=test');
    expectStatus(code, 200);
    assert.match(code.text, /<label for="code">/);
  });
});
