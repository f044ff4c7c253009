import assert from 'node:assert/strict';
import { afterAll, beforeAll, test } from 'vitest';
import fc from 'fast-check';
import { expectStatus, startTestApp, type TestApp } from '../support/harness.js';
import { act, createIntent } from '../intents/support.js';
import { merchantBalance, walletBalance } from './support.js';

const WALLET_START = 100_000;
const WALLETS = ['+22250000000', '+22250000001', '+22250000002'];

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '1000000' } });
  // Three payer wallets for every run, made once: a wallet's PIN hash (scrypt) is the dearest
  // write there is, and each run starts them again from the same balance (see fundWallets).
  for (const phone of WALLETS) {
    expectStatus(await t.admin('POST', '/wallets', { phone, pin: '1234', balance: 0, environment: 'test' }), 201);
  }
});

/** Brings each wallet back to WALLET_START with a credit: every run starts from the same state. */
async function fundWallets(): Promise<void> {
  for (const phone of WALLETS) {
    const balance = await walletBalance(t, phone);
    assert.ok(balance <= WALLET_START, `${phone} holds ${balance}: more than it was given`);
    if (balance < WALLET_START) {
      const credit = { phone, amount: WALLET_START - balance, environment: 'test' };
      expectStatus(await t.admin('POST', '/wallets/credit', credit), 200);
    }
    assert.equal(await walletBalance(t, phone), WALLET_START);
  }
}
afterAll(() => t.close());

type Operation = { kind: 'pay'; amount: number; wallet: number } | { kind: 'refund'; payment: number; share: number };

const operation: fc.Arbitrary<Operation> = fc.oneof(
  fc.record({
    kind: fc.constant('pay' as const),
    amount: fc.integer({ min: 1, max: 60_000 }),
    wallet: fc.integer({ min: 0, max: 2 }),
  }),
  fc.record({
    kind: fc.constant('refund' as const),
    payment: fc.nat(),
    share: fc.double({ min: 0.01, max: 1, noNaN: true }),
  }),
);

test('ledger invariants hold after any mix of payments and refunds (property-based)', async () => {
  let run = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.array(operation, { minLength: 1, maxLength: 10 }),
      fc.integer({ min: 0, max: 300 }),
      async (operations, providerBps) => {
        run += 1;
        const business = await t.createBusiness({ name: `Property ${run}` });
        await t.admin('PUT', `/businesses/${business.id}/fees`, {
          providerBps,
          payerFee: run % 3 === 0 ? 75 : 0,
          tofBps: 500,
          tteBps: 150,
        });
        await fundWallets();
        const wallets = WALLETS;
        const paid: { reference: string; left: number }[] = [];
        for (const op of operations) {
          if (op.kind === 'pay') {
            const intent = await createIntent(t, business.keys.secretTest, { amount: op.amount });
            const response = await act(t, business.keys.secretTest, intent.referenceNumber, 'simulate', {
              payerPhone: wallets[op.wallet],
            });
            expectStatus(response, 200);
            if (response.body.data.status === 'PAID') paid.push({ reference: intent.referenceNumber, left: op.amount });
            else assert.equal(response.body.data.status, 'FAILED');
          } else if (paid.length > 0) {
            const target = paid[op.payment % paid.length]!;
            if (target.left === 0) continue;
            const amount = Math.max(1, Math.floor(target.left * op.share));
            const response = await act(t, business.keys.secretTest, target.reference, 'refund', { amount });
            expectStatus(response, 200);
            target.left -= amount;
          }
          const check = await t.admin('GET', '/ledger/check');
          assert.equal(check.body.data.ok, true, check.text);
        }
        // Money is conserved: what the wallets lost is what the merchant and the platform hold.
        const walletTotal = (await Promise.all(wallets.map((phone) => walletBalance(t, phone)))).reduce(
          (a, b) => a + b,
          0,
        );
        const merchant = await merchantBalance(t, business.keys.secretTest);
        assert.ok(merchant >= 0 && walletTotal >= 0);
        assert.ok(walletTotal + merchant <= WALLET_START * WALLETS.length);
      },
    ),
    { numRuns: 15, seed: Number(process.env.PROPERTY_SEED ?? 20261122) },
  );
});
