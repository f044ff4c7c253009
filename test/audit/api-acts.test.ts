import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import type { AuditAction } from '../../src/modules/audit/actions.js';
import { expectError, expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { act, createIntent } from '../intents/support.js';
import { createPayout, earn, newPhone, payoutTo, PAYOUTS } from '../payouts/support.js';
import { createSeller, patchSeller } from '../sellers/support.js';
import { createLink, patchLink } from '../links/support.js';
import { ENDPOINTS } from '../webhooks/support.js';
import { entriesOf, entryCount } from './support.js';

/**
 * Issue 53 item 4: each act done through the API writes one entry, in the act's transaction, with
 * the key as its actor; an act refused writes none.
 */
describe('the audit log: acts through the API', () => {
  let t: TestApp;
  let business: TestBusiness;
  let sk: string;
  let keyId: string;

  beforeAll(async () => {
    t = await startTestApp({
      config: { RATE_LIMIT_TEST_PER_MINUTE: '100000', WEBHOOK_ALLOW_PRIVATE: 'true' },
    });
    business = await t.createBusiness();
    sk = business.keys.secretTest;
    keyId = business.keyRecords.find((key) => key.kind === 'secret' && key.environment === 'test')!.id;
  });
  afterAll(() => t?.close());

  /** The one entry of an act on a target, checked for the key as actor and the test mode. */
  async function onlyEntry(action: AuditAction, targetId: string) {
    const entries = (await entriesOf(t, business.id, action)).filter((entry) => entry.target_id === targetId);
    assert.equal(entries.length, 1, `${action} on ${targetId}: ${entries.length} entries`);
    const entry = entries[0]!;
    assert.equal(entry.actor_kind, 'api_key');
    assert.equal(entry.actor_id, keyId);
    assert.match(entry.actor_label ?? '', /^sk_test_/);
    assert.doesNotMatch(JSON.stringify(entry), new RegExp(sk), 'never the key text');
    assert.equal(entry.environment, 'test');
    assert.ok(entry.ip);
    return entry;
  }

  test('webhook endpoints: created, updated, secret rotated, deleted; never the secret', async () => {
    const created = await t.request('POST', ENDPOINTS, {
      key: sk,
      idempotencyKey: true,
      body: { url: 'http://127.0.0.1:9/hooks', events: ['payment.confirmed'] },
      headers: { 'user-agent': 'audit-test/1.0' },
    });
    expectStatus(created, 201);
    const id = created.body.data.id;
    const entry = await onlyEntry('webhook_endpoint.created', id);
    assert.equal(entry.target_kind, 'webhook_endpoint');
    assert.equal(entry.user_agent, 'audit-test/1.0');
    assert.deepEqual(entry.details, { url: 'http://127.0.0.1:9/hooks', events: ['payment.confirmed'] });

    const patched = await t.request('PATCH', `${ENDPOINTS}/${id}`, {
      key: sk,
      idempotencyKey: true,
      body: { active: false },
    });
    expectStatus(patched, 200);
    assert.deepEqual((await onlyEntry('webhook_endpoint.updated', id)).details, { changed: ['active'] });

    const rotated = await t.request('POST', `${ENDPOINTS}/${id}/rotate-secret`, {
      key: sk,
      idempotencyKey: true,
      body: {},
    });
    expectStatus(rotated, 200);
    const rotation = await onlyEntry('webhook_endpoint.secret_rotated', id);
    assert.doesNotMatch(JSON.stringify(rotation), new RegExp(rotated.body.data.secret));

    expectStatus(await t.request('DELETE', `${ENDPOINTS}/${id}`, { key: sk, idempotencyKey: true }), 200);
    await onlyEntry('webhook_endpoint.deleted', id);

    // Refused (already deleted): nothing written.
    const before = await entryCount(t, business.id);
    expectError(
      await t.request('DELETE', `${ENDPOINTS}/${id}`, { key: sk, idempotencyKey: true }),
      404,
      'ENDPOINT_NOT_FOUND',
    );
    assert.equal(await entryCount(t, business.id), before);
  });

  test('a replayed write (same idempotency key) writes no second entry', async () => {
    const body = { url: 'http://127.0.0.1:9/replay', events: ['payment.confirmed'] };
    const first = await t.request('POST', ENDPOINTS, { key: sk, idempotencyKey: 'audit-replay-1', body });
    expectStatus(first, 201);
    const again = await t.request('POST', ENDPOINTS, { key: sk, idempotencyKey: 'audit-replay-1', body });
    expectStatus(again, 201);
    await onlyEntry('webhook_endpoint.created', first.body.data.id);
  });

  test('an intent refund: one entry naming the refund and its amount; a refused refund writes none', async () => {
    const reference = await earn(t, sk, 20_000);
    expectStatus(await act(t, sk, reference, 'refund', { amount: 5_000 }), 200);
    const entry = await onlyEntry('refund.created', reference);
    assert.equal(entry.target_kind, 'payment_intent');
    assert.equal(entry.details.amount, 5_000);
    assert.match(String(entry.details.refund), /.+/);

    const unpaid = await createIntent(t, sk, { amount: 1_000 });
    const before = await entryCount(t, business.id);
    expectError(await act(t, sk, unpaid.referenceNumber, 'refund'), 400, 'INTENT_REFUND_INVALID_STATUS');
    assert.equal(await entryCount(t, business.id), before);
  });

  test('payouts: created and cancelled, and a batch as one entry; a refused payout writes none', async () => {
    await earn(t, sk, 200_000);
    const created = await createPayout(t, sk, payoutTo(newPhone(), 10_000));
    expectStatus(created, 201);
    const reference = created.body.data.referenceNumber;
    const entry = await onlyEntry('payout.created', reference);
    assert.equal(entry.details.amount, 10_000);
    assert.equal(entry.details.seller, null);

    expectStatus(await t.request('POST', `${PAYOUTS}/${reference}/cancel`, { key: sk, idempotencyKey: true }), 200);
    await onlyEntry('payout.cancelled', reference);

    const batch = await t.request('POST', `${PAYOUTS}/batches`, {
      key: sk,
      idempotencyKey: true,
      body: { items: [payoutTo(newPhone(), 2_000), payoutTo(newPhone(), 3_000)] },
    });
    expectStatus(batch, 201);
    const batchEntry = await onlyEntry('payout_batch.created', batch.body.data.id);
    assert.deepEqual(batchEntry.details, { payouts: 2, amount: 5_000 });

    const before = await entryCount(t, business.id);
    expectError(await createPayout(t, sk, payoutTo(newPhone(), 900_000_00)), 402, 'INSUFFICIENT_FUNDS');
    assert.equal(await entryCount(t, business.id), before);
  });

  test('sellers: created, and updated naming the fields changed; an update that changes nothing writes none', async () => {
    const seller = await createSeller(t, sk, { name: 'Audit stall' });
    await onlyEntry('seller.created', seller.id);
    expectStatus(await patchSeller(t, sk, seller.id, { name: 'Audit stall 2', commissionBps: 500 }), 200);
    const entry = await onlyEntry('seller.updated', seller.id);
    assert.deepEqual(entry.details, { changed: ['name', 'commissionBps'] });
    expectStatus(await patchSeller(t, sk, seller.id, { name: 'Audit stall 2' }), 200);
    await onlyEntry('seller.updated', seller.id);
  });

  test('payment links: created and updated', async () => {
    const link = await createLink(t, sk, { label: 'Audit link', amountType: 'FIXED', amount: 1_500 });
    const created = await onlyEntry('payment_link.created', link.referenceNumber);
    assert.deepEqual(created.details, { amountType: 'FIXED' });
    expectStatus(await patchLink(t, sk, link.referenceNumber, { active: false, label: 'Renamed' }), 200);
    assert.deepEqual((await onlyEntry('payment_link.updated', link.referenceNumber)).details, {
      changed: ['label', 'active'],
    });
  });
});
