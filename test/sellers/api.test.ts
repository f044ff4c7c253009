import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { checkLedger } from '../../src/modules/payments/ledger.js';
import { expectError, expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import {
  createSeller,
  getSeller,
  patchSeller,
  postSeller,
  SELLERS,
  sellerAccount,
  sellerCount,
  sellerEvents,
} from './support.js';

const SELLER_FIELDS = [
  'commissionBps',
  'createdAt',
  'id',
  'metadata',
  'name',
  'payoutSchedule',
  'phone',
  'sandbox',
  'status',
  'updatedAt',
];

describe('sellers API (issue 52 item 1)', () => {
  let t: TestApp;
  let business: TestBusiness;
  let sk: string;
  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    business = await t.createBusiness({ name: 'Marché Capitale' });
    sk = business.keys.secretTest;
  });
  afterAll(() => t.close());

  test('create: 201 with an SL- id, every field, its ledger account at 0 and seller.created once', async () => {
    const response = await postSeller(t, sk, {
      name: '  Stall 12 - Fatimetou ',
      phone: '+22236000012',
      commissionBps: 500,
      metadata: { market: 'capitale' },
    });
    expectStatus(response, 201);
    const seller = response.body.data;
    assert.deepEqual(Object.keys(seller).sort(), SELLER_FIELDS);
    assert.match(seller.id, /^SL-\d{16}$/);
    assert.deepEqual(
      { ...seller, id: undefined, createdAt: undefined, updatedAt: undefined },
      {
        id: undefined,
        name: 'Stall 12 - Fatimetou',
        phone: '+22236000012',
        commissionBps: 500,
        status: 'ACTIVE',
        payoutSchedule: 'MANUAL',
        metadata: { market: 'capitale' },
        sandbox: true,
        createdAt: undefined,
        updatedAt: undefined,
      },
    );
    assert.equal(seller.createdAt, seller.updatedAt);
    assert.deepEqual(await getSeller(t, sk, seller.id), seller);

    const account = await sellerAccount(t, seller.id);
    assert.ok(account, 'the seller has its ledger account');
    assert.equal(Number(account.balance), 0);
    assert.equal(await sellerAccount(t, seller.id, 'live'), undefined, 'in its own environment only');

    const events = await sellerEvents(t, seller.id);
    assert.deepEqual(
      events.map((event) => event.event),
      ['seller.created'],
    );
    const body = events[0]!.body;
    assert.deepEqual(Object.keys(body), ['id', 'event', 'created_at', 'sandbox', 'data', 'sequence']);
    assert.equal(body.sequence, 1);
    assert.deepEqual(body.data, {
      id: seller.id,
      name: 'Stall 12 - Fatimetou',
      phone: '+222******12',
      commission_bps: 500,
      status: 'ACTIVE',
      payout_schedule: 'MANUAL',
      metadata: { market: 'capitale' },
      created_at: seller.createdAt,
      updated_at: seller.updatedAt,
    });
    const ledger = await checkLedger(t.runtime.db);
    assert.deepEqual(ledger.problems, []);
  });

  test('defaults: commissionBps 0, metadata {}', async () => {
    const seller = await createSeller(t, sk, { name: 'Stall 3', phone: '+22236000003' });
    assert.equal(seller.commissionBps, 0);
    assert.deepEqual(seller.metadata, {});
    assert.equal(seller.status, 'ACTIVE');
  });

  test('a replayed create answers the first seller: one row, one account, one event', async () => {
    const before = await sellerCount(t, business.id);
    const key = crypto.randomUUID();
    const body = { name: 'Stall 7', phone: '+22236000007' };
    const first = await postSeller(t, sk, body, key);
    expectStatus(first, 201);
    const again = await postSeller(t, sk, body, key);
    expectStatus(again, 201);
    assert.deepEqual(again.body, first.body);
    assert.equal(await sellerCount(t, business.id), before + 1);
    assert.equal((await sellerEvents(t, first.body.data.id)).length, 1);
    expectError(await postSeller(t, sk, { ...body, name: 'Stall 8' }, key), 422, 'IDEMPOTENCY_KEY_REUSED');
  });

  test('bad input: VALIDATION_ERROR naming the field, nothing written', async () => {
    const before = await sellerCount(t, business.id);
    const good = { name: 'Stall 9', phone: '+22236000009' };
    const cases: [Record<string, unknown>, string][] = [
      [{ ...good, phone: '36000009' }, 'body.phone'],
      [{ ...good, phone: '+0123456789' }, 'body.phone'],
      [{ ...good, commissionBps: -1 }, 'body.commissionBps'],
      [{ ...good, commissionBps: 10_001 }, 'body.commissionBps'],
      [{ ...good, commissionBps: 1.5 }, 'body.commissionBps'],
      [{ ...good, commissionBps: '500' }, 'body.commissionBps'],
      [{ ...good, name: '   ' }, 'body.name'],
      [{ ...good, name: '' }, 'body.name'],
      [{ phone: good.phone }, 'body.name'],
      [{ name: good.name }, 'body.phone'],
      [{ ...good, status: 'DISABLED' }, 'body.status'],
      [{ ...good, splits: [] }, 'body.splits'],
      [{ ...good, metadata: { note: 5 } }, 'body.metadata.note'],
    ];
    for (const [body, field] of cases) {
      const response = await postSeller(t, sk, body);
      expectError(response, 400, 'VALIDATION_ERROR');
      const fields = (response.body.error.details ?? []).map((detail: { field: string }) => detail.field);
      assert.ok(fields.includes(field), `${JSON.stringify(body)} names ${field}: ${response.text}`);
    }
    const manyKeys = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'v']));
    expectError(await postSeller(t, sk, { ...good, metadata: manyKeys }), 400, 'METADATA_TOO_MANY_KEYS');
    expectError(
      await postSeller(t, sk, { ...good, metadata: { long: 'x'.repeat(501) } }),
      400,
      'METADATA_VALUE_TOO_LONG',
    );
    expectError(await t.request('POST', SELLERS, { key: sk, body: good }), 400, 'IDEMPOTENCY_KEY_REQUIRED');
    assert.equal(await sellerCount(t, business.id), before);
  });

  test('commissionBps takes both ends: 0 and 10,000', async () => {
    assert.equal((await createSeller(t, sk, { commissionBps: 0 })).commissionBps, 0);
    assert.equal((await createSeller(t, sk, { commissionBps: 10_000 })).commissionBps, 10_000);
  });

  test('PATCH changes name, phone, commissionBps and status, with seller.updated once per change', async () => {
    const seller = await createSeller(t, sk, { name: 'Stall 20', phone: '+22236000020' });
    const response = await patchSeller(t, sk, seller.id, {
      name: ' Stall 20 bis ',
      phone: '+22236000021',
      commissionBps: 1_000,
    });
    expectStatus(response, 200);
    const changed = response.body.data;
    assert.equal(changed.name, 'Stall 20 bis');
    assert.equal(changed.phone, '+22236000021');
    assert.equal(changed.commissionBps, 1_000);
    assert.equal(changed.status, 'ACTIVE');
    assert.equal(changed.createdAt, seller.createdAt);
    assert.ok(changed.updatedAt >= seller.updatedAt);
    assert.deepEqual(await getSeller(t, sk, seller.id), changed);

    const disabled = await patchSeller(t, sk, seller.id, { status: 'DISABLED' });
    expectStatus(disabled, 200);
    assert.equal(disabled.body.data.status, 'DISABLED');

    // Nothing differs: the seller as it is, and no event.
    const same = await patchSeller(t, sk, seller.id, { status: 'DISABLED', name: 'Stall 20 bis' });
    expectStatus(same, 200);
    assert.deepEqual(same.body.data, disabled.body.data);

    const events = await sellerEvents(t, seller.id);
    assert.deepEqual(
      events.map((event) => [event.event, event.body.sequence]),
      [
        ['seller.created', 1],
        ['seller.updated', 2],
        ['seller.updated', 3],
      ],
    );
    assert.deepEqual(events[1]!.body.data, {
      id: seller.id,
      name: 'Stall 20 bis',
      phone: '+222******21',
      commission_bps: 1_000,
      status: 'ACTIVE',
      payout_schedule: 'MANUAL',
      metadata: {},
      created_at: seller.createdAt,
      updated_at: changed.updatedAt,
    });
    assert.equal(events[2]!.body.data.status, 'DISABLED');
    assert.equal(events[2]!.body.data.updated_at, disabled.body.data.updatedAt);

    // Metadata is replaced whole, as a payment link's is.
    const tagged = await patchSeller(t, sk, seller.id, { metadata: { stall: '20', market: 'Capitale' } });
    expectStatus(tagged, 200);
    assert.deepEqual(tagged.body.data.metadata, { stall: '20', market: 'Capitale' });
    const retagged = await patchSeller(t, sk, seller.id, { metadata: { stall: '21' } });
    assert.deepEqual(retagged.body.data.metadata, { stall: '21' });
    assert.equal((await sellerEvents(t, seller.id)).length, 5);

    // A disabled seller can be enabled again; it kept its account.
    expectStatus(await patchSeller(t, sk, seller.id, { status: 'ACTIVE' }), 200);
    assert.ok(await sellerAccount(t, seller.id));
  });

  test('PATCH refusals: an empty patch, bad fields, unknown fields, SELLER_NOT_FOUND', async () => {
    const seller = await createSeller(t, sk);
    const cases: [Record<string, unknown>, string | undefined][] = [
      [{}, undefined],
      [{ commissionBps: 10_001 }, 'body.commissionBps'],
      [{ commissionBps: -1 }, 'body.commissionBps'],
      [{ commissionBps: 1.5 }, 'body.commissionBps'],
      [{ phone: 'nope' }, 'body.phone'],
      [{ name: '  ' }, 'body.name'],
      [{ status: 'CLOSED' }, 'body.status'],
      [{ metadata: { a: 1 } }, 'body.metadata.a'],
    ];
    for (const [body, field] of cases) {
      const response = await patchSeller(t, sk, seller.id, body);
      expectError(response, 400, 'VALIDATION_ERROR');
      if (field) {
        const fields = (response.body.error.details ?? []).map((detail: { field: string }) => detail.field);
        assert.ok(fields.includes(field), `${JSON.stringify(body)} names ${field}: ${response.text}`);
      }
    }
    assert.deepEqual(await getSeller(t, sk, seller.id), seller);
    assert.equal((await sellerEvents(t, seller.id)).length, 1);
    expectError(await patchSeller(t, sk, 'SL-0000000000000000', { name: 'x' }), 404, 'SELLER_NOT_FOUND');
  });

  test('GET one: SELLER_NOT_FOUND for an unknown id and for another business', async () => {
    expectError(await t.request('GET', `${SELLERS}/SL-0000000000000000`, { key: sk }), 404, 'SELLER_NOT_FOUND');
    // A malformed id is the schema's (decision 079, 2026-12-07): 400, not 404.
    expectError(await t.request('GET', `${SELLERS}/nothing-like-an-id`, { key: sk }), 400, 'VALIDATION_ERROR');
    const other = await t.createBusiness({ name: 'Autre marché' });
    const theirs = await createSeller(t, other.keys.secretTest);
    expectError(await t.request('GET', `${SELLERS}/${theirs.id}`, { key: sk }), 404, 'SELLER_NOT_FOUND');
    expectError(await patchSeller(t, sk, theirs.id, { status: 'DISABLED' }), 404, 'SELLER_NOT_FOUND');
    expectError(await t.request('GET', `${SELLERS}/${theirs.id}/balance`, { key: sk }), 404, 'SELLER_NOT_FOUND');
    assert.equal((await getSeller(t, other.keys.secretTest, theirs.id)).status, 'ACTIVE');
  });

  test('balance: the shape of GET /balance, at 0', async () => {
    const seller = await createSeller(t, sk);
    const response = await t.request('GET', `${SELLERS}/${seller.id}/balance`, { key: sk });
    expectStatus(response, 200);
    assert.deepEqual(response.body.data, { available: 0, currency: 'MRU', sandbox: true });
    const merchant = await t.request('GET', '/api/v1/dev/balance', { key: sk });
    assert.deepEqual(Object.keys(response.body.data).sort(), Object.keys(merchant.body.data).sort());
    expectError(await t.request('GET', `${SELLERS}/SL-0000000000000000/balance`, { key: sk }), 404, 'SELLER_NOT_FOUND');
    expectError(
      await t.request('GET', `${SELLERS}/${seller.id}/balance?seller=x`, { key: sk }),
      400,
      'VALIDATION_ERROR',
    );
    assert.deepEqual((await checkLedger(t.runtime.db)).problems, []);
  });
});
