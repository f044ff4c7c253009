import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { expectError, expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { createIntent } from '../intents/support.js';
import { DELIVERIES, ENDPOINTS, webhookHelpers, type TestEndpoint } from './support.js';

/** Issue 36, item 3: the delivery log, retry, recover and endpoint edits hold to the key's scopes. */
describe('webhook scopes on the delivery log and endpoint edits (issue 36, item 3)', () => {
  let t: TestApp;
  let business: TestBusiness;
  let full: string;
  let hooks: ReturnType<typeof webhookHelpers>;

  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    hooks = webhookHelpers(t);
    business = await t.createBusiness();
    full = business.keys.secretTest;
  });
  afterAll(async () => {
    await t.close();
  });

  async function keyWith(scopes: string[]): Promise<string> {
    const response = await t.admin('POST', '/keys', {
      businessId: business.id,
      kind: 'secret',
      environment: 'test',
      scopes,
    });
    expectStatus(response, 201);
    return response.body.data.key as string;
  }

  /** An endpoint subscribed to payment.created (no worker runs: its deliveries stay in the log). */
  async function paymentEndpointWithDeliveries(count: number) {
    const endpoint: TestEndpoint = await hooks.createEndpoint(full, {
      url: 'https://93.184.216.34/hook',
      events: ['payment.created'],
    });
    for (let i = 0; i < count; i++) {
      await createIntent(t, full, { amount: 1000 + i, metadata: { customerName: 'Aicha', phone: '+22220001111' } });
    }
    const rows = await hooks.deliveriesOfEndpoint(endpoint.id);
    assert.equal(rows.length, count);
    return { endpoint, rows };
  }

  const endpointRow = (id: string) =>
    t.runtime.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const deliveryRow = (id: string) =>
    t.runtime.db.selectFrom('webhook_deliveries').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  test('a webhooks-only key reads no payment delivery, as the Events API shows it no payment event', async () => {
    const narrow = await keyWith(['webhooks:read', 'webhooks:write']);
    const { endpoint, rows } = await paymentEndpointWithDeliveries(2);
    const [delivery] = rows;
    assert.ok(delivery);

    // The full key reads the delivery and its payload.
    const seen = await t.request('GET', `${DELIVERIES}/${delivery.id}`, { key: full });
    expectStatus(seen, 200);
    assert.equal(seen.body.data.event, 'payment.created');
    assert.equal(seen.body.data.payload.event, 'payment.created');

    // The narrow key: not found, as GET /events/{id} answers for the same event.
    expectError(await t.request('GET', `${DELIVERIES}/${delivery.id}`, { key: narrow }), 404, 'DELIVERY_NOT_FOUND');
    expectError(
      await t.request('GET', `/api/v1/dev/events/${delivery.event_id}`, { key: narrow }),
      404,
      'EVENT_NOT_FOUND',
    );
    for (const query of ['', `?endpointId=${endpoint.id}`, '?event=payment.created', `?eventId=${delivery.event_id}`]) {
      const list = await t.request('GET', `${DELIVERIES}${query}`, { key: narrow });
      expectStatus(list, 200);
      assert.deepEqual(list.body.data.items, [], query);
      assert.equal(list.body.data.total, 0, query);
    }
    const fullList = await t.request('GET', `${DELIVERIES}?endpointId=${endpoint.id}`, { key: full });
    assert.equal(fullList.body.data.total, 2);
    const unfiltered = await t.request('GET', DELIVERIES, { key: full });
    assert.ok(unfiltered.body.data.total >= 2);

    // A ping to the endpoint is a webhook notice: any webhooks key sends it and reads its delivery.
    const pingId = await hooks.ping(narrow, endpoint.id);
    expectStatus(await t.request('GET', `${DELIVERIES}/${pingId}`, { key: narrow }), 200);
    const withPing = await t.request('GET', `${DELIVERIES}?endpointId=${endpoint.id}`, { key: narrow });
    assert.deepEqual(
      withPing.body.data.items.map((item: { id: string }) => item.id),
      [pingId],
    );
    assert.equal((await t.request('GET', DELIVERIES, { key: narrow })).body.data.total, 1);
  });

  test('a webhooks-only key cannot edit, rotate, switch, delete, retry or recover a payment endpoint', async () => {
    const narrow = await keyWith(['webhooks:read', 'webhooks:write']);
    const { endpoint, rows } = await paymentEndpointWithDeliveries(2);
    const ids = rows.map((row) => row.id);
    await t.runtime.db
      .updateTable('webhook_deliveries')
      .set({ status: 'DEAD', dead_reason: 'MAX_ATTEMPTS' })
      .where('id', 'in', ids)
      .execute();
    const endpointBefore = await endpointRow(endpoint.id);
    const deliveriesBefore = await Promise.all(ids.map(deliveryRow));

    const refused = async (method: string, path: string, body: unknown = {}) => {
      const response = await t.request(method, path, { key: narrow, idempotencyKey: true, body });
      expectError(response, 403, 'EVENTS_NOT_PERMITTED');
      assert.match(response.body.error.message, /payment\.created: it needs the scope\(s\) intents:read/);
    };
    const at = `${ENDPOINTS}/${endpoint.id}`;
    await refused('PATCH', at, { url: 'https://93.184.216.35/mine' });
    await refused('PATCH', at, { active: false });
    await refused('PATCH', at, { maxPerSecond: 1 });
    await refused('POST', `${at}/rotate-secret`);
    await refused('DELETE', at);
    await refused('POST', `${at}/recover`, { since: '2000-01-01' });
    // A delivery it cannot read is not found to it; so is its retry.
    expectError(
      await t.request('POST', `${DELIVERIES}/${ids[0]}/retry`, { key: narrow, idempotencyKey: true, body: {} }),
      404,
      'DELIVERY_NOT_FOUND',
    );
    // A ping delivery of the same endpoint it reads, but may not resend there.
    const pingId = await hooks.ping(narrow, endpoint.id);
    await t.runtime.db
      .updateTable('webhook_deliveries')
      .set({ status: 'DEAD', dead_reason: 'MAX_ATTEMPTS' })
      .where('id', '=', pingId)
      .execute();
    await refused('POST', `${DELIVERIES}/${pingId}/retry`);
    assert.equal((await deliveryRow(pingId)).status, 'DEAD');

    // Nothing changed.
    assert.deepEqual(await endpointRow(endpoint.id), endpointBefore);
    assert.deepEqual(await Promise.all(ids.map(deliveryRow)), deliveriesBefore);

    // A key that may read payments may do all of it.
    const payments = await keyWith(['intents:read', 'webhooks:read', 'webhooks:write']);
    const patched = await t.request('PATCH', at, {
      key: payments,
      idempotencyKey: true,
      body: { url: 'https://93.184.216.35/moved' },
    });
    expectStatus(patched, 200);
    assert.equal(patched.body.data.url, 'https://93.184.216.35/moved');

    // The full key still can.
    const rotated = await t.request('POST', `${at}/rotate-secret`, { key: full, idempotencyKey: true, body: {} });
    expectStatus(rotated, 200);
    assert.notEqual(rotated.body.data.secret, endpointBefore.secret);
    const retried = await t.request('POST', `${DELIVERIES}/${ids[0]}/retry`, {
      key: full,
      idempotencyKey: true,
      body: {},
    });
    expectStatus(retried, 200);
    assert.equal(retried.body.data.status, 'PENDING');
    const recovered = await t.request('POST', `${at}/recover`, {
      key: full,
      idempotencyKey: true,
      body: { since: '2000-01-01' },
    });
    expectStatus(recovered, 200);
    assert.equal(recovered.body.data.recovered, 2); // the other payment delivery and the ping
    const switched = await t.request('PATCH', at, { key: full, idempotencyKey: true, body: { active: false } });
    expectStatus(switched, 200);
    assert.equal(switched.body.data.active, false);
    expectStatus(await t.request('DELETE', at, { key: full, idempotencyKey: true }), 200);
  });

  test('a webhooks-only key still manages an endpoint it could have subscribed itself', async () => {
    const narrow = await keyWith(['webhooks:read', 'webhooks:write', 'payouts:read']);
    const endpoint = await hooks.createEndpoint(narrow, {
      url: 'https://93.184.216.34/payouts',
      events: ['payout.paid'],
    });
    const at = `${ENDPOINTS}/${endpoint.id}`;
    expectStatus(
      await t.request('PATCH', at, { key: narrow, idempotencyKey: true, body: { url: 'https://93.184.216.35/p' } }),
      200,
    );
    expectStatus(await t.request('POST', `${at}/rotate-secret`, { key: narrow, idempotencyKey: true, body: {} }), 200);
    expectStatus(await t.request('DELETE', at, { key: narrow, idempotencyKey: true }), 200);
  });
});
