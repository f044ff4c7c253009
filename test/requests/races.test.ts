import assert from 'node:assert/strict';
import { afterAll, beforeAll, beforeEach, describe, test } from 'vitest';
import { sql } from 'kysely';
import { ApiError } from '../../src/http/errors.js';
import { manualClock } from '../support/clock.js';
import { testDatabaseKind } from '../support/database.js';
import { expectError, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { listEvents } from '../support/read-api.js';
import { ledgerIsSound, newWallet, walletBalance } from '../links/support.js';
import {
  answer,
  askPayment,
  cancelRequest,
  createIntent,
  createRequest,
  endDueIn,
  getIntent,
  getRequest,
} from './support.js';

const FUNDS = 50_000;
const PRICE = 4000;
const PG_ONLY = testDatabaseKind === 'postgres' ? false : 'PostgreSQL only: PGlite runs one transaction at a time';

/** 1 when the wallet's answer ended the request, 0 when it was refused as already ended. */
async function answered(promise: Promise<unknown>): Promise<number> {
  try {
    await promise;
    return 1;
  } catch (error) {
    if (error instanceof ApiError && error.code === 'PAYMENT_REQUEST_NOT_PENDING') return 0;
    throw error;
  }
}

describe('payment requests end once under races and faults (issue 51)', () => {
  const clock = manualClock();
  let t: TestApp;
  let business: TestBusiness;
  let sk: string;
  beforeAll(async () => {
    t = await startTestApp({ clock, config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    business = await t.createBusiness();
    sk = business.keys.secretTest;
  });
  afterAll(() => t.close());
  beforeEach(() => clock.advance(60_000));

  test.skipIf(PG_ONLY)(
    'approve, cancel, expiry and a second approve at once: exactly one outcome, the payer debited at most once, one terminal event',
    async () => {
      // What one approval costs the payer (the amount and the payer's fee), learnt alone first.
      const control = await newWallet(t, FUNDS);
      const controlIntent = await createIntent(t, sk, { amount: PRICE });
      const controlRequest = await createRequest(t, sk, controlIntent.referenceNumber, { phone: control.phone });
      await answer(t, control.phone, controlRequest.id, 'APPROVED');
      const cost = FUNDS - (await walletBalance(t, control.phone));
      assert.ok(cost >= PRICE);

      const outcomes = new Set<string>();
      for (let round = 0; round < 9; round++) {
        clock.advance(60_000);
        const wallet = await newWallet(t, FUNDS);
        const intent = await createIntent(t, sk, { amount: PRICE });
        const request = await createRequest(t, sk, intent.referenceNumber, { phone: wallet.phone, expiresIn: 60 });
        // The merchant's cancel crosses HTTP, the others do not: some rounds give it a head start,
        // so that each end gets to win some round.
        const headStart = [0, 4, 12][round % 3]!;
        const later = <T>(start: () => Promise<T>) =>
          new Promise<void>((resolve) => setTimeout(resolve, headStart)).then(start);
        const [approved, cancelled, expired, approvedAgain] = await Promise.all([
          later(() => answered(answer(t, wallet.phone, request.id, 'APPROVED'))),
          cancelRequest(t, sk, request.id),
          later(() => endDueIn(t, 61)),
          later(() => answered(answer(t, wallet.phone, request.id, 'APPROVED'))),
        ]);
        if (cancelled.status !== 200) expectError(cancelled, 409, 'PAYMENT_REQUEST_NOT_PENDING');
        const wins = approved + approvedAgain + (cancelled.status === 200 ? 1 : 0) + expired;
        assert.equal(
          wins,
          1,
          `round ${round}: approved ${approved}+${approvedAgain}, cancel ${cancelled.status}, expired ${expired}`,
        );

        const ended = await getRequest(t, sk, request.id);
        outcomes.add(ended.status);
        const expected =
          approved + approvedAgain === 1 ? 'APPROVED' : cancelled.status === 200 ? 'CANCELLED' : 'EXPIRED';
        assert.equal(ended.status, expected);
        const paid = ended.status === 'APPROVED';
        assert.equal(await walletBalance(t, wallet.phone), paid ? FUNDS - cost : FUNDS);
        assert.equal((await getIntent(t, sk, intent.referenceNumber)).status, paid ? 'PAID' : 'PENDING');
        const types = (await listEvents(t, sk, request.id)).map((event) => event.type);
        assert.deepEqual(types, ['payment_request.created', `payment_request.${expected.toLowerCase()}`]);
        const confirmed = await listEvents(t, sk, intent.referenceNumber, 'payment.confirmed');
        assert.equal(confirmed.length, paid ? 1 : 0);
      }
      assert.ok(outcomes.size >= 1, [...outcomes].join());
      await ledgerIsSound(t);
    },
  );

  test.skipIf(PG_ONLY)(
    '5 creates at once on one intent: exactly one 201, the others 409 PAYMENT_REQUEST_PENDING',
    async () => {
      for (let round = 0; round < 3; round++) {
        clock.advance(60_000);
        const intent = await createIntent(t, sk, { amount: PRICE });
        const phones = await Promise.all(Array.from({ length: 5 }, async () => (await newWallet(t, FUNDS)).phone));
        const responses = await Promise.all(
          phones.map((phone) => askPayment(t, sk, intent.referenceNumber, { phone })),
        );
        const created = responses.filter((response) => response.status === 201);
        assert.equal(created.length, 1, responses.map((response) => response.text.slice(0, 200)).join('\n'));
        for (const response of responses) {
          if (response.status !== 201) expectError(response, 409, 'PAYMENT_REQUEST_PENDING');
        }
        const listed = await t.request('GET', `/api/v1/dev/intents/${intent.referenceNumber}/requests`, { key: sk });
        assert.equal(listed.body.data.total, 1);
      }
    },
  );

  test.skipIf(PG_ONLY)('5 creates at once to one phone from 5 intents: 3 created, 2 refused 429', async () => {
    const phone = (await newWallet(t, FUNDS)).phone;
    const intents = await Promise.all(Array.from({ length: 5 }, () => createIntent(t, sk, { amount: PRICE })));
    const responses = await Promise.all(intents.map((intent) => askPayment(t, sk, intent.referenceNumber, { phone })));
    const statuses = responses.map((response) => response.status).sort();
    assert.deepEqual(
      statuses,
      [201, 201, 201, 429, 429],
      responses.map((response) => response.text.slice(0, 200)).join('\n'),
    );
    for (const response of responses) {
      if (response.status === 429) expectError(response, 429, 'TOO_MANY_PAYMENT_REQUESTS');
    }
  });

  test('a worker that dies between the approval and its event: nothing written, the next run ends the request once', async () => {
    const db = t.runtime.db;
    // The fault: the statement that ends a marked request (and writes its event) fails, as a
    // worker killed mid-transaction would leave it: the approval's transaction rolls back.
    await sql`CREATE TABLE faulty_requests (id text PRIMARY KEY)`.execute(db);
    await sql`CREATE FUNCTION fail_marked_request() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.status <> 'PENDING' AND EXISTS (SELECT 1 FROM faulty_requests WHERE id = NEW.id) THEN
          RAISE EXCEPTION 'worker killed';
        END IF;
        RETURN NEW;
      END $$`.execute(db);
    await sql`CREATE TRIGGER fail_marked_request BEFORE UPDATE ON payment_requests
      FOR EACH ROW EXECUTE FUNCTION fail_marked_request()`.execute(db);
    try {
      const approves = '+22220000021';
      const intent = await createIntent(t, sk, { amount: PRICE });
      const request = await createRequest(t, sk, intent.referenceNumber, { phone: approves });
      const other = await createIntent(t, sk, { amount: PRICE });
      const declined = await createRequest(t, sk, other.referenceNumber, { phone: '+22220000022' });
      const funds = await walletBalance(t, approves);
      await sql`INSERT INTO faulty_requests (id) VALUES (${request.id})`.execute(db);

      await assert.rejects(endDueIn(t, 3), new RegExp(`could not end 1: ${request.id}`));
      // The other request ended all the same; the faulty one is untouched.
      assert.equal((await getRequest(t, sk, declined.id)).status, 'DECLINED');
      assert.equal((await getRequest(t, sk, request.id)).status, 'PENDING');
      assert.equal((await getIntent(t, sk, intent.referenceNumber)).status, 'PENDING');
      assert.equal(await walletBalance(t, approves), funds);
      assert.deepEqual(
        (await listEvents(t, sk, request.id)).map((event) => event.type),
        ['payment_request.created'],
      );
      assert.equal((await listEvents(t, sk, intent.referenceNumber, 'payment.confirmed')).length, 0);

      // Restarted: the next run ends it once.
      await sql`DELETE FROM faulty_requests`.execute(db);
      assert.equal(await endDueIn(t, 3), 1);
      assert.equal(await endDueIn(t, 3), 0);
      assert.equal((await getRequest(t, sk, request.id)).status, 'APPROVED');
      assert.equal((await getIntent(t, sk, intent.referenceNumber)).status, 'PAID');
      assert.ok(funds - (await walletBalance(t, approves)) >= PRICE);
      assert.deepEqual(
        (await listEvents(t, sk, request.id)).map((event) => event.type),
        ['payment_request.created', 'payment_request.approved'],
      );
      assert.equal((await listEvents(t, sk, intent.referenceNumber, 'payment.confirmed')).length, 1);
      await ledgerIsSound(t);
    } finally {
      await sql`DROP TRIGGER fail_marked_request ON payment_requests`.execute(db);
      await sql`DROP FUNCTION fail_marked_request()`.execute(db);
      await sql`DROP TABLE faulty_requests`.execute(db);
    }
  });
});
