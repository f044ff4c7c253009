import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import {
  Commerce,
  ConflictError,
  InvalidRequestError,
  NotFoundError,
  PermissionError,
} from '@commerce-developer-api/sdk';
import type { Seller, WebhookEventName, WebhookEventOf } from '@commerce-developer-api/sdk';
import { startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { checkedFetch } from '../support/openapi-check.js';

// Compile-time: the seller events are part of the SDK's webhook event union (from the OpenAPI webhooks).
const UPDATED: WebhookEventName = 'seller.updated';
type UpdatedEvent = WebhookEventOf<'seller.updated'>;
const statusOf = (event: UpdatedEvent) => [event.data.id, event.data.status, event.data.commission_bps] as const;

/** Issue 52 item 1 through the SDK: sellers and a seller's balance. */
describe('sellers through the SDK', () => {
  let t: TestApp;
  let business: TestBusiness;
  let commerce: Commerce;
  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    business = await t.createBusiness({ name: 'SDK sellers', approveLive: true });
    commerce = new Commerce(business.keys.secretTest, { baseUrl: t.baseUrl, fetch: checkedFetch });
  });
  afterAll(() => t.close());

  test('create, retrieve, update, list and balance', async () => {
    const seller: Seller = await commerce.sellers.create(
      { name: 'Stall 4', phone: '+22236000004', commissionBps: 300 },
      { idempotencyKey: 'sdk-seller-once' },
    );
    assert.match(seller.id, /^SL-[0-9]{16}$/);
    const again = await commerce.sellers.create(
      { name: 'Stall 4', phone: '+22236000004', commissionBps: 300 },
      { idempotencyKey: 'sdk-seller-once' },
    );
    assert.deepEqual(again, seller);
    assert.deepEqual(await commerce.sellers.retrieve(seller.id), seller);

    const disabled = await commerce.sellers.update(seller.id, { status: 'DISABLED' });
    assert.equal(disabled.status, 'DISABLED');
    const other = await commerce.sellers.create({ name: 'Stall 5', phone: '+22236000005' });

    const ids: string[] = [];
    for await (const item of commerce.sellers.list({ limit: 1 })) ids.push(item.id);
    assert.deepEqual(ids, [other.id, seller.id]);
    const page = await commerce.sellers.list({ status: 'DISABLED' });
    assert.deepEqual(
      page.items.map((item) => item.id),
      [seller.id],
    );

    assert.deepEqual(await commerce.sellers.balance(seller.id), { available: 0, currency: 'MRU', sandbox: true });

    const events = await commerce.events.list({ type: UPDATED, object: seller.id });
    assert.equal(events.items.length, 1);
    const event = events.items[0]!.payload as UpdatedEvent;
    assert.equal(event.event, 'seller.updated');
    assert.deepEqual(statusOf(event), [seller.id, 'DISABLED', 300]);
  });

  test('refusals are typed: VALIDATION_ERROR, SELLER_NOT_FOUND, SANDBOX_MISMATCH', async () => {
    const bad = await commerce.sellers
      .create({ name: 'Stall', phone: '+22236000006', commissionBps: 10_001 })
      .catch((error: unknown) => error);
    assert.ok(bad instanceof InvalidRequestError, String(bad));
    assert.equal(bad.code, 'VALIDATION_ERROR');
    const missing = await commerce.sellers.balance('SL-0000000000000000').catch((error: unknown) => error);
    assert.ok(missing instanceof NotFoundError);
    assert.equal(missing.code, 'SELLER_NOT_FOUND');
    const seller = await commerce.sellers.create({ name: 'Stall 6', phone: '+22236000006' });
    const live = new Commerce(business.keys.secretLive, { baseUrl: t.baseUrl, fetch: checkedFetch });
    const mismatch = await live.sellers.retrieve(seller.id).catch((error: unknown) => error);
    assert.ok(mismatch instanceof PermissionError);
    assert.equal(mismatch.code, 'SANDBOX_MISMATCH');
  });

  test('intents.create takes splits and feeBearer; the paid intent shows each share; SELLER_DISABLED is a ConflictError', async () => {
    const a = await commerce.sellers.create({ name: 'Stall 7', phone: '+22236000007' });
    const b = await commerce.sellers.create({ name: 'Stall 8', phone: '+22236000008' });
    const created = await commerce.intents.create({
      amount: 10_000,
      feeBearer: 'PROPORTIONAL',
      splits: [
        { seller: a.id, amount: 5_000 },
        { seller: b.id, amount: 2_500 },
      ],
    });
    assert.deepEqual(created.splits, [
      { seller: a.id, amount: 5_000 },
      { seller: b.id, amount: 2_500 },
    ]);
    await commerce.intents.simulate(created.referenceNumber, {});
    const paid = await commerce.intents.retrieve(created.referenceNumber);
    // 1 % of 10,000 spread by gross: 50 and 25, the business's 25 last.
    assert.deepEqual(paid.splits, [
      { seller: a.id, gross: 5_000, fee: 50, net: 4_950 },
      { seller: b.id, gross: 2_500, fee: 25, net: 2_475 },
    ]);
    assert.equal((await commerce.sellers.balance(a.id)).available, 4_950);
    await commerce.sellers.update(b.id, { status: 'DISABLED' });
    const disabled = await commerce.intents
      .create({ amount: 10_000, splits: [{ seller: b.id, bps: 1_000 }] })
      .catch((error: unknown) => error);
    assert.ok(disabled instanceof ConflictError, String(disabled));
    assert.equal(disabled.code, 'SELLER_DISABLED');

    // Its money (decision 082): its balance transactions, a payout from its balance to its phone, its statement.
    const listed = await commerce.balance.transactions.list({ seller: a.id });
    assert.deepEqual(
      listed.items.map((item) => [item.type, item.amount, item.fee, item.net, item.seller]),
      [['payment', 5_000, 50, 4_950, a.id]],
    );
    const payout = await commerce.payouts.create({ seller: a.id, amount: 1_000 });
    assert.equal(payout.seller, a.id);
    assert.equal(payout.destination.phone, '+22236000007');
    assert.equal((await commerce.sellers.balance(a.id)).available, 4_950 - 1_000 - payout.fee);
    const statement = await commerce.sellers.statement(a.id, new Date().toISOString().slice(0, 7));
    assert.deepEqual(statement.seller, { id: a.id, name: 'Stall 7' });
    assert.equal(statement.closingBalance, 4_950 - 1_000 - payout.fee);
  });
});
