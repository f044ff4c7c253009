import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { sql } from 'kysely';
import { RETENTION_BATCHES } from '../../src/config.js';
import { deleteExpiredUnknownPhoneAttempts, MAX_PIN_ATTEMPTS } from '../../src/modules/wallets/service.js';
import { pay } from '../checkout/support.js';
import { createIntent } from '../intents/support.js';
import { expectStatus, startTestApp, type TestApp, type TestResponse } from '../support/harness.js';

/** What a client sees of an answer, the lock's end time (which moves with the clock) left out. */
function seen(response: TestResponse) {
  const error = response.body?.error;
  return {
    status: response.status,
    code: error?.code,
    message: String(error?.message).replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/, '<until>'),
    fields: Object.keys(error ?? {}).sort(),
  };
}

function lockEnd(response: TestResponse): number {
  const until = /(\d{4}-\d\d-\d\dT[\d:.]+Z)/.exec(String(response.body?.error?.message))?.[1];
  assert.ok(until, response.text);
  return Date.parse(until);
}

describe('a phone without a wallet locks after five wrong PINs like a wallet does (issue 15 item 9)', () => {
  let t: TestApp;
  let shortCode: string;
  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    const sk = (await t.createBusiness()).keys.secretTest;
    shortCode = (await createIntent(t, sk, { amount: 100 })).shortCode;
  });
  afterAll(() => t.close());

  test('the same answers, in the same order, for a wallet and a phone without one; the same lock end', async () => {
    const walletPhone = '+22241000001';
    const unknownPhone = '+22241000002';
    expectStatus(
      await t.admin('POST', '/wallets', { phone: walletPhone, pin: '2468', balance: 100_000, environment: 'test' }),
      201,
    );
    const attempts = MAX_PIN_ATTEMPTS + 2;
    const forWallet: TestResponse[] = [];
    const forUnknown: TestResponse[] = [];
    for (let i = 0; i < attempts; i++) {
      forWallet.push(await pay(t, shortCode, { phone: walletPhone, pin: String(1000 + i) }));
      forUnknown.push(await pay(t, shortCode, { phone: unknownPhone, pin: String(1000 + i) }));
    }
    assert.deepEqual(forUnknown.map(seen), forWallet.map(seen));
    const codes = forWallet.map((r) => r.body.error.code);
    assert.deepEqual(codes, [
      ...Array.from({ length: MAX_PIN_ATTEMPTS - 1 }, () => 'INVALID_PIN'),
      ...Array.from({ length: attempts - MAX_PIN_ATTEMPTS + 1 }, () => 'WALLET_LOCKED'),
    ]);
    // Both locked for the same 15 minutes (the two locks were set a few milliseconds apart).
    for (let i = MAX_PIN_ATTEMPTS - 1; i < attempts; i++) {
      assert.ok(Math.abs(lockEnd(forWallet[i]!) - lockEnd(forUnknown[i]!)) < 5000);
      assert.ok(Math.abs(lockEnd(forWallet[i]!) - (Date.now() + 15 * 60_000)) < 60_000);
    }
    // The wallet's right PIN is refused too while it is locked: the same answer again.
    assert.deepEqual(seen(await pay(t, shortCode, { phone: walletPhone, pin: '2468' })), seen(forUnknown.at(-1)!));

    // Once the locks are over (moved into the past here), both count from zero again; the
    // cleanup may forget the unknown phone's expired row, which changes nothing.
    await sql`UPDATE wallets SET locked_until = now() - interval '1 second' WHERE phone = ${walletPhone}`.execute(
      t.runtime.db,
    );
    await sql`UPDATE unknown_phone_pin_attempts SET locked_until = now() - interval '1 second'`.execute(t.runtime.db);
    assert.equal((await deleteExpiredUnknownPhoneAttempts(t.runtime.db, RETENTION_BATCHES)).deleted, 1);
    const next = await pay(t, shortCode, { phone: walletPhone, pin: '1111' });
    assert.deepEqual(seen(await pay(t, shortCode, { phone: unknownPhone, pin: '1111' })), seen(next));
    assert.equal(next.body.error.code, 'INVALID_PIN');
    expectStatus(await pay(t, shortCode, { phone: walletPhone, pin: '2468' }), 200);
  });

  test('wrong PINs decay: a count whose last attempt is older than the lock window is zero, and the cleanup deletes it (issue 36 item 4)', async () => {
    const sk = (await t.createBusiness()).keys.secretTest;
    const shortCode = (await createIntent(t, sk, { amount: 100 })).shortCode;
    const walletPhone = '+22241000011';
    const unknownPhone = '+22241000012';
    expectStatus(
      await t.admin('POST', '/wallets', { phone: walletPhone, pin: '2468', balance: 100_000, environment: 'test' }),
      201,
    );
    const wrongTries = async (phone: string) => {
      const codes: string[] = [];
      for (let i = 0; i < MAX_PIN_ATTEMPTS - 1; i++)
        codes.push((await pay(t, shortCode, { phone, pin: String(1000 + i) })).body.error.code);
      return codes;
    };
    const fourWrong = Array.from({ length: MAX_PIN_ATTEMPTS - 1 }, () => 'INVALID_PIN');
    const ageAttempts = async () => {
      await sql`UPDATE unknown_phone_pin_attempts SET last_attempt_at = now() - interval '16 minutes'
        WHERE phone = ${unknownPhone}`.execute(t.runtime.db);
      await sql`UPDATE wallets SET last_pin_attempt_at = now() - interval '16 minutes'
        WHERE phone = ${walletPhone}`.execute(t.runtime.db);
    };
    for (const phone of [walletPhone, unknownPhone]) assert.deepEqual(await wrongTries(phone), fourWrong);
    // A recent row under five tries is kept by the cleanup.
    assert.equal((await deleteExpiredUnknownPhoneAttempts(t.runtime.db, RETENTION_BATCHES)).deleted, 0);
    // Sixteen minutes later the four count as zero: four more wrong PINs lock neither.
    await ageAttempts();
    for (const phone of [walletPhone, unknownPhone]) assert.deepEqual(await wrongTries(phone), fourWrong);
    // Whereas a fifth within the window still locks both.
    for (const phone of [walletPhone, unknownPhone])
      assert.equal((await pay(t, shortCode, { phone, pin: '1111' })).body.error.code, 'WALLET_LOCKED');
    await sql`UPDATE unknown_phone_pin_attempts SET locked_until = NULL, failed_pin_attempts = 4
      WHERE phone = ${unknownPhone}`.execute(t.runtime.db);
    // An old row under five tries and without a lock is deleted too.
    await ageAttempts();
    const count = sql<{
      n: number;
    }>`SELECT count(*)::int AS n FROM unknown_phone_pin_attempts WHERE phone = ${unknownPhone}`;
    assert.equal((await count.execute(t.runtime.db)).rows[0]!.n, 1);
    assert.ok((await deleteExpiredUnknownPhoneAttempts(t.runtime.db, RETENTION_BATCHES)).deleted >= 1);
    assert.equal((await count.execute(t.runtime.db)).rows[0]!.n, 0);
  });
});
