import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { expireDueIntents } from '../../src/modules/intents/service.js';
import { pay, RICH } from '../checkout/support.js';
import { testDatabaseKind } from '../support/database.js';
import { expectError, expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { listEvents } from '../support/read-api.js';
import { ledgerIsSound, newWallet, walletBalance } from '../links/support.js';
import { Browser } from '../walletapp/support.js';
import {
  act,
  answer,
  cancelRequest,
  createIntent,
  createRequest,
  endDueIn,
  getIntent,
  getRequest,
  INTENTS,
  paymentOf,
} from './support.js';

const FUNDS = 50_000;
const PRICE = 4000;
const PG_ONLY = testDatabaseKind === 'postgres' ? false : 'PostgreSQL only: PGlite runs one transaction at a time';

/**
 * Issue 51: a pending request follows its intent. Once the intent can no longer be paid through
 * it (paid another way, cancelled, expired), the request ends in the intent's transaction: its
 * waiting payment FAILED, the request CANCELLED or EXPIRED, its event once, nothing debited.
 */
describe('a payment request follows its intent', () => {
  let t: TestApp;
  let business: TestBusiness;
  let sk: string;
  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    business = await t.createBusiness();
    sk = business.keys.secretTest;
  });
  afterAll(() => t.close());

  /** An intent with a pending request to a fresh funded wallet (which answers only in the wallet app). */
  async function pendingRequest() {
    const wallet = await newWallet(t, FUNDS);
    const intent = await createIntent(t, sk, { amount: PRICE });
    const request = await createRequest(t, sk, intent.referenceNumber, { phone: wallet.phone });
    return { wallet, intent, request };
  }

  /** The request ended as said, once, with its payment FAILED, the payer untouched and a late answer refused. */
  async function endedOnce(
    asked: Awaited<ReturnType<typeof pendingRequest>>,
    status: 'CANCELLED' | 'EXPIRED',
    paymentFailure: 'CANCELLED' | 'TIMED_OUT',
  ) {
    const { wallet, request } = asked;
    const ended = await getRequest(t, sk, request.id);
    assert.equal(ended.status, status);
    assert.equal(ended.failureCode, null);
    assert.ok(ended.endedAt);
    const payment = await paymentOf(t, request.id);
    assert.equal(payment.status, 'FAILED');
    assert.equal(payment.failure_code, paymentFailure);
    assert.deepEqual(
      (await listEvents(t, sk, request.id)).map((event) => event.type),
      ['payment_request.created', `payment_request.${status.toLowerCase()}`],
    );
    assert.equal(await walletBalance(t, wallet.phone), FUNDS);
    await assert.rejects(answer(t, wallet.phone, request.id, 'APPROVED'), { code: 'PAYMENT_REQUEST_NOT_PENDING' });
    // The request's own expiry finds nothing left to end.
    assert.equal(await endDueIn(t, 3600), 0);
    assert.equal((await listEvents(t, sk, request.id)).length, 2);
    assert.equal(await walletBalance(t, wallet.phone), FUNDS);
  }

  test('paid by a sandbox simulation: the request ends CANCELLED in the same transaction', async () => {
    const asked = await pendingRequest();
    const paid = await act(t, sk, asked.intent.referenceNumber, 'simulate', {});
    expectStatus(paid, 200);
    assert.equal(paid.body.data.status, 'PAID');
    await endedOnce(asked, 'CANCELLED', 'CANCELLED');
    assert.equal((await listEvents(t, sk, asked.intent.referenceNumber, 'payment.confirmed')).length, 1);
    await ledgerIsSound(t);
  });

  test('paid on the checkout page with another wallet: the request ends CANCELLED, its payer not debited', async () => {
    const asked = await pendingRequest();
    const before = await walletBalance(t, RICH.phone);
    const paid = await pay(t, asked.intent.shortCode, { phone: RICH.phone, pin: RICH.pin });
    expectStatus(paid, 200);
    assert.equal(await walletBalance(t, RICH.phone), before - PRICE);
    await endedOnce(asked, 'CANCELLED', 'CANCELLED');
    await ledgerIsSound(t);
  });

  test("the request's own approval pays the intent and ends as APPROVED, not withdrawn", async () => {
    const { wallet, intent, request } = await pendingRequest();
    await answer(t, wallet.phone, request.id, 'APPROVED');
    assert.equal((await getRequest(t, sk, request.id)).status, 'APPROVED');
    assert.equal((await paymentOf(t, request.id)).status, 'SUCCEEDED');
    assert.equal((await getIntent(t, sk, intent.referenceNumber)).status, 'PAID');
    assert.deepEqual(
      (await listEvents(t, sk, request.id)).map((event) => event.type),
      ['payment_request.created', 'payment_request.approved'],
    );
    await ledgerIsSound(t);
  });

  test('a failed payment by another way leaves the request pending: the intent is still payable', async () => {
    const { intent, request } = await pendingRequest();
    const failed = await act(t, sk, intent.referenceNumber, 'simulate', { outcome: 'failure' });
    expectStatus(failed, 200);
    assert.equal(failed.body.data.status, 'FAILED');
    assert.equal((await getRequest(t, sk, request.id)).status, 'PENDING');
    expectStatus(await cancelRequest(t, sk, request.id), 200);
  });

  test('the intent cancelled through the API: the request ends CANCELLED', async () => {
    const asked = await pendingRequest();
    const cancelled = await act(t, sk, asked.intent.referenceNumber, 'cancel');
    expectStatus(cancelled, 200);
    assert.equal(cancelled.body.data.status, 'CANCELLED');
    await endedOnce(asked, 'CANCELLED', 'CANCELLED');
    assert.equal((await listEvents(t, sk, asked.intent.referenceNumber, 'payment.cancelled')).length, 1);
  });

  test('the intent expired by simulate-expiry: the request ends EXPIRED', async () => {
    const asked = await pendingRequest();
    const expired = await t.request('POST', `${INTENTS}/${asked.intent.referenceNumber}/simulate-expiry`, {
      key: sk,
      body: {},
      idempotencyKey: true,
    });
    expectStatus(expired, 200);
    await endedOnce(asked, 'EXPIRED', 'TIMED_OUT');
  });

  test("the intents' expiry task: each expired intent's request ends EXPIRED, in the task's transaction", async () => {
    const first = await pendingRequest();
    const second = await pendingRequest();
    await t.runtime.db
      .updateTable('payment_intents')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('reference_number', 'in', [first.intent.referenceNumber, second.intent.referenceNumber])
      .execute();
    assert.ok((await expireDueIntents(t.runtime.db)) >= 2);
    for (const asked of [first, second]) {
      assert.equal((await getIntent(t, sk, asked.intent.referenceNumber)).status, 'CANCELLED');
      await endedOnce(asked, 'EXPIRED', 'TIMED_OUT');
    }
    await ledgerIsSound(t);
  });

  test("a request's expiry is capped at its intent's", async () => {
    const wallet = await newWallet(t, FUNDS);
    const intent = await createIntent(t, sk, { amount: PRICE });
    const intentExpiry = new Date(Date.now() + 120_000);
    await t.runtime.db
      .updateTable('payment_intents')
      .set({ expires_at: intentExpiry })
      .where('reference_number', '=', intent.referenceNumber)
      .execute();
    const capped = await createRequest(t, sk, intent.referenceNumber, { phone: wallet.phone, expiresIn: 900 });
    assert.equal(capped.expiresAt, intentExpiry.toISOString());
    expectStatus(await cancelRequest(t, sk, capped.id), 200);
    const shorter = await createRequest(t, sk, intent.referenceNumber, { phone: wallet.phone, expiresIn: 60 });
    const asked = new Date(shorter.createdAt).getTime() + 60_000;
    assert.equal(shorter.expiresAt, new Date(asked).toISOString());
    assert.ok(asked < intentExpiry.getTime());
  });

  test.skipIf(PG_ONLY)(
    'approving in the wallet app while the merchant cancels the intent: exactly one outcome, the payer debited at most once',
    async () => {
      const wallet = await newWallet(t, FUNDS);
      const browser = new Browser(t);
      const signedIn = await browser.signIn(wallet.phone.slice(4), wallet.pin);
      assert.ok([200, 303].includes(signedIn.status), signedIn.html);
      // Both outcomes happen across the rounds (the delays let each side go first).
      const outcomes = new Set<string>();
      let balance = FUNDS;
      // At most 10 requests an hour per business and phone: 8 rounds.
      for (let round = 0; round < 8; round++) {
        const intent = await createIntent(t, sk, { amount: PRICE });
        const request = await createRequest(t, sk, intent.referenceNumber, { phone: wallet.phone });
        const home = await browser.get('/wallet');
        // The approval checks the PIN before it locks anything: some rounds let it go first.
        const delay = [0, 20, 60, 120][round % 4]!;
        const [approved, cancelled] = await Promise.all([
          browser.post(`/wallet/requests/${request.id}/approve`, { ...Browser.fields(home.html), pin: wallet.pin }),
          new Promise((resolve) => setTimeout(resolve, delay)).then(() => act(t, sk, intent.referenceNumber, 'cancel')),
        ]);
        const paid = approved.status === 200;
        if (!paid) assert.equal(approved.status, 409, approved.html);
        if (cancelled.status !== 200) {
          assert.ok(paid, `round ${round}: neither the approval nor the cancel won`);
          if (cancelled.body.error.code !== 'INTENT_CANCEL_CONFLICT') {
            expectError(cancelled, 400, 'INTENT_CANCEL_INVALID_STATUS');
          }
        } else {
          assert.ok(!paid, `round ${round}: both the approval and the cancel won`);
        }
        const ended = await getRequest(t, sk, request.id);
        assert.equal(ended.status, paid ? 'APPROVED' : 'CANCELLED');
        outcomes.add(ended.status);
        assert.equal((await getIntent(t, sk, intent.referenceNumber)).status, paid ? 'PAID' : 'CANCELLED');
        const now = await walletBalance(t, wallet.phone);
        assert.equal(balance - now, paid ? PRICE : 0, `round ${round}`);
        balance = now;
        assert.equal((await listEvents(t, sk, request.id)).length, 2);
      }
      await ledgerIsSound(t);
    },
  );
});
