import assert from 'node:assert/strict';
import { afterAll, beforeAll, beforeEach, describe, test } from 'vitest';
import { manualClock } from '../support/clock.js';
import {
  expectError,
  expectStatus,
  startTestApp,
  waitUntil,
  type TestApp,
  type TestBusiness,
} from '../support/harness.js';
import { createLink, getLink, LINKS, newWallet, patchLink, payLink, payerView, slugOf } from './support.js';

const PAY_URL = 'https://pay.example';
const MAX_AMOUNT = 100_000_000;

const LINK_FIELDS = [
  'active',
  'amount',
  'amountCollected',
  'amountType',
  'collect',
  'createdAt',
  'currency',
  'expiresAt',
  'inactiveMessage',
  'label',
  'maxAmount',
  'maxPayments',
  'metadata',
  'minAmount',
  'paymentsCount',
  'qrUrl',
  'referenceNumber',
  'sandbox',
  'status',
  'successUrl',
  'updatedAt',
  'url',
];

describe('payment links API (issue 50 item 1)', () => {
  const clock = manualClock();
  let t: TestApp;
  let business: TestBusiness;
  let sk: string;
  beforeAll(async () => {
    t = await startTestApp({ clock, config: { RATE_LIMIT_TEST_PER_MINUTE: '100000', PAY_URL } });
    business = await t.createBusiness({ name: 'Boutique Tevragh Zeina' });
    sk = business.keys.secretTest;
  });
  afterAll(() => t.close());
  // The payer API's per-address limit is the checkout's: each test starts a fresh minute.
  beforeEach(() => clock.advance(60_000));

  test('create a FIXED link: 201 with its reference, url, QR and every field', async () => {
    const response = await t.request('POST', LINKS, {
      key: sk,
      idempotencyKey: true,
      body: {
        label: 'Couscous royal',
        amountType: 'FIXED',
        amount: 150_000,
        maxPayments: 50,
        collect: { name: true, note: true },
        successUrl: 'https://shop.example/merci',
        metadata: { menu: 'friday' },
      },
    });
    expectStatus(response, 201);
    const link = response.body.data;
    assert.deepEqual(Object.keys(link).sort(), LINK_FIELDS);
    assert.match(link.referenceNumber, /^PL-\d{16}$/);
    assert.match(link.url, /^https:\/\/pay\.example\/l\/[0-9A-Za-z]{12}$/);
    assert.equal(link.qrUrl, `${link.url}/qr.svg`);
    assert.deepEqual(
      {
        label: link.label,
        amountType: link.amountType,
        amount: link.amount,
        minAmount: link.minAmount,
        maxAmount: link.maxAmount,
        currency: link.currency,
        maxPayments: link.maxPayments,
        expiresAt: link.expiresAt,
        collect: link.collect,
        successUrl: link.successUrl,
        metadata: link.metadata,
        status: link.status,
        active: link.active,
        inactiveMessage: link.inactiveMessage,
        paymentsCount: link.paymentsCount,
        amountCollected: link.amountCollected,
        sandbox: link.sandbox,
      },
      {
        label: 'Couscous royal',
        amountType: 'FIXED',
        amount: 150_000,
        minAmount: null,
        maxAmount: null,
        currency: 'MRU',
        maxPayments: 50,
        expiresAt: null,
        collect: { name: true, note: true },
        successUrl: 'https://shop.example/merci',
        metadata: { menu: 'friday' },
        status: 'ACTIVE',
        active: true,
        inactiveMessage: null,
        paymentsCount: 0,
        amountCollected: 0,
        sandbox: true,
      },
    );
    assert.equal(link.createdAt, link.updatedAt);
    assert.deepEqual(await getLink(t, sk, link.referenceNumber), link);
  });

  test('create an OPEN link: bounds optional, defaults for the rest', async () => {
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    const open = await createLink(t, sk, {
      label: 'Don',
      amountType: 'OPEN',
      minAmount: 500,
      maxAmount: 2_000_000,
      expiresAt,
    });
    assert.equal(open.amountType, 'OPEN');
    assert.equal(open.amount, null);
    assert.equal(open.minAmount, 500);
    assert.equal(open.maxAmount, 2_000_000);
    assert.equal(open.expiresAt, expiresAt);
    assert.equal(open.maxPayments, null);
    assert.deepEqual(open.collect, { name: false, note: false });
    assert.deepEqual(open.metadata, {});
    assert.equal(open.successUrl, null);
    assert.equal(open.status, 'ACTIVE');

    const unbounded = await createLink(t, sk, { label: 'Libre', amountType: 'OPEN' });
    assert.equal(unbounded.minAmount, null);
    assert.equal(unbounded.maxAmount, null);
    // The limits of the intents themselves are the bounds' own.
    const widest = await createLink(t, sk, { label: 'Large', amountType: 'OPEN', minAmount: 1, maxAmount: MAX_AMOUNT });
    assert.equal(widest.maxAmount, MAX_AMOUNT);
    const equal = await createLink(t, sk, { label: 'Egal', amountType: 'OPEN', minAmount: 700, maxAmount: 700 });
    assert.equal(equal.minAmount, 700);
    assert.notEqual(slugOf(open), slugOf(unbounded));
  });

  test('list: newest first, paginated, each status filter', async () => {
    const own = await t.createBusiness();
    const key = own.keys.secretTest;
    const active = await createLink(t, key, { label: 'A', amountType: 'FIXED', amount: 1000 });
    const inactive = await createLink(t, key, { label: 'B', amountType: 'FIXED', amount: 1000 });
    const completed = await createLink(t, key, { label: 'C', amountType: 'FIXED', amount: 1000, maxPayments: 1 });
    const expiring = await createLink(t, key, {
      label: 'D',
      amountType: 'OPEN',
      expiresAt: new Date(Date.now() + 1500).toISOString(),
    });
    expectStatus(await patchLink(t, key, inactive.referenceNumber, { active: false }), 200);
    const payer = await newWallet(t, 10_000);
    expectStatus(await payLink(t, completed, payer), 200);
    await waitUntil(
      async () => (await getLink(t, key, expiring.referenceNumber)).status === 'EXPIRED',
      'the link to expire',
    );

    const all = await t.request('GET', LINKS, { key });
    expectStatus(all, 200);
    assert.deepEqual(
      all.body.data.items.map((link: { label: string }) => link.label),
      ['D', 'C', 'B', 'A'],
    );
    assert.deepEqual(
      { page: all.body.data.page, limit: all.body.data.limit, total: all.body.data.total, more: all.body.data.hasMore },
      { page: 1, limit: 20, total: 4, more: false },
    );
    const page1 = await t.request('GET', `${LINKS}?limit=3`, { key });
    const page2 = await t.request('GET', `${LINKS}?limit=3&page=2`, { key });
    assert.deepEqual(
      page1.body.data.items.map((link: { label: string }) => link.label),
      ['D', 'C', 'B'],
    );
    assert.equal(page1.body.data.hasMore, true);
    assert.deepEqual(
      page2.body.data.items.map((link: { label: string }) => link.label),
      ['A'],
    );
    assert.equal(page2.body.data.hasMore, false);
    assert.equal(page2.body.data.total, 4);

    const expected = {
      ACTIVE: active.referenceNumber,
      INACTIVE: inactive.referenceNumber,
      COMPLETED: completed.referenceNumber,
      EXPIRED: expiring.referenceNumber,
    };
    for (const [status, reference] of Object.entries(expected)) {
      const filtered = await t.request('GET', `${LINKS}?status=${status}`, { key });
      expectStatus(filtered, 200);
      assert.deepEqual(
        filtered.body.data.items.map((link: { referenceNumber: string; status: string }) => [
          link.referenceNumber,
          link.status,
        ]),
        [[reference, status]],
        status,
      );
      assert.equal(filtered.body.data.total, 1);
    }
    // A link switched off is INACTIVE whatever else it is: it leaves COMPLETED for INACTIVE.
    expectStatus(await patchLink(t, key, completed.referenceNumber, { active: false }), 200);
    const off = await t.request('GET', `${LINKS}?status=INACTIVE`, { key });
    assert.equal(off.body.data.total, 2);
    expectError(await t.request('GET', `${LINKS}?status=PAID`, { key }), 400, 'VALIDATION_ERROR');
    // The other environment's list is its own.
    const live = await t.request('GET', LINKS, { key: own.keys.secretLive });
    expectStatus(live, 200);
    assert.equal(live.body.data.total, 0);
  });

  test('PATCH each field, and what may not be changed so', async () => {
    const link = await createLink(t, sk, {
      label: 'Tissu',
      amountType: 'FIXED',
      amount: 2500,
      metadata: { a: '1', b: '2' },
    });
    const ref = link.referenceNumber;
    const patch = async (body: Record<string, unknown>) => {
      const response = await patchLink(t, sk, ref, body);
      expectStatus(response, 200);
      return response.body.data;
    };

    const relabelled = await patch({ label: 'Tissu bazin' });
    assert.equal(relabelled.label, 'Tissu bazin');
    assert.ok(relabelled.updatedAt > link.updatedAt || relabelled.updatedAt !== link.updatedAt);
    assert.equal(relabelled.createdAt, link.createdAt);

    const off = await patch({ active: false, inactiveMessage: 'Rupture de stock' });
    assert.equal(off.active, false);
    assert.equal(off.status, 'INACTIVE');
    assert.equal(off.inactiveMessage, 'Rupture de stock');
    const page = await payerView(t, link);
    assert.equal(page.body.data.status, 'INACTIVE');
    assert.equal(page.body.data.refusal, 'PAYMENT_LINK_INACTIVE');
    assert.equal(page.body.data.inactiveMessage, 'Rupture de stock');
    const on = await patch({ active: true });
    assert.equal(on.status, 'ACTIVE');
    // The message stays for the next time; the payer reads it only while the link is off.
    assert.equal(on.inactiveMessage, 'Rupture de stock');
    assert.equal((await payerView(t, link)).body.data.inactiveMessage, null);
    assert.equal((await patch({ inactiveMessage: null })).inactiveMessage, null);

    assert.equal((await patch({ maxPayments: 3 })).maxPayments, 3);
    assert.equal((await patch({ maxPayments: null })).maxPayments, null);
    const payer = await newWallet(t, 100_000);
    expectStatus(await payLink(t, link, payer), 200);
    expectStatus(await payLink(t, link, payer), 200);
    const below = await patchLink(t, sk, ref, { maxPayments: 1 });
    expectError(below, 400, 'VALIDATION_ERROR');
    assert.equal(below.body.error.details[0].field, 'body.maxPayments');
    const reached = await patch({ maxPayments: 2 });
    assert.equal(reached.status, 'COMPLETED');
    assert.equal(reached.paymentsCount, 2);
    assert.equal((await patch({ maxPayments: 5 })).status, 'ACTIVE');
    for (const maxPayments of [0, -1, 1_000_001, 2.5]) {
      const refused = await patchLink(t, sk, ref, { maxPayments });
      expectError(refused, 400, 'VALIDATION_ERROR');
      assert.match(refused.body.error.details[0].field, /^body\.maxPayments/, refused.text);
    }

    const later = new Date(Date.now() + 3_600_000).toISOString();
    assert.equal((await patch({ expiresAt: later })).expiresAt, later);
    assert.equal((await patch({ expiresAt: null })).expiresAt, null);
    for (const expiresAt of [new Date(Date.now() - 1000).toISOString(), 'tomorrow']) {
      const refused = await patchLink(t, sk, ref, { expiresAt });
      expectError(refused, 400, 'VALIDATION_ERROR');
      assert.equal(refused.body.error.details[0].field, 'body.expiresAt', refused.text);
    }

    // Metadata is replaced whole.
    assert.deepEqual((await patch({ metadata: { c: '3' } })).metadata, { c: '3' });
    const tooMany = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'v']));
    expectError(await patchLink(t, sk, ref, { metadata: tooMany }), 400, 'METADATA_TOO_MANY_KEYS');
    expectError(await patchLink(t, sk, ref, { metadata: { c: 'x'.repeat(501) } }), 400, 'METADATA_VALUE_TOO_LONG');

    for (const body of [{ label: '' }, { label: 'x'.repeat(201) }, { amount: 100 }, { active: 'no' }]) {
      const refused = await patchLink(t, sk, ref, body);
      expectError(refused, 400, 'VALIDATION_ERROR');
    }
    const unchanged = await patch({});
    assert.equal(unchanged.label, 'Tissu bazin');
    assert.deepEqual(unchanged.metadata, { c: '3' });
    assert.equal(unchanged.amount, 2500);
    assert.equal(unchanged.paymentsCount, 2);
    assert.equal(unchanged.amountCollected, 5000);
  });

  test("a link's intents: newest first, paginated, each with its link and what the payer wrote", async () => {
    const link = await createLink(t, sk, {
      label: 'Cotisation',
      amountType: 'OPEN',
      collect: { name: true, note: true },
      metadata: { club: 'nktt' },
    });
    const payer = await newWallet(t, 100_000);
    const paid: string[] = [];
    for (const [amount, name, note] of [
      [1000, 'Aicha', 'janvier'],
      [2000, 'Mariem', undefined],
      [3000, 'Sidi', 'mars'],
    ] as const) {
      const response = await payLink(t, link, { ...payer, amount, name, ...(note ? { note } : {}) });
      expectStatus(response, 200);
      paid.push(response.body.data.receipt.reference);
    }
    const listed = await t.request('GET', `${LINKS}/${link.referenceNumber}/intents`, { key: sk });
    expectStatus(listed, 200);
    const items = listed.body.data.items;
    assert.deepEqual(
      items.map((intent: { referenceNumber: string }) => intent.referenceNumber),
      [...paid].reverse(),
    );
    assert.deepEqual(
      items.map((intent: any) => [
        intent.status,
        intent.payment?.amountPaid,
        intent.paymentLink,
        intent.payerName,
        intent.payerNote,
      ]),
      [
        ['PAID', 3000, link.referenceNumber, 'Sidi', 'mars'],
        ['PAID', 2000, link.referenceNumber, 'Mariem', undefined],
        ['PAID', 1000, link.referenceNumber, 'Aicha', 'janvier'],
      ],
    );
    assert.deepEqual(items[0].metadata, { club: 'nktt' });
    assert.equal(items[0].label, 'Cotisation');
    assert.equal(listed.body.data.total, 3);

    const page = await t.request('GET', `${LINKS}/${link.referenceNumber}/intents?limit=2&page=2`, { key: sk });
    expectStatus(page, 200);
    assert.deepEqual(
      page.body.data.items.map((intent: { referenceNumber: string }) => intent.referenceNumber),
      [paid[0]],
    );
    assert.equal(page.body.data.hasMore, false);

    // The intent itself says so too; a plain intent has none of the three fields.
    const intent = await t.request('GET', `/api/v1/dev/intents/${paid[2]}`, { key: sk });
    expectStatus(intent, 200);
    assert.equal(intent.body.data.paymentLink, link.referenceNumber);
    assert.equal(intent.body.data.payerName, 'Sidi');
    assert.equal(intent.body.data.payerNote, 'mars');
    const plain = await t.request('POST', '/api/v1/dev/intents', {
      key: sk,
      idempotencyKey: true,
      body: { amount: 100 },
    });
    expectStatus(plain, 201);
    for (const field of ['paymentLink', 'payerName', 'payerNote']) assert.ok(!(field in plain.body.data), field);

    const counted = await getLink(t, sk, link.referenceNumber);
    assert.equal(counted.paymentsCount, 3);
    assert.equal(counted.amountCollected, 6000);

    const none = await createLink(t, sk, { label: 'Vide', amountType: 'OPEN' });
    const empty = await t.request('GET', `${LINKS}/${none.referenceNumber}/intents`, { key: sk });
    expectStatus(empty, 200);
    assert.deepEqual(empty.body.data.items, []);
    assert.equal(empty.body.data.total, 0);
  });

  describe('bad input: 400 VALIDATION_ERROR naming the field', () => {
    const cases: [string, Record<string, unknown>, string][] = [
      ['amount on OPEN', { amountType: 'OPEN', amount: 1000 }, 'body.amount'],
      ['minAmount on FIXED', { amountType: 'FIXED', amount: 1000, minAmount: 100 }, 'body.minAmount'],
      ['maxAmount on FIXED', { amountType: 'FIXED', amount: 1000, maxAmount: 100_000 }, 'body.maxAmount'],
      ['FIXED without amount', { amountType: 'FIXED' }, 'body.amount'],
      ['min above max', { amountType: 'OPEN', minAmount: 5000, maxAmount: 4999 }, 'body.minAmount'],
      ['FIXED amount 0', { amountType: 'FIXED', amount: 0 }, 'body.amount'],
      ['FIXED amount negative', { amountType: 'FIXED', amount: -5 }, 'body.amount'],
      ['FIXED amount above the intent limit', { amountType: 'FIXED', amount: MAX_AMOUNT + 1 }, 'body.amount'],
      ['FIXED amount not an integer', { amountType: 'FIXED', amount: 10.5 }, 'body.amount'],
      ['minAmount 0', { amountType: 'OPEN', minAmount: 0 }, 'body.minAmount'],
      ['maxAmount above the intent limit', { amountType: 'OPEN', maxAmount: MAX_AMOUNT + 1 }, 'body.maxAmount'],
      ['minAmount above the intent limit', { amountType: 'OPEN', minAmount: MAX_AMOUNT + 1 }, 'body.minAmount'],
      ['unknown amountType', { amountType: 'FREE', amount: 1000 }, 'body.amountType'],
      ['no amountType', { amount: 1000 }, 'body.amountType'],
      [
        'expiresAt in the past',
        { amountType: 'OPEN', expiresAt: new Date(Date.now() - 60_000).toISOString() },
        'body.expiresAt',
      ],
      ['expiresAt not a date', { amountType: 'OPEN', expiresAt: 'next week' }, 'body.expiresAt'],
      ['maxPayments 0', { amountType: 'OPEN', maxPayments: 0 }, 'body.maxPayments'],
      ['maxPayments above 1,000,000', { amountType: 'OPEN', maxPayments: 1_000_001 }, 'body.maxPayments'],
      ['label empty', { amountType: 'OPEN', label: '' }, 'body.label'],
      ['label of 201 characters', { amountType: 'OPEN', label: 'x'.repeat(201) }, 'body.label'],
      ['successUrl not a URL', { amountType: 'OPEN', successUrl: 'merci' }, 'body.successUrl'],
      ['successUrl not http(s)', { amountType: 'OPEN', successUrl: 'javascript:alert(1)' }, 'body.successUrl'],
      ['collect.name not a boolean', { amountType: 'OPEN', collect: { name: 'yes' } }, 'body.collect'],
      ['an unknown field', { amountType: 'OPEN', currency: 'EUR' }, 'body'],
      ['metadata value not a string', { amountType: 'OPEN', metadata: { n: 1 } }, 'body.metadata'],
      ['metadata key too long', { amountType: 'OPEN', metadata: { ['k'.repeat(41)]: 'v' } }, 'body.metadata'],
    ];
    for (const [name, body, field] of cases) {
      test(name, async () => {
        const response = await t.request('POST', LINKS, {
          key: sk,
          idempotencyKey: true,
          body: { label: 'Bad', ...body },
        });
        expectError(response, 400, 'VALIDATION_ERROR');
        const fields = (response.body.error.details ?? []).map((d: { field: string }) => d.field);
        assert.ok(
          fields.some((f: string) => f === field || f.startsWith(`${field}.`) || f.startsWith(`${field}/`)),
          `${field} not named: ${response.text}`,
        );
      });
    }

    test('a blank label is a missing one; a label is kept trimmed, on create and PATCH', async () => {
      for (const label of ['   ', '\t\n ']) {
        const response = await t.request('POST', LINKS, {
          key: sk,
          idempotencyKey: true,
          body: { label, amountType: 'OPEN' },
        });
        expectError(response, 400, 'VALIDATION_ERROR');
        assert.deepEqual(response.body.error.details, [{ field: 'body.label', message: 'is required' }]);
      }
      const link = await createLink(t, sk, { label: '  Thé à la menthe  ', amountType: 'OPEN' });
      assert.equal(link.label, 'Thé à la menthe');
      const blank = await patchLink(t, sk, link.referenceNumber, { label: '  ' });
      expectError(blank, 400, 'VALIDATION_ERROR');
      assert.deepEqual(blank.body.error.details, [{ field: 'body.label', message: 'is required' }]);
      const renamed = await patchLink(t, sk, link.referenceNumber, { label: ' Thé ' });
      expectStatus(renamed, 200);
      assert.equal(renamed.body.data.label, 'Thé');
      assert.equal((await payerView(t, link)).body.data.label, 'Thé');
    });

    test('lengths count characters, not UTF-16 units: 200 emoji make a label, 500 an inactive message', async () => {
      const link = await createLink(t, sk, { label: '🥖'.repeat(200), amountType: 'OPEN' });
      assert.equal([...link.label].length, 200);
      const message = await patchLink(t, sk, link.referenceNumber, {
        active: false,
        inactiveMessage: '🥖'.repeat(500),
      });
      expectStatus(message, 200);
      assert.equal([...message.body.data.inactiveMessage].length, 500);
      const tooLong = await patchLink(t, sk, link.referenceNumber, { inactiveMessage: '🥖'.repeat(501) });
      expectError(tooLong, 400, 'VALIDATION_ERROR');
      assert.equal(tooLong.body.error.details[0].field, 'body.inactiveMessage', tooLong.text);
    });

    test('a label of 200 characters and maxPayments 1,000,000 are allowed', async () => {
      const link = await createLink(t, sk, { label: 'x'.repeat(200), amountType: 'OPEN', maxPayments: 1_000_000 });
      assert.equal(link.label.length, 200);
      assert.equal(link.maxPayments, 1_000_000);
    });

    test('metadata codes: too many keys, a value too long', async () => {
      const tooMany = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'v']));
      const many = await t.request('POST', LINKS, {
        key: sk,
        idempotencyKey: true,
        body: { label: 'M', amountType: 'OPEN', metadata: tooMany },
      });
      expectError(many, 400, 'METADATA_TOO_MANY_KEYS');
      const long = await t.request('POST', LINKS, {
        key: sk,
        idempotencyKey: true,
        body: { label: 'M', amountType: 'OPEN', metadata: { note: 'x'.repeat(501) } },
      });
      expectError(long, 400, 'METADATA_VALUE_TOO_LONG');
      assert.equal(long.body.error.details[0].field, 'body.metadata.note');
      // Nothing was made of either.
      const listed = await t.request('GET', LINKS, { key: sk, headers: {} });
      assert.ok(!listed.text.includes('"label":"M"'));
    });

    test('a body that is not JSON, or none', async () => {
      expectError(
        await t.request('POST', LINKS, {
          key: sk,
          idempotencyKey: true,
          rawBody: '{"label":',
          headers: { 'content-type': 'application/json' },
        }),
        400,
        'INVALID_JSON',
      );
      expectError(await t.request('POST', LINKS, { key: sk, idempotencyKey: true, body: {} }), 400, 'VALIDATION_ERROR');
    });
  });

  describe('who may see a link', () => {
    test('PAYMENT_LINK_NOT_FOUND: an unknown reference, another business’s link', async () => {
      const link = await createLink(t, sk, { label: 'Mine', amountType: 'FIXED', amount: 100 });
      const other = await t.createBusiness();
      const otherKey = other.keys.secretTest;
      for (const key of [sk, otherKey]) {
        const reference = key === sk ? 'PL-0000000000000000' : link.referenceNumber;
        expectError(await t.request('GET', `${LINKS}/${reference}`, { key }), 404, 'PAYMENT_LINK_NOT_FOUND');
        expectError(await patchLink(t, key, reference, { label: 'Theirs' }), 404, 'PAYMENT_LINK_NOT_FOUND');
        expectError(await t.request('GET', `${LINKS}/${reference}/intents`, { key }), 404, 'PAYMENT_LINK_NOT_FOUND');
      }
      expectError(await t.request('GET', `${LINKS}/nonsense`, { key: sk }), 404, 'PAYMENT_LINK_NOT_FOUND');
      expectError(await t.request('GET', `${LINKS}/${'9'.repeat(65)}`, { key: sk }), 400, 'VALIDATION_ERROR');
      assert.equal((await getLink(t, sk, link.referenceNumber)).label, 'Mine');
      const theirs = await t.request('GET', LINKS, { key: otherKey });
      assert.equal(theirs.body.data.total, 0);
    });

    test('SANDBOX_MISMATCH: a live key on a test link, a test key on a live link', async () => {
      const testLink = await createLink(t, sk, { label: 'Test', amountType: 'OPEN' });
      const liveLink = await createLink(t, business.keys.secretLive, { label: 'Live', amountType: 'OPEN' });
      assert.equal(liveLink.sandbox, false);
      assert.equal(testLink.sandbox, true);
      const live = business.keys.secretLive;
      expectError(
        await t.request('GET', `${LINKS}/${testLink.referenceNumber}`, { key: live }),
        403,
        'SANDBOX_MISMATCH',
      );
      expectError(await patchLink(t, live, testLink.referenceNumber, { active: false }), 403, 'SANDBOX_MISMATCH');
      expectError(
        await t.request('GET', `${LINKS}/${testLink.referenceNumber}/intents`, { key: live }),
        403,
        'SANDBOX_MISMATCH',
      );
      expectError(await t.request('GET', `${LINKS}/${liveLink.referenceNumber}`, { key: sk }), 403, 'SANDBOX_MISMATCH');
      assert.equal((await getLink(t, sk, testLink.referenceNumber)).active, true);
    });

    test('SECRET_KEY_REQUIRED for a publishable key; SCOPE_REQUIRED without intents:write / intents:read', async () => {
      const link = await createLink(t, sk, { label: 'Scoped', amountType: 'OPEN' });
      const pk = business.keys.publishableTest;
      expectError(
        await t.request('POST', LINKS, { key: pk, idempotencyKey: true, body: { label: 'P', amountType: 'OPEN' } }),
        403,
        'SECRET_KEY_REQUIRED',
      );
      expectError(await t.request('GET', LINKS, { key: pk }), 403, 'SECRET_KEY_REQUIRED');
      expectError(await t.request('GET', `${LINKS}/${link.referenceNumber}`, { key: pk }), 403, 'SECRET_KEY_REQUIRED');
      expectError(await patchLink(t, pk, link.referenceNumber, { label: 'P' }), 403, 'SECRET_KEY_REQUIRED');

      const keyWith = async (scopes: string[]) => {
        const created = await t.admin('POST', '/keys', {
          businessId: business.id,
          kind: 'secret',
          environment: 'test',
          scopes,
        });
        expectStatus(created, 201);
        return created.body.data.key as string;
      };
      const reader = await keyWith(['intents:read']);
      expectStatus(await t.request('GET', LINKS, { key: reader }), 200);
      expectStatus(await t.request('GET', `${LINKS}/${link.referenceNumber}/intents`, { key: reader }), 200);
      expectError(
        await t.request('POST', LINKS, { key: reader, idempotencyKey: true, body: { label: 'R', amountType: 'OPEN' } }),
        403,
        'SCOPE_REQUIRED',
      );
      expectError(await patchLink(t, reader, link.referenceNumber, { label: 'R' }), 403, 'SCOPE_REQUIRED');
      const stranger = await keyWith(['store.products:read']);
      expectError(await t.request('GET', LINKS, { key: stranger }), 403, 'SCOPE_REQUIRED');
      expectError(await t.request('GET', `${LINKS}/${link.referenceNumber}`, { key: stranger }), 403, 'SCOPE_REQUIRED');
    });

    test('idempotency: a replayed create answers the same link and makes one; another body under the key is refused', async () => {
      const own = await t.createBusiness();
      const key = own.keys.secretTest;
      const body = { label: 'Une fois', amountType: 'FIXED', amount: 1200 };
      const first = await t.request('POST', LINKS, { key, body, idempotencyKey: 'link-create-1' });
      const again = await t.request('POST', LINKS, { key, body, idempotencyKey: 'link-create-1' });
      expectStatus(first, 201);
      expectStatus(again, 201);
      assert.deepEqual(again.body, first.body);
      const listed = await t.request('GET', LINKS, { key });
      assert.equal(listed.body.data.total, 1);
      expectError(
        await t.request('POST', LINKS, { key, body: { ...body, amount: 1300 }, idempotencyKey: 'link-create-1' }),
        422,
        'IDEMPOTENCY_KEY_REUSED',
      );
      expectError(await t.request('POST', LINKS, { key, body }), 400, 'IDEMPOTENCY_KEY_REQUIRED');
      expectError(
        await t.request('PATCH', `${LINKS}/${first.body.data.referenceNumber}`, { key, body: { label: 'x' } }),
        400,
        'IDEMPOTENCY_KEY_REQUIRED',
      );
      assert.equal((await t.request('GET', LINKS, { key })).body.data.total, 1);
    });
  });
});
