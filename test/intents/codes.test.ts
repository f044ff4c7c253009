import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { insertIntent } from '../../src/modules/intents/repo.js';
import { expectError, expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { act, createIntent, INTENTS } from './support.js';

const SPACE = 5;

describe('6-digit payment codes (decisions "Payment intents")', () => {
  let t: TestApp;
  let business: TestBusiness;
  let sk: string;
  beforeAll(async () => {
    // A code space of 5 makes "all codes taken" reachable; the allocation SQL is the same.
    t = await startTestApp({ configOverrides: { paymentCodeSpace: SPACE } });
    business = await t.createBusiness();
    sk = business.keys.secretTest;
  });
  afterAll(() => t.close());

  const codesInUse = async (environment: 'test' | 'live') =>
    (
      await t.runtime.db
        .selectFrom('payment_intents')
        .select('payment_code')
        .where('environment', '=', environment)
        .where('payment_code', 'is not', null)
        .execute()
    )
      .map((row) => row.payment_code!)
      .sort();

  test('codes are unique among payable intents; a full space answers 503 CODE_SPACE_EXHAUSTED', async () => {
    const intents = [];
    for (let i = 0; i < SPACE; i++) intents.push(await createIntent(t, sk, { amount: 100 + i }));
    assert.deepEqual(intents.map((intent) => intent.code).sort(), ['000000', '000001', '000002', '000003', '000004']);

    const idempotencyKey = `exhausted-${Date.now()}`;
    const full = await t.request('POST', INTENTS, { key: sk, body: { amount: 100 }, idempotencyKey });
    expectError(full, 503, 'CODE_SPACE_EXHAUSTED');
    assert.deepEqual(await codesInUse('test'), [0, 1, 2, 3, 4]);

    // A FAILED intent can still be paid, so it keeps its code.
    const failing = intents[0]!;
    await t.runtime.db
      .updateTable('payment_intents')
      .set({ amount: 1313 })
      .where('reference_number', '=', failing.referenceNumber)
      .execute();
    const failed = await act(t, sk, failing.referenceNumber, 'simulate');
    assert.equal(failed.body.data.status, 'FAILED');
    expectError(
      await t.request('POST', INTENTS, { key: sk, body: { amount: 100 }, idempotencyKey: true }),
      503,
      'CODE_SPACE_EXHAUSTED',
    );

    // The live environment has its own codes.
    const live = await createIntent(t, business.keys.secretLive, { amount: 100 });
    assert.match(live.code, /^00000[0-4]$/);

    // Cancelling frees a code, and the next intent gets it; the 503 was not stored, so the same
    // idempotency key now succeeds.
    const cancelled = intents[2]!;
    expectStatus(await act(t, sk, cancelled.referenceNumber, 'cancel'), 200);
    const retried = await t.request('POST', INTENTS, { key: sk, body: { amount: 100 }, idempotencyKey });
    expectStatus(retried, 201);
    assert.equal(retried.body.data.code, cancelled.code);

    // Paying frees a code too.
    const paid = intents[3]!;
    expectStatus(await act(t, sk, paid.referenceNumber, 'simulate'), 200);
    assert.equal((await createIntent(t, sk, { amount: 100 })).code, paid.code);

    // And so does expiry, by the job or by simulate-expiry.
    const expiring = intents[4]!;
    expectStatus(await act(t, sk, expiring.referenceNumber, 'simulate-expiry'), 200);
    assert.equal((await createIntent(t, sk, { amount: 100 })).code, expiring.code);
    assert.deepEqual(await codesInUse('test'), [0, 1, 2, 3, 4]);
  });

  test('the database itself refuses a second payable intent with a taken code', async () => {
    const [first, second] = await t.runtime.db
      .selectFrom('payment_intents')
      .select(['id', 'payment_code'])
      .where('environment', '=', 'test')
      .where('payment_code', 'is not', null)
      .limit(2)
      .execute();
    await assert.rejects(
      t.runtime.db
        .updateTable('payment_intents')
        .set({ payment_code: first!.payment_code })
        .where('id', '=', second!.id)
        .execute(),
    );
  });
});

describe('code allocation tries random codes, then walks the index from the first', () => {
  let t: TestApp;
  let businessId: string;
  beforeAll(async () => {
    t = await startTestApp();
    businessId = (await t.createBusiness()).id;
  });
  afterAll(() => t.close());

  /** Runs the create statement with a chosen start, as the service does with a random one. */
  async function allocate(start: number | number[], space: number): Promise<number | null> {
    const candidates = typeof start === 'number' ? [start] : start;
    const token = randomUUID();
    const now = new Date();
    const outcome = await t.runtime.db.transaction().execute((trx) =>
      insertIntent(trx, {
        codeCandidates: candidates,
        codeSpace: space,
        environment: 'live',
        referenceNumber: `PI-${token.replace(/\D/g, '').padEnd(16, '0').slice(0, 16)}${candidates[0]}`,
        shortCode: token.slice(0, 6),
        businessId,
        amountType: 'FIXED',
        amount: 100,
        suggestedAmount: null,
        label: '',
        metadata: {},
        successUrl: null,
        cancelUrl: null,
        expiresAt: new Date(now.getTime() + 86_400_000),
        createdAt: now,
        event: { id: `evt_${token}`, body: '{}' },
      }),
    );
    assert.ok(outcome, 'no unique clash without concurrency');
    if (outcome === 'exhausted') return null;
    assert.equal(outcome.status, 'PENDING');
    const event = await t.runtime.db
      .selectFrom('events')
      .select('subject')
      .where('id', '=', `evt_${token}`)
      .executeTakeFirstOrThrow();
    assert.equal(event.subject, outcome.reference_number, 'the event is written by the same statement');
    return outcome.payment_code;
  }

  test('a free start is taken as is; a taken one gives the first free code after it', async () => {
    assert.equal(await allocate(3, 10), 3);
    assert.equal(await allocate(4, 10), 4);
    assert.equal(await allocate(3, 10), 5, 'after the run 3-4');
    assert.equal(await allocate(9, 10), 9);
  });

  test('past the end of the space the search wraps around to the lowest free code', async () => {
    assert.equal(await allocate(9, 10), 0);
    assert.equal(await allocate(9, 10), 1);
    for (const expected of [6, 7, 8]) assert.equal(await allocate(5, 10), expected);
    assert.equal(await allocate(5, 10), 2, '5 through 9 are taken: wrap, and 0 and 1 are taken too');
    assert.equal(await allocate(0, 10), null, 'all ten taken');
  });

  test('the first free candidate is taken; with every candidate taken the walk starts at the first', async () => {
    // 0-9 are taken by now; a space of 20 leaves 10-19.
    assert.equal(await allocate([12, 15, 11], 20), 12);
    assert.equal(await allocate([12, 15, 11], 20), 15, '12 is taken, 15 is free');
    assert.equal(await allocate([12, 15, 11], 20), 11);
    assert.equal(await allocate([12, 15, 11], 20), 13, 'all three taken: the first free code after 12');
  });
});

describe('racing creates in a small code space', () => {
  const RACE_SPACE = 8;
  let t: TestApp;
  let sk: string;
  beforeAll(async () => {
    t = await startTestApp({ configOverrides: { paymentCodeSpace: RACE_SPACE } });
    sk = (await t.createBusiness()).keys.secretTest;
  });
  afterAll(() => t.close());

  test('twelve concurrent creates for eight codes never share one; the rest answer 503', async () => {
    const responses = await Promise.all(
      Array.from({ length: 12 }, () =>
        t.request('POST', INTENTS, { key: sk, body: { amount: 100 }, idempotencyKey: true }),
      ),
    );
    const created = responses.filter((response) => response.status === 201);
    for (const response of responses.filter((r) => r.status !== 201))
      expectError(response, 503, 'CODE_SPACE_EXHAUSTED');
    const codes = created.map((response) => response.body.data.code as string);
    assert.equal(new Set(codes).size, codes.length, `distinct codes: ${codes.join(', ')}`);
    // A create that lost every race may answer 503 while a code is still free; fill what is left.
    for (let i = created.length; i < RACE_SPACE; i++) codes.push((await createIntent(t, sk, { amount: 100 })).code);
    assert.deepEqual(codes.sort(), ['000000', '000001', '000002', '000003', '000004', '000005', '000006', '000007']);
    expectError(
      await t.request('POST', INTENTS, { key: sk, body: { amount: 100 }, idempotencyKey: true }),
      503,
      'CODE_SPACE_EXHAUSTED',
    );
  });
});
