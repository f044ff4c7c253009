import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { openDatabase } from '../../src/db/connect.js';
import { MAX_PIN_ATTEMPTS } from '../../src/modules/wallets/service.js';
import { pay, walletBalance } from '../checkout/support.js';
import { createIntent } from '../intents/support.js';
import { expectError, expectStatus, startTestApp, type TestApp, type TestResponse } from '../support/harness.js';
import { testDatabaseUrl } from '../support/database.js';

const GUESSES = 20;

function tally(responses: TestResponse[]) {
  const codes = responses.map((r) => (r.status === 200 ? 'PAID' : String(r.body?.error?.code)));
  const count = (code: string) => codes.filter((c) => c === code).length;
  return { codes, invalid: count('INVALID_PIN'), locked: count('WALLET_LOCKED'), paid: count('PAID') };
}

describe('PIN lockout under parallel guesses (issue 15 item 1)', () => {
  let t: TestApp;
  let sk: string;
  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    sk = (await t.createBusiness()).keys.secretTest;
  });
  afterAll(() => t.close());

  const newWallet = async (app: TestApp, pin: string) => {
    const phone = `+2224${String(Math.floor(Math.random() * 1e7)).padStart(7, '0')}`;
    expectStatus(await app.admin('POST', '/wallets', { phone, pin, balance: 100_000, environment: 'test' }), 201);
    return phone;
  };

  test(`${GUESSES} parallel wrong PINs: exactly ${MAX_PIN_ATTEMPTS} are evaluated, the rest refused as locked`, async () => {
    const phone = await newWallet(t, '2468');
    const intent = await createIntent(t, sk, { amount: 1000 });
    const responses = await Promise.all(
      Array.from({ length: GUESSES }, (_, i) => pay(t, intent.shortCode, { phone, pin: String(1000 + i) })),
    );
    for (const response of responses) assert.ok([401, 403].includes(response.status), response.text);
    const { invalid, locked, codes } = tally(responses);
    assert.equal(invalid, MAX_PIN_ATTEMPTS - 1, codes.join());
    assert.equal(locked, GUESSES - invalid, codes.join());
    // The wallet stays locked for the window (the per-wallet rate limit of 20 a minute is spent,
    // so this is read from the admin API); nothing was charged.
    const wallet = await t.admin('GET', `/wallets?phone=${encodeURIComponent(phone)}&environment=test`);
    assert.equal(wallet.body.data.status, 'locked', wallet.text);
    assert.equal(wallet.body.data.balance, 100_000);
  });

  test('the right PIN racing wrong ones pays only when it is one of the first five attempts', async () => {
    for (let round = 0; round < 3; round++) {
      const phone = await newWallet(t, '2468');
      const intent = await createIntent(t, sk, { amount: 1000 });
      const rightAt = [0, 10, 19][round]!;
      const responses = await Promise.all(
        Array.from({ length: GUESSES }, (_, i) =>
          pay(t, intent.shortCode, { phone, pin: i === rightAt ? '2468' : String(1000 + i) }),
        ),
      );
      const { invalid, paid, codes } = tally(responses);
      assert.ok(paid <= 1, codes.join());
      // The right PIN forgives the wrong ones counted before it (at most four, or the wallet was
      // locked and it could not pay); those counted after it make a new count, locked at five.
      assert.ok(invalid <= (MAX_PIN_ATTEMPTS - 1) * (1 + paid), codes.join());
      assert.equal(await walletBalance(t, phone), 100_000 - paid * 1000);
      const stored = await t.request('GET', `/api/v1/dev/intents/${intent.referenceNumber}`, { key: sk });
      assert.equal(stored.body.data.status, paid ? 'PAID' : 'PENDING', codes.join());
    }
  });

  test('an expired lock starts a new window of five attempts', async () => {
    const phone = await newWallet(t, '2468');
    const intent = await createIntent(t, sk, { amount: 1000 });
    const first = tally(
      await Promise.all(Array.from({ length: 8 }, () => pay(t, intent.shortCode, { phone, pin: '0000' }))),
    );
    assert.equal(first.invalid, MAX_PIN_ATTEMPTS - 1, first.codes.join());
    await t.runtime.db
      .updateTable('wallets')
      .set({ locked_until: new Date(Date.now() - 1000) })
      .where('phone', '=', phone)
      .execute();
    // Four wrong PINs in a row are answered INVALID_PIN again: the count restarted from zero.
    for (let i = 0; i < MAX_PIN_ATTEMPTS - 1; i++)
      expectError(await pay(t, intent.shortCode, { phone, pin: '0000' }), 401, 'INVALID_PIN');
    expectStatus(await pay(t, intent.shortCode, { phone, pin: '2468' }), 200);
  });

  test.skipIf(!testDatabaseUrl && 'PostgreSQL only')(
    'two API processes on one PostgreSQL share the count',
    async () => {
      const url = t.testDatabase.url!;
      const second = await startTestApp({
        config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' },
        testDatabase: {
          database: await openDatabase({ kind: 'postgres', url, poolSize: 10 }),
          url,
          drop: async () => {},
        },
      });
      try {
        const phone = await newWallet(t, '2468');
        const intent = await createIntent(t, sk, { amount: 1000 });
        const responses = await Promise.all(
          Array.from({ length: GUESSES }, (_, i) =>
            pay(i % 2 ? second : t, intent.shortCode, { phone, pin: String(1000 + i) }),
          ),
        );
        const { invalid, codes } = tally(responses);
        assert.equal(invalid, MAX_PIN_ATTEMPTS - 1, codes.join());
        const wallet = await t.admin('GET', `/wallets?phone=${encodeURIComponent(phone)}&environment=test`);
        assert.equal(wallet.body.data.status, 'locked', wallet.text);
      } finally {
        await second.app.close();
        await second.runtime.close();
      }
    },
  );
});
