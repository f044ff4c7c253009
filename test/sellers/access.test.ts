import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { allScopes } from '../../src/modules/keys/scopes.js';
import { expectError, expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { createSeller, getSeller, patchSeller, postSeller, SELLERS, sellerAccount, sellerEvents } from './support.js';

const MIGRATION = path.resolve(import.meta.dirname, '../../src/db/migrations/044_sellers.sql');

describe('sellers: keys, scopes, environments and lists (issue 52 item 1)', () => {
  let t: TestApp;
  let business: TestBusiness;
  let sk: string;
  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000', RATE_LIMIT_LIVE_PER_MINUTE: '100000' } });
    business = await t.createBusiness({ name: 'Marché Capitale', approveLive: true });
    sk = business.keys.secretTest;
  });
  afterAll(() => t.close());

  async function keyWith(scopes: string[], kind: 'secret' | 'publishable' = 'secret') {
    const response = await t.admin('POST', '/keys', { businessId: business.id, kind, environment: 'test', scopes });
    expectStatus(response, 201);
    return response.body.data.key as string;
  }

  test('new secret keys get sellers:read and sellers:write', () => {
    const secret = business.keyRecords.find((key) => key.kind === 'secret' && key.environment === 'test');
    assert.ok(secret);
    assert.ok(secret.scopes.includes('sellers:read') && secret.scopes.includes('sellers:write'));
    assert.ok(allScopes.includes('sellers:read') && allScopes.includes('sellers:write'));
  });

  test('scopes refused with SCOPE_REQUIRED; publishable keys with SECRET_KEY_REQUIRED', async () => {
    const seller = await createSeller(t, sk);
    const reader = await keyWith(['sellers:read']);
    expectError(await postSeller(t, reader, { name: 'x', phone: '+22236000001' }), 403, 'SCOPE_REQUIRED');
    expectError(await patchSeller(t, reader, seller.id, { status: 'DISABLED' }), 403, 'SCOPE_REQUIRED');
    assert.equal((await getSeller(t, reader, seller.id)).id, seller.id);
    expectStatus(await t.request('GET', `${SELLERS}/${seller.id}/balance`, { key: reader }), 200);

    const writer = await keyWith(['sellers:write']);
    expectError(await t.request('GET', SELLERS, { key: writer }), 403, 'SCOPE_REQUIRED');

    // balance:read and intents:read, the merchant balance's scopes, do not read a seller's.
    const none = await keyWith(['intents:read', 'intents:write', 'balance:read']);
    expectError(await t.request('GET', SELLERS, { key: none }), 403, 'SCOPE_REQUIRED');
    expectError(await t.request('GET', `${SELLERS}/${seller.id}`, { key: none }), 403, 'SCOPE_REQUIRED');
    expectError(await t.request('GET', `${SELLERS}/${seller.id}/balance`, { key: none }), 403, 'SCOPE_REQUIRED');
    expectError(await postSeller(t, none, { name: 'x', phone: '+22236000001' }), 403, 'SCOPE_REQUIRED');

    const pk = business.keys.publishableTest;
    expectError(await t.request('GET', SELLERS, { key: pk }), 403, 'SECRET_KEY_REQUIRED');
    expectError(await t.request('GET', `${SELLERS}/${seller.id}`, { key: pk }), 403, 'SECRET_KEY_REQUIRED');
    expectError(await t.request('GET', `${SELLERS}/${seller.id}/balance`, { key: pk }), 403, 'SECRET_KEY_REQUIRED');
    expectError(await postSeller(t, pk, { name: 'x', phone: '+22236000001' }), 403, 'SECRET_KEY_REQUIRED');
    expectError(await patchSeller(t, pk, seller.id, { name: 'y' }), 403, 'SECRET_KEY_REQUIRED');
    assert.equal((await sellerEvents(t, seller.id)).length, 1, 'nothing refused was written');
  });

  test("migration 044 gives the sellers' scopes to the secret keys that exist, once", async () => {
    const old = await keyWith(['intents:read', 'balance:read']);
    const publishable = await keyWith(['intents:read'], 'publishable');
    const update = /^UPDATE api_keys[\s\S]*?;$/m.exec(readFileSync(MIGRATION, 'utf8'))?.[0];
    assert.ok(update, 'the migration has its UPDATE of api_keys');
    await sql.raw(update).execute(t.runtime.db);
    await sql.raw(update).execute(t.runtime.db);
    const scopesOf = async (hint: string) => {
      const rows = await t.runtime.db.selectFrom('api_keys').select(['key_hint', 'scopes']).execute();
      return rows.find((row) => hint.endsWith(row.key_hint.replace(/^.*\.\.\./, '')))?.scopes;
    };
    assert.deepEqual(await scopesOf(old), ['intents:read', 'balance:read', 'sellers:read', 'sellers:write']);
    assert.deepEqual(await scopesOf(publishable), ['intents:read']);
  });

  test('the other environment: SANDBOX_MISMATCH; each environment lists its own', async () => {
    const test = await createSeller(t, sk, { name: 'Sandbox stall' });
    const live = await createSeller(t, business.keys.secretLive, { name: 'Live stall' });
    assert.equal(live.sandbox, false);
    assert.ok(await sellerAccount(t, live.id, 'live'));
    assert.equal(await sellerAccount(t, live.id, 'test'), undefined);
    const events = await sellerEvents(t, live.id);
    assert.deepEqual(
      events.map((event) => [event.event, event.environment, event.body.sandbox]),
      [['seller.created', 'live', false]],
    );

    const secretLive = business.keys.secretLive;
    expectError(await t.request('GET', `${SELLERS}/${test.id}`, { key: secretLive }), 403, 'SANDBOX_MISMATCH');
    expectError(await t.request('GET', `${SELLERS}/${live.id}`, { key: sk }), 403, 'SANDBOX_MISMATCH');
    expectError(await patchSeller(t, sk, live.id, { status: 'DISABLED' }), 403, 'SANDBOX_MISMATCH');
    expectError(await t.request('GET', `${SELLERS}/${live.id}/balance`, { key: sk }), 403, 'SANDBOX_MISMATCH');
    assert.equal((await getSeller(t, secretLive, live.id)).status, 'ACTIVE');

    const liveList = await t.request('GET', SELLERS, { key: secretLive });
    expectStatus(liveList, 200);
    assert.deepEqual(
      liveList.body.data.items.map((seller: { id: string }) => seller.id),
      [live.id],
    );
    const balance = await t.request('GET', `${SELLERS}/${live.id}/balance`, { key: secretLive });
    assert.deepEqual(balance.body.data, { available: 0, currency: 'MRU', sandbox: false });
  });

  test('list: newest first, paginated, filtered by status, one business only', async () => {
    const shop = await t.createBusiness({ name: 'Marché Sebkha' });
    const key = shop.keys.secretTest;
    const made = [];
    for (let i = 0; i < 5; i++) made.push(await createSeller(t, key, { name: `Stall ${i}` }));
    expectStatus(await patchSeller(t, key, made[1].id, { status: 'DISABLED' }), 200);
    expectStatus(await patchSeller(t, key, made[3].id, { status: 'DISABLED' }), 200);
    await createSeller(t, sk, { name: 'Not theirs' });

    const all = await t.request('GET', `${SELLERS}?limit=2`, { key });
    expectStatus(all, 200);
    assert.deepEqual(
      { ...all.body.data, items: all.body.data.items.map((seller: { id: string }) => seller.id) },
      { items: [made[4].id, made[3].id], page: 1, limit: 2, total: 5, hasMore: true },
    );
    const last = await t.request('GET', `${SELLERS}?limit=2&page=3`, { key });
    assert.deepEqual(
      { ...last.body.data, items: last.body.data.items.map((seller: { id: string }) => seller.id) },
      { items: [made[0].id], page: 3, limit: 2, total: 5, hasMore: false },
    );
    const disabled = await t.request('GET', `${SELLERS}?status=DISABLED`, { key });
    assert.deepEqual(
      disabled.body.data.items.map((seller: { id: string }) => seller.id),
      [made[3].id, made[1].id],
    );
    assert.equal(disabled.body.data.total, 2);
    const active = await t.request('GET', `${SELLERS}?status=ACTIVE`, { key });
    assert.equal(active.body.data.total, 3);
    assert.ok(active.body.data.items.every((seller: { status: string }) => seller.status === 'ACTIVE'));

    expectError(await t.request('GET', `${SELLERS}?status=CLOSED`, { key }), 400, 'VALIDATION_ERROR');
    expectError(await t.request('GET', `${SELLERS}?seller=x`, { key }), 400, 'VALIDATION_ERROR');
    expectError(await t.request('GET', `${SELLERS}?limit=0`, { key }), 400, 'VALIDATION_ERROR');
  });

  test('the Events API reads seller events with sellers:read, by type and object', async () => {
    const seller = await createSeller(t, sk, { name: 'Evented' });
    expectStatus(await patchSeller(t, sk, seller.id, { commissionBps: 250 }), 200);
    const response = await t.request('GET', `/api/v1/dev/events?type=seller.*&object=${seller.id}`, { key: sk });
    expectStatus(response, 200);
    assert.deepEqual(
      response.body.data.items.map((event: { type: string }) => event.type),
      ['seller.updated', 'seller.created'],
    );
    const blind = await keyWith(['webhooks:read']);
    const hidden = await t.request('GET', `/api/v1/dev/events?object=${seller.id}`, { key: blind });
    expectStatus(hidden, 200);
    assert.equal(hidden.body.data.items.length, 0, 'a key without sellers:read does not read them');
  });
});
