import assert from 'node:assert/strict';
import { afterAll, beforeAll, beforeEach, describe, test } from 'vitest';
import { ApiError } from '../../src/http/errors.js';
import { SANDBOX_POOR_PAYER } from '../../src/modules/sandbox/sandbox.js';
import { manualClock } from '../support/clock.js';
import { expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { listEvents } from '../support/read-api.js';
import { ledgerIsSound, newWallet, walletBalance } from '../links/support.js';
import {
  act,
  ageRequest,
  answer,
  createIntent,
  createRequest,
  endDueIn,
  getIntent,
  getRequest,
  paymentOf,
} from './support.js';

const APPROVES = '+22220000021';
const DECLINES = '+22220000022';
const NEVER_ANSWERS = '+22220000023';

/** The ApiError code a promise rejects with. */
async function refusal(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ApiError) return error.code;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('payment requests: the sandbox phones and the wallet answers (issue 51 item 4)', () => {
  const clock = manualClock();
  let t: TestApp;
  let business: TestBusiness;
  let sk: string;
  beforeAll(async () => {
    t = await startTestApp({ clock, config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    business = await t.createBusiness({ name: 'Café Nouadhibou' });
    sk = business.keys.secretTest;
  });
  afterAll(() => t.close());
  beforeEach(() => clock.advance(60_000));

  const eventTypes = async (object: string) => (await listEvents(t, sk, object)).map((event) => event.type);

  /** The request's payment as the Payments API answers it. */
  async function paymentView(requestId: string) {
    const { id } = await paymentOf(t, requestId);
    const response = await t.request('GET', `/api/v1/dev/payments/${id}`, { key: sk });
    expectStatus(response, 200);
    return response.body.data;
  }

  test(`${APPROVES} approves after 2 s: APPROVED, the intent PAID by a WALLET_REQUEST payment, payment.confirmed`, async () => {
    const intent = await createIntent(t, sk, { amount: 3000 });
    const request = await createRequest(t, sk, intent.referenceNumber, { phone: APPROVES });
    await endDueIn(t, 0);
    assert.equal((await getRequest(t, sk, request.id)).status, 'PENDING', 'not before its 2 s');
    assert.ok((await endDueIn(t, 3)) >= 1);
    const approved = await getRequest(t, sk, request.id);
    assert.equal(approved.status, 'APPROVED');
    assert.ok(approved.endedAt);
    const paid = await getIntent(t, sk, intent.referenceNumber);
    assert.equal(paid.status, 'PAID');
    const payment = await paymentView(request.id);
    assert.deepEqual([payment.method, payment.status, payment.amount], ['WALLET_REQUEST', 'SUCCEEDED', 3000]);
    assert.ok((await eventTypes(intent.referenceNumber)).includes('payment.confirmed'));
    assert.deepEqual(await eventTypes(request.id), ['payment_request.created', 'payment_request.approved']);
    await ledgerIsSound(t);
  });

  test(`${DECLINES} declines after 2 s: DECLINED, nothing moved, the intent still payable`, async () => {
    const intent = await createIntent(t, sk, { amount: 3000 });
    const request = await createRequest(t, sk, intent.referenceNumber, { phone: DECLINES });
    await endDueIn(t, 3);
    assert.equal((await getRequest(t, sk, request.id)).status, 'DECLINED');
    assert.equal((await getIntent(t, sk, intent.referenceNumber)).status, 'PENDING');
    const payment = await paymentView(request.id);
    assert.deepEqual([payment.status, payment.failure?.code], ['FAILED', 'DECLINED']);
    assert.deepEqual(await eventTypes(request.id), ['payment_request.created', 'payment_request.declined']);
    // Payable: another request may be made at once.
    await createRequest(t, sk, intent.referenceNumber, { phone: APPROVES });
  });

  test(`${NEVER_ANSWERS} never answers: PENDING until its expiry, then EXPIRED`, async () => {
    const intent = await createIntent(t, sk, { amount: 3000 });
    const request = await createRequest(t, sk, intent.referenceNumber, { phone: NEVER_ANSWERS, expiresIn: 120 });
    await endDueIn(t, 60);
    assert.equal((await getRequest(t, sk, request.id)).status, 'PENDING');
    await endDueIn(t, 121);
    const expired = await getRequest(t, sk, request.id);
    assert.equal(expired.status, 'EXPIRED');
    assert.equal(expired.failureCode, null);
    const payment = await paymentView(request.id);
    assert.deepEqual([payment.status, payment.failure?.code], ['FAILED', 'TIMED_OUT']);
    assert.deepEqual(await eventTypes(request.id), ['payment_request.created', 'payment_request.expired']);
    assert.equal((await getIntent(t, sk, intent.referenceNumber)).status, 'PENDING');
  });

  test(`${SANDBOX_POOR_PAYER} approves and fails for too little balance: FAILED INSUFFICIENT_BALANCE, the intent still payable`, async () => {
    const intent = await createIntent(t, sk, { amount: 50_000 });
    const request = await createRequest(t, sk, intent.referenceNumber, { phone: SANDBOX_POOR_PAYER });
    await endDueIn(t, 3);
    const failed = await getRequest(t, sk, request.id);
    assert.deepEqual([failed.status, failed.failureCode], ['FAILED', 'INSUFFICIENT_BALANCE']);
    assert.deepEqual(await eventTypes(request.id), ['payment_request.created', 'payment_request.failed']);
    const failedEvent = (await listEvents(t, sk, request.id, 'payment_request.failed'))[0]!;
    assert.equal(failedEvent.payload.data.failure_code, 'INSUFFICIENT_BALANCE');
    const after = await getIntent(t, sk, intent.referenceNumber);
    assert.notEqual(after.status, 'PAID');
    // Still payable: a request to a phone that pays goes through.
    const retry = await createRequest(t, sk, intent.referenceNumber, { phone: APPROVES });
    await endDueIn(t, 3);
    assert.equal((await getRequest(t, sk, retry.id)).status, 'APPROVED');
    assert.equal((await getIntent(t, sk, intent.referenceNumber)).status, 'PAID');
    await ledgerIsSound(t);
  });

  test('the wallet approves: the payer debited once, the intent PAID; a second answer is PAYMENT_REQUEST_NOT_PENDING', async () => {
    const wallet = await newWallet(t, 20_000);
    const intent = await createIntent(t, sk, { amount: 4000 });
    const request = await createRequest(t, sk, intent.referenceNumber, { phone: wallet.phone });
    const ended = await answer(t, wallet.phone, request.id, 'APPROVED');
    assert.equal(ended.status, 'APPROVED');
    const paid = await getIntent(t, sk, intent.referenceNumber);
    assert.equal(paid.status, 'PAID');
    const debited = 20_000 - (await walletBalance(t, wallet.phone));
    assert.ok(debited >= 4000, `debited ${debited}`);
    assert.equal(await refusal(answer(t, wallet.phone, request.id, 'APPROVED')), 'PAYMENT_REQUEST_NOT_PENDING');
    assert.equal(await refusal(answer(t, wallet.phone, request.id, 'DECLINED')), 'PAYMENT_REQUEST_NOT_PENDING');
    assert.equal(20_000 - (await walletBalance(t, wallet.phone)), debited);
    assert.deepEqual(await eventTypes(request.id), ['payment_request.created', 'payment_request.approved']);
    await ledgerIsSound(t);
  });

  test('the wallet declines: DECLINED, nothing debited', async () => {
    const wallet = await newWallet(t, 20_000);
    const intent = await createIntent(t, sk, { amount: 4000 });
    const request = await createRequest(t, sk, intent.referenceNumber, { phone: wallet.phone });
    assert.equal((await answer(t, wallet.phone, request.id, 'DECLINED')).status, 'DECLINED');
    assert.equal(await walletBalance(t, wallet.phone), 20_000);
    assert.equal((await getIntent(t, sk, intent.referenceNumber)).status, 'PENDING');
  });

  test("another phone's answer, or the other environment's, finds no request: PAYMENT_REQUEST_NOT_FOUND", async () => {
    const wallet = await newWallet(t, 20_000);
    const stranger = await newWallet(t, 20_000);
    const intent = await createIntent(t, sk, { amount: 4000 });
    const request = await createRequest(t, sk, intent.referenceNumber, { phone: wallet.phone });
    assert.equal(await refusal(answer(t, stranger.phone, request.id, 'APPROVED')), 'PAYMENT_REQUEST_NOT_FOUND');
    assert.equal(await refusal(answer(t, wallet.phone, request.id, 'APPROVED', 'live')), 'PAYMENT_REQUEST_NOT_FOUND');
    assert.equal(
      await refusal(answer(t, wallet.phone, 'PR-0000000000000000', 'APPROVED')),
      'PAYMENT_REQUEST_NOT_FOUND',
    );
    assert.equal(await walletBalance(t, stranger.phone), 20_000);
    assert.equal(await walletBalance(t, wallet.phone), 20_000);
    assert.equal((await getRequest(t, sk, request.id)).status, 'PENDING');
  });

  test('expired while the payer typed: the answer after expires_at is PAYMENT_REQUEST_NOT_PENDING, nothing debited', async () => {
    const wallet = await newWallet(t, 20_000);
    const intent = await createIntent(t, sk, { amount: 4000 });
    const request = await createRequest(t, sk, intent.referenceNumber, { phone: wallet.phone, expiresIn: 60 });
    await ageRequest(t, request.id);
    assert.equal(await refusal(answer(t, wallet.phone, request.id, 'APPROVED')), 'PAYMENT_REQUEST_NOT_PENDING');
    assert.equal(await walletBalance(t, wallet.phone), 20_000);
    assert.equal((await getIntent(t, sk, intent.referenceNumber)).status, 'PENDING');
    await endDueIn(t, 0);
    assert.equal((await getRequest(t, sk, request.id)).status, 'EXPIRED');
    assert.equal(await walletBalance(t, wallet.phone), 20_000);
    await ledgerIsSound(t);
  });

  test('an intent paid another way while its request waited: the request ends CANCELLED, a late approval is refused, nothing debited', async () => {
    const wallet = await newWallet(t, 20_000);
    const intent = await createIntent(t, sk, { amount: 4000 });
    const request = await createRequest(t, sk, intent.referenceNumber, { phone: wallet.phone });
    expectStatus(await act(t, sk, intent.referenceNumber, 'simulate'), 200);
    assert.equal((await getIntent(t, sk, intent.referenceNumber)).status, 'PAID');
    // The payment by another way ended the request in its transaction (test/requests/lifecycle.test.ts).
    assert.equal((await getRequest(t, sk, request.id)).status, 'CANCELLED');
    assert.equal(await refusal(answer(t, wallet.phone, request.id, 'APPROVED')), 'PAYMENT_REQUEST_NOT_PENDING');
    assert.deepEqual(await eventTypes(request.id), ['payment_request.created', 'payment_request.cancelled']);
    assert.equal(await walletBalance(t, wallet.phone), 20_000);
    await ledgerIsSound(t);
  });
});
