import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { checkLedger } from '../../src/modules/payments/ledger.js';
import { SANDBOX_NEW_WALLET_BALANCE } from '../../src/modules/sandbox/sandbox.js';
import { expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { walletBalance } from '../orders/support.js';
import { act, createIntent } from './support.js';

describe('sandbox simulate pays from any E.164 phone (decisions.md)', () => {
  let t: TestApp;
  let business: TestBusiness;
  beforeAll(async () => {
    t = await startTestApp();
    business = await t.createBusiness();
  });
  afterAll(() => t.close());

  test('a phone with no sandbox wallet gets a funded one (PIN 1234) and pays from it', async () => {
    const sk = business.keys.secretTest;
    const intent = await createIntent(t, sk, { amount: 2_500 });
    const paid = await act(t, sk, intent.referenceNumber, 'simulate', { payerPhone: '+22245678901' });
    expectStatus(paid, 200);
    assert.equal(paid.body.data.status, 'PAID');
    assert.equal(await walletBalance(t, '+22245678901'), SANDBOX_NEW_WALLET_BALANCE - 2_500);
    // The customer side knows the wallet now: its PIN is 1234.
    const other = await createIntent(t, sk, { amount: 700 });
    const pay = await t.request('POST', `/checkout/intents/${other.shortCode}/pay`, {
      body: { phone: '+22245678901', pin: '1234' },
    });
    expectStatus(pay, 200);
    assert.ok((await checkLedger(t.runtime.db)).ok);
  });

  test('two payments at once from the same new phone: both paid, one wallet', async () => {
    const sk = business.keys.secretTest;
    const intents = await Promise.all([1, 2].map(() => createIntent(t, sk, { amount: 1_000 })));
    const paid = await Promise.all(
      intents.map((intent) => act(t, sk, intent.referenceNumber, 'simulate', { payerPhone: '+22245000111' })),
    );
    for (const response of paid) {
      expectStatus(response, 200);
      assert.equal(response.body.data.status, 'PAID');
    }
    const wallets = await t.runtime.db
      .selectFrom('wallets')
      .select('id')
      .where('environment', '=', 'test')
      .where('phone', '=', '+22245000111')
      .execute();
    assert.equal(wallets.length, 1);
    assert.deepEqual((await checkLedger(t.runtime.db)).problems, []);
  });
});
