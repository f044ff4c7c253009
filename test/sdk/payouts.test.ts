import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { Commerce, InvalidRequestError, NotFoundError, PermissionError } from '@commerce-developer-api/sdk';
import type { Payout, QueryOf, WebhookEventName, WebhookEventOf } from '@commerce-developer-api/sdk';
import { sendDuePayouts } from '../../src/modules/payouts/send.js';
import { SANDBOX_FAILING_PAYOUT_PHONE } from '../../src/modules/sandbox/sandbox.js';
import { eventNames } from '../support/read-api.js';
import { LOCKED } from '../orders/support.js';
import { assertLedgerSound, fold } from '../payments/support.js';
import { expectError, expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { checkedFetch } from '../support/openapi-check.js';
import { earn, newPhone, PAYOUTS } from '../payouts/support.js';

/** A payout to a wallet, as the SDK takes it. */
const to = (
  phone: string,
  amount: number,
  extra: { description?: string; metadata?: Record<string, string> } = {},
) => ({
  amount,
  destination: { type: 'WALLET' as const, phone },
  ...extra,
});

// Compile-time: the payout events are part of the SDK's webhook event union (from the OpenAPI webhooks).
const PAYOUT_EVENTS: WebhookEventName[] = ['payout.created', 'payout.paid', 'payout.failed', 'payout.cancelled'];
type FailedPayoutEvent = WebhookEventOf<'payout.failed'>;
const failureCodeOf = (event: FailedPayoutEvent) => event.data.failure_code;

/** Issue 35 through the SDK: payouts, batches and the transactions each payout settles. */
describe('payouts through the SDK', () => {
  let t: TestApp;
  let business: TestBusiness;
  let commerce: Commerce;
  /** The URLs the SDK asked for, to see the pages an iteration fetched. */
  const requested: URL[] = [];
  const available = async (client = commerce) => (await client.balance.retrieve()).available;
  const send = () => sendDuePayouts(t.runtime.db);

  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    business = await t.createBusiness({ name: 'SDK payouts' });
    // A flat fee of 1.00 MRU plus 1 % on every payout.
    expectStatus(
      await t.admin('PUT', `/businesses/${business.id}/fees`, { payoutFeeFlat: 100, payoutFeeBps: 100 }),
      200,
    );
    commerce = new Commerce(business.keys.secretTest, {
      baseUrl: t.baseUrl,
      fetch: (input, init) => {
        requested.push(new URL(String(input)));
        return checkedFetch(input, init);
      },
    });
    await earn(t, business.keys.secretTest, 500_000);
  });
  afterAll(() => t.close());

  test('create: PENDING with the fee on top, reserved at once; retrieve after the worker sent it: PAID', async () => {
    const before = await available();
    const phone = newPhone();
    const payout = await commerce.payouts.create(
      to(phone, 10_000, { description: 'Weekly', metadata: { week: '48' } }),
    );
    assert.match(payout.referenceNumber, /^PO-[0-9]{16}$/);
    assert.equal(payout.status, 'PENDING');
    assert.equal(payout.fee, 200);
    assert.equal(payout.totalDebited, 10_200);
    assert.deepEqual(payout.destination, { type: 'WALLET', phone });
    assert.deepEqual(payout.metadata, { week: '48' });
    assert.equal(payout.batchId, null);
    assert.equal(payout.sandbox, true);
    assert.equal(await available(), before - 10_200);

    assert.deepEqual(await commerce.payouts.retrieve(payout.referenceNumber), payout);
    assert.equal(await send(), 1);
    const paid = await commerce.payouts.retrieve(payout.referenceNumber);
    assert.equal(paid.status, 'PAID');
    assert.ok(paid.paidAt);
    assert.equal(paid.failureCode, null);
    assert.deepEqual(await eventNames(t, business.keys.secretTest, payout.referenceNumber), [
      'payout.created',
      'payout.paid',
    ]);
  });

  test('the sandbox failing phone and the locked wallet fail the payout with a typed code', async () => {
    const before = await available();
    const unknown = await commerce.payouts.create(to(SANDBOX_FAILING_PAYOUT_PHONE, 1_000));
    const locked = await commerce.payouts.create(to(LOCKED.phone, 1_000));
    assert.equal(await send(), 2);
    const [failedUnknown, failedLocked] = await Promise.all([
      commerce.payouts.retrieve(unknown.referenceNumber),
      commerce.payouts.retrieve(locked.referenceNumber),
    ]);
    assert.deepEqual(
      [failedUnknown.status, failedUnknown.failureCode, failedLocked.status, failedLocked.failureCode],
      ['FAILED', 'WALLET_NOT_FOUND', 'FAILED', 'WALLET_LOCKED'],
    );
    assert.ok(failedUnknown.failedAt && failedUnknown.failureMessage);
    assert.equal(await available(), before, 'amount and fee are back');
    const [failedEvent] = (await commerce.events.list({ object: locked.referenceNumber, type: 'payout.failed' })).items;
    assert.equal(failureCodeOf(failedEvent!.payload as FailedPayoutEvent), 'WALLET_LOCKED');
    assert.ok(PAYOUT_EVENTS.includes(failedEvent!.type as WebhookEventName));
  });

  test('one idempotency key, one payout; the key with another body is IDEMPOTENCY_KEY_REUSED', async () => {
    const before = await available();
    const body = to(newPhone(), 700);
    const first = await commerce.payouts.create(body, { idempotencyKey: 'sdk-payout-once' });
    const again = await commerce.payouts.create(body, { idempotencyKey: 'sdk-payout-once' });
    assert.equal(again.referenceNumber, first.referenceNumber);
    assert.deepEqual(again, first);
    assert.equal(await available(), before - first.totalDebited, 'reserved once');
    const reused = await commerce.payouts
      .create(to(body.destination.phone, 701), { idempotencyKey: 'sdk-payout-once' })
      .catch((error: unknown) => error);
    assert.ok(reused instanceof InvalidRequestError);
    assert.equal(reused.code, 'IDEMPOTENCY_KEY_REUSED');
    assert.equal(reused.statusCode, 422);

    const batchItems = [to(newPhone(), 300), to(newPhone(), 400)];
    const batch = await commerce.payouts.createBatch(batchItems, { idempotencyKey: 'sdk-batch-once' });
    const batchAgain = await commerce.payouts.createBatch(batchItems, { idempotencyKey: 'sdk-batch-once' });
    assert.equal(batchAgain.id, batch.id);
    assert.deepEqual(
      batchAgain.payouts.map((payout) => payout.referenceNumber),
      batch.payouts.map((payout) => payout.referenceNumber),
    );
    await send();
  });

  test('too little balance is 402 INSUFFICIENT_FUNDS with `.code`, and reserves nothing', async () => {
    const before = await available();
    for (const attempt of [
      () => commerce.payouts.create(to(newPhone(), before)),
      () => commerce.payouts.create(to(newPhone(), before - 50)),
      () =>
        commerce.payouts.createBatch([to(newPhone(), Math.ceil(before / 2)), to(newPhone(), Math.ceil(before / 2))]),
    ]) {
      const refused = await attempt().catch((error: unknown) => error);
      assert.ok(refused instanceof InvalidRequestError, String(refused));
      assert.equal(refused.code, 'INSUFFICIENT_FUNDS');
      assert.equal(refused.statusCode, 402);
      assert.ok(refused.requestId);
    }
    assert.equal(await available(), before);
  });

  test('cancel: a PENDING payout, once; its money back; a paid one is PAYOUT_NOT_PENDING', async () => {
    const before = await available();
    const pending = await commerce.payouts.create(to(newPhone(), 1_000));
    const cancelled = await commerce.payouts.cancel(pending.referenceNumber, { idempotencyKey: 'sdk-cancel-once' });
    assert.equal(cancelled.status, 'CANCELLED');
    assert.ok(cancelled.cancelledAt);
    assert.equal(await available(), before);
    const replayed = await commerce.payouts.cancel(pending.referenceNumber, { idempotencyKey: 'sdk-cancel-once' });
    assert.deepEqual(replayed, cancelled, 'the same key replays the first answer');
    const twice = await commerce.payouts.cancel(pending.referenceNumber).catch((error: unknown) => error);
    assert.ok(twice instanceof InvalidRequestError);
    assert.equal(twice.code, 'PAYOUT_NOT_PENDING');
    assert.equal(await send(), 0, 'a cancelled payout is not sent');

    const sent = await commerce.payouts.create(to(newPhone(), 1_000));
    await send();
    const late = await commerce.payouts.cancel(sent.referenceNumber).catch((error: unknown) => error);
    assert.ok(late instanceof InvalidRequestError);
    assert.equal(late.code, 'PAYOUT_NOT_PENDING');

    const missing = await commerce.payouts.retrieve('PO-0000000000000000').catch((error: unknown) => error);
    assert.ok(missing instanceof NotFoundError);
    assert.equal(missing.code, 'PAYOUT_NOT_FOUND');
    const live = new Commerce(business.keys.secretLive, { baseUrl: t.baseUrl, fetch: checkedFetch });
    const mismatch = await live.payouts.cancel(sent.referenceNumber).catch((error: unknown) => error);
    assert.ok(mismatch instanceof PermissionError);
    assert.equal(mismatch.code, 'SANDBOX_MISMATCH');
  });

  test('list: one page newest first, and for await over every page with the filter kept', async () => {
    /** The payouts iterated over from `query`, and the page numbers the SDK fetched meanwhile. */
    async function iterate(query: QueryOf<'listPayouts'>) {
      requested.length = 0;
      const items: Payout[] = [];
      for await (const payout of commerce.payouts.list(query)) items.push(payout);
      const pages = requested
        .filter((url) => url.pathname.endsWith('/payouts'))
        .map((url) => Number(url.searchParams.get('page')));
      return { items, pages };
    }

    const all = await commerce.payouts.list({ limit: 100 });
    assert.ok(all.total >= 8);
    assert.equal(all.items.length, all.total);
    assert.equal(all.hasMore, false);
    const times = all.items.map((item) => item.createdAt);
    assert.deepEqual(times, [...times].sort().reverse(), 'newest first');

    const { items, pages } = await iterate({ limit: 3 });
    assert.deepEqual(
      items.map((item) => item.referenceNumber),
      all.items.map((item) => item.referenceNumber),
    );
    assert.deepEqual(
      pages,
      Array.from({ length: Math.ceil(all.total / 3) }, (_, index) => index + 1),
    );

    const failed = await iterate({ status: 'FAILED', limit: 1 });
    assert.equal(failed.items.length, 2);
    assert.ok(failed.items.every((item) => item.status === 'FAILED'));
    assert.deepEqual(failed.pages, [1, 2]);
    assert.equal((await commerce.payouts.list({ to: '2020-01-01' })).total, 0);
    assert.equal((await commerce.payouts.list({ limit: 2 }).toArray(3)).length, 3);
  });

  test('createBatch: all or nothing, each payout its own, retrieveBatch counts them, list({ batch }) in order', async () => {
    const before = await available();
    const phones = [newPhone(), SANDBOX_FAILING_PAYOUT_PHONE, newPhone()];
    const created = await commerce.payouts.createBatch(
      phones.map((phone, index) => to(phone, 1_000 * (index + 1), { description: `item ${index}` })),
    );
    assert.match(created.id, /^pob_/);
    assert.equal(created.itemCount, 3);
    assert.equal(created.totalAmount, 6_000);
    assert.equal(created.totalFee, 3 * 100 + 10 + 20 + 30);
    assert.deepEqual(created.counts, { PENDING: 3, PAID: 0, FAILED: 0, CANCELLED: 0 });
    assert.deepEqual(
      created.payouts.map((payout) => [payout.destination.phone, payout.status, payout.batchId]),
      phones.map((phone) => [phone, 'PENDING', created.id]),
    );
    assert.equal(await available(), before - created.totalAmount - created.totalFee);

    const { payouts, ...batch } = created;
    assert.deepEqual(await commerce.payouts.retrieveBatch(created.id), batch);
    const listed = await commerce.payouts.list({ batch: created.id, limit: 2 }).toArray();
    assert.deepEqual(
      listed.map((payout) => payout.referenceNumber),
      payouts.map((payout) => payout.referenceNumber),
      'in the order of the items',
    );

    assert.equal(await send(), 3);
    const sent = await commerce.payouts.retrieveBatch(created.id);
    assert.deepEqual(sent.counts, { PENDING: 0, PAID: 2, FAILED: 1, CANCELLED: 0 });
    assert.equal((await commerce.payouts.retrieve(payouts[1]!.referenceNumber)).failureCode, 'WALLET_NOT_FOUND');
    assert.equal(await available(), before - 4_000 - 100 - 10 - 100 - 30, 'the failed item came back');

    // An invalid item refuses the whole batch and is named in the details.
    const tooMany = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'v']));
    const invalid = await commerce.payouts
      .createBatch([to(newPhone(), 100), to(newPhone(), 0), to(newPhone(), 100, { metadata: tooMany })])
      .catch((error: unknown) => error);
    assert.ok(invalid instanceof InvalidRequestError);
    assert.equal(invalid.code, 'VALIDATION_ERROR');
    assert.deepEqual(
      invalid.details.map((detail) => [detail.field, detail.code]),
      [
        ['body.items.1.amount', 'AMOUNT_OUT_OF_RANGE'],
        ['body.items.2.metadata', 'METADATA_TOO_MANY_KEYS'],
      ],
    );
    assert.equal(requested.at(-1)?.pathname, '/api/v1/dev/payouts/batches', 'the plural path');
    assert.match(invalid.message, /items\[1\], items\[2\]/);
    assert.equal(await available(), before - 4_000 - 100 - 10 - 100 - 30, 'nothing was reserved');

    const unknownBatch = await commerce.payouts.retrieveBatch('pob_doesnotexist0').catch((error: unknown) => error);
    assert.ok(unknownBatch instanceof NotFoundError);
    assert.equal(unknownBatch.code, 'PAYOUT_BATCH_NOT_FOUND');
  });

  test('transactions: what each payout settles, page by page; a batch settles them as a whole', async () => {
    const shop = await t.createBusiness({ name: 'SDK settling shop' });
    const key = shop.keys.secretTest;
    const client = new Commerce(key, { baseUrl: t.baseUrl, fetch: checkedFetch });
    const settled = async (reference: string) =>
      (await client.payouts.transactions(reference, { limit: 1 }).toArray()).map((item) => item.source.reference);

    const first = [await earn(t, key, 10_000), await earn(t, key, 20_000), await earn(t, key, 30_000)];
    const p1 = await client.payouts.create(to(newPhone(), 5_000));
    const page = await client.payouts.transactions(p1.referenceNumber, { limit: 2 });
    assert.equal(page.total, 3);
    assert.equal(page.hasMore, true);
    assert.ok(page.items.every((item) => item.type === 'payment' && item.source.kind === 'payment_intent'));
    assert.deepEqual((await settled(p1.referenceNumber)).sort(), [...first].sort(), 'for await over 3 pages');

    const later = await earn(t, key, 40_000);
    const p2 = await client.payouts.create(to(newPhone(), 5_000));
    assert.deepEqual(await settled(p2.referenceNumber), [later]);
    await client.payouts.cancel(p2.referenceNumber);
    assert.deepEqual(await settled(p2.referenceNumber), [], 'a cancelled payout releases them');

    const last = await earn(t, key, 50_000);
    const batch = await client.payouts.createBatch([to(newPhone(), 1_000), to(SANDBOX_FAILING_PAYOUT_PHONE, 1_000)]);
    for (const payout of batch.payouts) {
      assert.deepEqual((await settled(payout.referenceNumber)).sort(), [later, last].sort());
    }
    await send();
    assert.deepEqual(
      (await settled(batch.payouts[1]!.referenceNumber)).sort(),
      [later, last].sort(),
      'a failed item of a batch keeps them: the batch settles them as a whole',
    );
    const stranger = await commerce.payouts.transactions(p1.referenceNumber).then(undefined, (error: unknown) => error);
    assert.ok(stranger instanceof NotFoundError);
    assert.equal(stranger.code, 'PAYOUT_NOT_FOUND');
    await fold(t);
    await assertLedgerSound(t);
  });

  test('HTTP: an unknown batch is 404 PAYOUT_BATCH_NOT_FOUND; a test batch read with the live key SANDBOX_MISMATCH', async () => {
    const sk = business.keys.secretTest;
    expectError(
      await t.request('GET', `${PAYOUTS}/batches/pob_doesnotexist0`, { key: sk }),
      404,
      'PAYOUT_BATCH_NOT_FOUND',
    );
    const created = await t.request('POST', `${PAYOUTS}/batch`, {
      key: sk,
      idempotencyKey: true,
      body: { items: [{ amount: 100, destination: { type: 'WALLET', phone: newPhone() } }] },
    });
    expectStatus(created, 201);
    const id = created.body.data.id as string;
    expectStatus(await t.request('GET', `${PAYOUTS}/batches/${id}`, { key: sk }), 200);
    expectError(
      await t.request('GET', `${PAYOUTS}/batches/${id}`, { key: business.keys.secretLive }),
      403,
      'SANDBOX_MISMATCH',
    );
    const stranger = await t.createBusiness({ name: 'Batch stranger' });
    expectError(
      await t.request('GET', `${PAYOUTS}/batches/${id}`, { key: stranger.keys.secretTest }),
      404,
      'PAYOUT_BATCH_NOT_FOUND',
    );
    expectError(await t.request('GET', `${PAYOUTS}/batches/batch_1`, { key: sk }), 400, 'VALIDATION_ERROR');
    await send();
  });
});
