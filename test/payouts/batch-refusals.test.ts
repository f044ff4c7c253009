import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { expectError, expectStatus, startTestApp, type TestApp } from '../support/harness.js';
import { RICH } from '../orders/support.js';
import { assertLedgerSound, fold } from '../payments/support.js';
import { createPayout, earn, newPhone, PAYOUTS, payoutTo } from './support.js';

interface Detail {
  field: string;
  message: string;
  code?: string;
}

/**
 * Issue 47 item 11: batches at `POST /payouts/batches` (the old `/batch` a deprecated alias, read
 * at `GET /payouts/batches/{id}`); one answer names every bad item whatever the mix of problems,
 * each with the code a payout of its own gets, and nothing is created.
 */
describe('payout batches: the plural path, every bad item in one answer', () => {
  let t: TestApp;
  let sk: string;
  const balance = async () => (await t.request('GET', '/api/v1/dev/balance', { key: sk })).body.data.available;
  const payoutTotal = async () => (await t.request('GET', PAYOUTS, { key: sk })).body.data.total as number;
  const batch = (items: unknown[], path = `${PAYOUTS}/batches`) =>
    t.request('POST', path, { key: sk, body: { items }, idempotencyKey: true });

  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    const business = await t.createBusiness({ name: 'Batch refusals shop' });
    sk = business.keys.secretTest;
    await earn(t, sk, 1_000_000);
  });
  afterAll(() => t.close());

  test('POST /payouts/batches creates a batch read at GET /payouts/batches/{id}; /batch is the same, deprecated', async () => {
    const created = await batch([payoutTo(newPhone(), 100), payoutTo(newPhone(), 200)]);
    expectStatus(created, 201);
    const read = await t.request('GET', `${PAYOUTS}/batches/${created.body.data.id}`, { key: sk });
    expectStatus(read, 200);
    assert.equal(read.body.data.itemCount, 2);
    const alias = await batch([payoutTo(newPhone(), 300)], `${PAYOUTS}/batch`);
    expectStatus(alias, 201);
    assert.equal(alias.body.data.totalAmount, 300);

    const document = (await t.request('GET', '/api/v1/dev/openapi.json')).body;
    const plural = document.paths['/api/v1/dev/payouts/batches'].post;
    const old = document.paths['/api/v1/dev/payouts/batch'].post;
    assert.equal(plural.operationId, 'createPayoutBatch');
    assert.equal(plural.deprecated, undefined);
    assert.equal(old.deprecated, true);
    assert.match(old.description, /Deprecated: .*POST \/payouts\/batches/);
    await fold(t);
    await assertLedgerSound(t);
  });

  test('schema problems and limit problems of many items in one answer, each with its own code; nothing created', async () => {
    const before = await balance();
    const count = await payoutTotal();
    const tooManyKeys = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'v']));
    const items = [
      payoutTo(RICH.phone, 100),
      payoutTo(RICH.phone, 0),
      payoutTo('20000001', 100),
      payoutTo(RICH.phone, 1.5),
      payoutTo(RICH.phone, 100, { metadata: { note: 'x'.repeat(501) } }),
      payoutTo(RICH.phone, 100),
      payoutTo('not a phone', -5, { metadata: tooManyKeys }),
      { amount: 100, destination: { type: 'WALLET', phone: RICH.phone }, colour: 'red' },
    ];
    const refused = await batch(items);
    expectError(refused, 400, 'VALIDATION_ERROR');
    const details = refused.body.error.details as Detail[];
    assert.deepEqual(
      details.map((detail) => [detail.field, detail.code]),
      [
        ['body.items.1.amount', 'AMOUNT_OUT_OF_RANGE'],
        ['body.items.2.destination.phone', 'VALIDATION_ERROR'],
        ['body.items.3.amount', 'VALIDATION_ERROR'],
        ['body.items.4.metadata.note', 'METADATA_VALUE_TOO_LONG'],
        ['body.items.6.destination.phone', 'VALIDATION_ERROR'],
        ['body.items.6.amount', 'AMOUNT_OUT_OF_RANGE'],
        ['body.items.6.metadata', 'METADATA_TOO_MANY_KEYS'],
        ['body.items.7.colour', 'VALIDATION_ERROR'],
      ],
      JSON.stringify(details),
    );
    assert.match(
      refused.body.error.message,
      /^6 item\(s\) are invalid: items\[1\], items\[2\], items\[3\], items\[4\], items\[6\], items\[7\]\./,
    );

    // Each code is the one a payout of its own gets for the same fault.
    const alone = async (item: unknown) => (await createPayout(t, sk, item)).body.error.code as string;
    assert.equal(await alone(items[1]), 'AMOUNT_OUT_OF_RANGE');
    assert.equal(await alone(items[2]), 'VALIDATION_ERROR');
    assert.equal(await alone(items[3]), 'VALIDATION_ERROR');
    assert.equal(await alone(items[4]), 'METADATA_VALUE_TOO_LONG');
    assert.equal(await alone(payoutTo(RICH.phone, 100, { metadata: tooManyKeys })), 'METADATA_TOO_MANY_KEYS');
    assert.equal(await alone(items[7]), 'VALIDATION_ERROR');

    // The deprecated path answers the same.
    const old = await batch(items, `${PAYOUTS}/batch`);
    expectError(old, 400, 'VALIDATION_ERROR');
    assert.deepEqual(old.body.error.details, details);
    assert.equal(await balance(), before);
    assert.equal(await payoutTotal(), count);
  });

  test("a NUL character in one item is named beside the other items' problems", async () => {
    const count = await payoutTotal();
    const refused = await batch([
      payoutTo(RICH.phone, 100, { description: 'Loyer\u0000avril' }),
      payoutTo(RICH.phone, 1.5),
      payoutTo(RICH.phone, 0),
    ]);
    expectError(refused, 400, 'VALIDATION_ERROR');
    assert.deepEqual(
      (refused.body.error.details as Detail[]).map((detail) => [detail.field, detail.code]),
      [
        ['body.items.0.description', 'VALIDATION_ERROR'],
        ['body.items.1.amount', 'VALIDATION_ERROR'],
        ['body.items.2.amount', 'AMOUNT_OUT_OF_RANGE'],
      ],
    );
    assert.equal(await payoutTotal(), count);
  });

  test('a problem of the request as a whole is answered alone', async () => {
    const count = await payoutTotal();
    expectError(await batch([]), 400, 'VALIDATION_ERROR');
    const tooMany = await batch(Array.from({ length: 1001 }, () => payoutTo(RICH.phone, 0)));
    expectError(tooMany, 400, 'VALIDATION_ERROR');
    assert.deepEqual(
      (tooMany.body.error.details as Detail[]).map((detail) => detail.field),
      ['body.items'],
    );
    const extra = await t.request('POST', `${PAYOUTS}/batches`, {
      key: sk,
      idempotencyKey: true,
      body: { items: [payoutTo(RICH.phone, 0)], dryRun: true },
    });
    expectError(extra, 400, 'VALIDATION_ERROR');
    assert.equal((extra.body.error.details as Detail[])[0]!.field, 'body.dryRun');
    expectError(
      await t.request('POST', `${PAYOUTS}/batches`, { key: sk, idempotencyKey: true, body: {} }),
      400,
      'VALIDATION_ERROR',
    );
    assert.equal(await payoutTotal(), count);
  });

  test('a 1,000-item batch with metadata past 1 MB is taken (up to 4 MB); a larger one is 413 and creates nothing', async () => {
    const before = await balance();
    const count = await payoutTotal();
    // Four 500-character values an item: about 2.2 MB in all, twice the API's 1 MB.
    const metadata = Object.fromEntries(['a', 'b', 'c', 'd'].map((key) => [key, key.repeat(500)]));
    const items = Array.from({ length: 1000 }, (_, i) =>
      payoutTo(`+2225${String(i).padStart(7, '0')}`, 1, { description: 'Prime de mai', metadata }),
    );
    const size = Buffer.byteLength(JSON.stringify({ items }));
    assert.ok(size > 2 * 1024 * 1024 && size < 4 * 1024 * 1024, String(size));
    const created = await batch(items);
    expectStatus(created, 201);
    assert.equal(created.body.data.itemCount, 1000);
    assert.deepEqual(created.body.data.payouts[999].metadata, metadata);

    const larger = Object.fromEntries([...'abcdefghij'].map((key) => [key, key.repeat(500)]));
    const tooLargeItems = items.map((item) => ({ ...item, metadata: larger }));
    assert.ok(Buffer.byteLength(JSON.stringify({ items: tooLargeItems })) > 4 * 1024 * 1024);
    const tooLarge = await batch(tooLargeItems);
    expectError(tooLarge, 413, 'PAYLOAD_TOO_LARGE');
    // The API's other writes keep their 1 MB.
    const single = await createPayout(t, sk, payoutTo(RICH.phone, 1, { description: 'x'.repeat(1024 * 1024) }));
    expectError(single, 413, 'PAYLOAD_TOO_LARGE');
    assert.equal(await payoutTotal(), count + 1000);
    assert.equal(await balance(), before - 1000);
    await fold(t);
    await assertLedgerSound(t);
  });
});
