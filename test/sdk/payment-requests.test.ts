import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import {
  Commerce,
  ConflictError,
  InvalidRequestError,
  NotFoundError,
  PermissionError,
  RateLimitError,
} from '@commerce-developer-api/sdk';
import type { PaymentRequest, WebhookEventName, WebhookEventOf } from '@commerce-developer-api/sdk';
import { endDueRequests } from '../../src/modules/requests/expiry.js';
import { newPhone } from '../payouts/support.js';
import { startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { checkedFetch } from '../support/openapi-check.js';

// Compile-time: the payment_request.* events are part of the SDK's webhook event union.
const APPROVED: WebhookEventName = 'payment_request.approved';
type ApprovedEvent = WebhookEventOf<'payment_request.approved'>;
const requestOf = (event: ApprovedEvent) => [event.data.id, event.data.status] as const;

const APPROVING_PHONE = '+22220000021';

/** Issue 51 through the SDK: an intent's payment requests, read, listed and cancelled. */
describe('payment requests through the SDK', () => {
  let t: TestApp;
  let business: TestBusiness;
  let commerce: Commerce;
  const requested: URL[] = [];
  const pagesOf = (suffix: string, from: number) =>
    requested
      .slice(from)
      .filter((url) => url.pathname.endsWith(suffix))
      .map((url) => Number(url.searchParams.get('page')));
  /** What the worker's task does once the sandbox phones' 2 s have passed. */
  const answerDue = () => endDueRequests(t.runtime.db, { now: new Date(Date.now() + 3_000) });

  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    business = await t.createBusiness({ name: 'SDK requests' });
    commerce = new Commerce(business.keys.secretTest, {
      baseUrl: t.baseUrl,
      // A 429 would be retried after its Retry-After: the test wants to see it.
      maxRetries: 0,
      fetch: (input, init) => {
        requested.push(new URL(String(input)));
        return checkedFetch(input, init);
      },
    });
  });
  afterAll(() => t.close());

  test('create: a PENDING PR- request, its waiting payment; the sandbox phone approves and the intent is paid', async () => {
    const intent = await commerce.intents.create({ amount: 15_000 });
    const request: PaymentRequest = await commerce.intents.requests.create(
      intent.referenceNumber,
      { phone: APPROVING_PHONE, expiresIn: 120, message: 'Table 4, thank you' },
      { idempotencyKey: 'sdk-request-once' },
    );
    assert.match(request.id, /^PR-[0-9]{16}$/);
    assert.deepEqual(
      [request.intent, request.status, request.amount, request.currency, request.phone, request.message],
      [intent.referenceNumber, 'PENDING', 15_000, 'MRU', APPROVING_PHONE, 'Table 4, thank you'],
    );
    assert.equal(Date.parse(request.expiresAt) - Date.parse(request.createdAt), 120_000);
    assert.equal(request.endedAt, null);
    assert.deepEqual(await commerce.paymentRequests.retrieve(request.id), request);
    const again = await commerce.intents.requests.create(
      intent.referenceNumber,
      { phone: APPROVING_PHONE, expiresIn: 120, message: 'Table 4, thank you' },
      { idempotencyKey: 'sdk-request-once' },
    );
    assert.deepEqual(again, request, 'the same key replays the first answer');

    const waiting = await commerce.intents.payments(intent.referenceNumber);
    assert.deepEqual(
      waiting.items.map((payment) => [payment.method, payment.status]),
      [['WALLET_REQUEST', 'PROCESSING']],
    );

    assert.equal(await answerDue(), 1);
    const approved = await commerce.paymentRequests.retrieve(request.id);
    assert.equal(approved.status, 'APPROVED');
    assert.ok(approved.endedAt);
    assert.equal((await commerce.intents.retrieve(intent.referenceNumber)).status, 'PAID');

    const page = await commerce.events.list({ object: request.id, type: APPROVED });
    assert.equal(page.items.length, 1);
    const event = page.items[0]!.payload as ApprovedEvent;
    assert.equal(event.event, 'payment_request.approved');
    assert.deepEqual(requestOf(event), [request.id, 'APPROVED']);

    const paid = await commerce.intents.requests
      .create(intent.referenceNumber, { phone: newPhone() })
      .catch((error: unknown) => error);
    assert.ok(paid instanceof InvalidRequestError, String(paid));
    assert.equal(paid.code, 'INTENT_NOT_PENDING');
  });

  test('cancel: CANCELLED once, then PAYMENT_REQUEST_NOT_PENDING; one pending request per intent', async () => {
    const intent = await commerce.intents.create({ amount: 2_000 });
    const phone = newPhone();
    const pending = await commerce.intents.requests.create(intent.referenceNumber, { phone });
    const second = await commerce.intents.requests
      .create(intent.referenceNumber, { phone: newPhone() })
      .catch((error: unknown) => error);
    assert.ok(second instanceof ConflictError, String(second));
    assert.equal(second.code, 'PAYMENT_REQUEST_PENDING');

    const cancelled = await commerce.paymentRequests.cancel(pending.id);
    assert.deepEqual([cancelled.id, cancelled.status], [pending.id, 'CANCELLED']);
    assert.ok(cancelled.endedAt);
    const twice = await commerce.paymentRequests.cancel(pending.id).catch((error: unknown) => error);
    assert.ok(twice instanceof ConflictError, String(twice));
    assert.equal(twice.code, 'PAYMENT_REQUEST_NOT_PENDING');
    assert.equal((await commerce.intents.retrieve(intent.referenceNumber)).status, 'PENDING', 'still payable');
  });

  test('list: newest first, and for await pages through every request of the intent', async () => {
    const intent = await commerce.intents.create({ amount: 3_000 });
    const made: string[] = [];
    for (let index = 0; index < 3; index++) {
      const request = await commerce.intents.requests.create(intent.referenceNumber, { phone: newPhone() });
      made.push(request.id);
      if (index < 2) await commerce.paymentRequests.cancel(request.id);
    }

    const first = await commerce.intents.requests.list(intent.referenceNumber, { limit: 100 });
    assert.equal(first.total, 3);
    assert.deepEqual(
      first.items.map((request) => [request.id, request.status]),
      [
        [made[2], 'PENDING'],
        [made[1], 'CANCELLED'],
        [made[0], 'CANCELLED'],
      ],
    );
    const from = requested.length;
    const iterated: string[] = [];
    for await (const request of commerce.intents.requests.list(intent.referenceNumber, { limit: 1 })) {
      iterated.push(request.id);
    }
    assert.deepEqual(iterated, [...made].reverse());
    assert.deepEqual(pagesOf('/requests', from), [1, 2, 3]);

    const unknown = await commerce.intents.requests
      .list('PI-0000000000000000')
      .then(undefined, (error: unknown) => error);
    assert.ok(unknown instanceof NotFoundError);
    assert.equal(unknown.code, 'INTENT_NOT_FOUND');
  });

  test('errors are typed: the amount of an OPEN intent, unknown ids, the other environment, the limits', async () => {
    const open = await commerce.intents.create({ amountType: 'OPEN' });
    const noAmount = await commerce.intents.requests
      .create(open.referenceNumber, { phone: newPhone() })
      .catch((error: unknown) => error);
    assert.ok(noAmount instanceof InvalidRequestError, String(noAmount));
    assert.equal(noAmount.code, 'VALIDATION_ERROR');
    assert.ok(
      noAmount.details.some((detail) => detail.field === 'body.amount'),
      JSON.stringify(noAmount.details),
    );
    const asked = await commerce.intents.requests.create(open.referenceNumber, { phone: newPhone(), amount: 777 });
    assert.equal(asked.amount, 777);

    const missing = await commerce.paymentRequests.retrieve('PR-0000000000000000').catch((error: unknown) => error);
    assert.ok(missing instanceof NotFoundError);
    assert.equal(missing.code, 'PAYMENT_REQUEST_NOT_FOUND');
    const live = new Commerce(business.keys.secretLive, { baseUrl: t.baseUrl, fetch: checkedFetch });
    const mismatch = await live.paymentRequests.retrieve(asked.id).catch((error: unknown) => error);
    assert.ok(mismatch instanceof PermissionError);
    assert.equal(mismatch.code, 'SANDBOX_MISMATCH');

    // Three pending requests to one phone from one business, then a fourth is refused with Retry-After.
    const phone = newPhone();
    for (let index = 0; index < 3; index++) {
      const intent = await commerce.intents.create({ amount: 1_000 });
      await commerce.intents.requests.create(intent.referenceNumber, { phone });
    }
    const intent = await commerce.intents.create({ amount: 1_000 });
    const tooMany = await commerce.intents.requests
      .create(intent.referenceNumber, { phone })
      .catch((error: unknown) => error);
    assert.ok(tooMany instanceof RateLimitError, String(tooMany));
    assert.equal(tooMany.code, 'TOO_MANY_PAYMENT_REQUESTS');
    assert.ok(tooMany.retryAfterSeconds !== undefined && tooMany.retryAfterSeconds > 0);
  });
});
