import assert from 'node:assert/strict';
import { afterAll, beforeAll, test } from 'vitest';
import fc from 'fast-check';
import { sql } from 'kysely';
import { expectStatus, startTestApp, type TestApp } from '../support/harness.js';
import { createProduct } from '../products/support.js';
import { act, createIntent } from '../intents/support.js';
import { orderAction } from '../orders/support.js';
import { assertBalanceExplained, assertLedgerSound, fold, platformShares, setPlan } from './support.js';

const PAYER = '+22252000000';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '1000000' } });
  expectStatus(
    await t.admin('POST', '/wallets', { phone: PAYER, pin: '1234', balance: 1_000_000_000, environment: 'test' }),
    201,
  );
});
afterAll(() => t.close());

type Operation =
  | { kind: 'intent'; amount: number; outcome: 'pay' | 'fail' | 'expire' | 'cancel' }
  | { kind: 'order'; quantity: number; costed: boolean }
  | { kind: 'refund'; target: number; share: number }
  | { kind: 'modify'; target: number; quantity: number; lines: 'costed' | 'plain' | 'both'; accept: boolean }
  | { kind: 'cancelOrder'; target: number };

const operation: fc.Arbitrary<Operation> = fc.oneof(
  fc.record({
    kind: fc.constant('intent' as const),
    amount: fc.oneof(fc.integer({ min: 1, max: 200 }), fc.integer({ min: 1, max: 5_000_000 })),
    outcome: fc.constantFrom('pay' as const, 'pay' as const, 'fail' as const, 'expire' as const, 'cancel' as const),
  }),
  fc.record({ kind: fc.constant('order' as const), quantity: fc.integer({ min: 1, max: 5 }), costed: fc.boolean() }),
  fc.record({
    kind: fc.constant('refund' as const),
    target: fc.nat(),
    share: fc.oneof(fc.constant(1), fc.double({ min: 0.01, max: 1, noNaN: true })),
  }),
  fc.record({
    kind: fc.constant('modify' as const),
    target: fc.nat(),
    quantity: fc.integer({ min: 1, max: 8 }),
    lines: fc.constantFrom('costed' as const, 'plain' as const, 'both' as const),
    accept: fc.boolean(),
  }),
  fc.record({ kind: fc.constant('cancelOrder' as const), target: fc.nat() }),
);

const plan = fc.record({
  providerBps: fc.integer({ min: 0, max: 1000 }),
  payerFee: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 300 })),
  tofBps: fc.oneof(fc.constant(500), fc.integer({ min: 0, max: 10_000 })),
  tteBps: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 10_000 })),
  revenueModel: fc.constantFrom('COMMISSION' as const, 'MARGIN' as const),
  marginBps: fc.integer({ min: 0, max: 10_000 }),
});

/**
 * Issue 33: after any sequence of payments (intents and orders), failures, expiries, cancels,
 * modifications and partial or full refunds, under any fee plan and either revenue model, odd
 * amounts and rates included: `ledger check` passes, no platform account holds less of this
 * merchant's money than zero, and the merchant's balance is the sum of its balance transactions.
 */
test('money in comes out exactly: ledger sound, platform shares never negative, balance explained (property-based)', async () => {
  let run = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.array(operation, { minLength: 1, maxLength: 14 }),
      plan,
      fc.integer({ min: 1, max: 30_000 }),
      fc.integer({ min: 0, max: 40_000 }),
      async (operations, fees, price, costBasis) => {
        run += 1;
        const business = await t.createBusiness({ name: `Property ${run}` });
        const key = business.keys.secretTest;
        await setPlan(t, business.id, fees);
        const costed = await createProduct(t, key, {
          name: 'Costed',
          price,
          costBasis,
          quantity: 100_000,
          status: 'ACTIVE',
        });
        const plain = await createProduct(t, key, { name: 'Plain', price, quantity: 100_000, status: 'ACTIVE' });
        const paid: { ref: string; kind: 'intent' | 'order' }[] = [];
        for (const op of operations) {
          const target = paid.length > 0 ? paid[(op as { target?: number }).target! % paid.length] : undefined;
          switch (op.kind) {
            case 'intent': {
              const amount = op.amount === 1313 ? 1314 : op.amount;
              const intent = await createIntent(t, key, { amount });
              const ref = intent.referenceNumber as string;
              if (op.outcome === 'pay') {
                expectStatus(await act(t, key, ref, 'simulate', { payerPhone: PAYER }), 200);
                paid.push({ ref, kind: 'intent' });
              } else if (op.outcome === 'fail') {
                expectStatus(await act(t, key, ref, 'simulate', { outcome: 'failure' }), 200);
              } else if (op.outcome === 'expire') {
                expectStatus(await act(t, key, ref, 'simulate-expiry'), 200);
              } else {
                expectStatus(await act(t, key, ref, 'cancel'), 200);
              }
              break;
            }
            case 'order': {
              const placed = await orderAction(t, key, '/simulate', {
                items: [{ productId: (op.costed ? costed : plain).id, quantity: op.quantity }],
                customerName: 'P',
                customerPhone: PAYER,
              });
              expectStatus(placed, 201);
              paid.push({ ref: placed.body.data.referenceNumber, kind: 'order' });
              break;
            }
            case 'refund': {
              if (!target) break;
              const path =
                target.kind === 'intent'
                  ? `/api/v1/dev/intents/${target.ref}`
                  : `/api/v1/dev/store/orders/${target.ref}`;
              const current = (await t.request('GET', path, { key })).body.data;
              const amountPaid = target.kind === 'intent' ? current.payment?.amountPaid : current.payment?.amountPaid;
              const left = (amountPaid ?? 0) - current.totalAmountRefunded;
              const amount = Math.max(1, Math.floor(left * op.share));
              if (target.kind === 'intent') await act(t, key, target.ref, 'refund', { amount });
              else await orderAction(t, key, `/${target.ref}/refund`, { amount });
              break;
            }
            case 'modify':
              if (target?.kind !== 'order') break;
              await orderAction(t, key, `/${target.ref}/propose-modification`, {
                items: [
                  ...(op.lines !== 'plain' ? [{ productId: costed.id, quantity: op.quantity }] : []),
                  ...(op.lines !== 'costed'
                    ? [{ productId: plain.id, quantity: op.lines === 'plain' ? op.quantity : 1 }]
                    : []),
                ],
              });
              await orderAction(t, key, `/${target.ref}/modification/${op.accept ? 'accept' : 'decline'}`);
              break;
            case 'cancelOrder':
              if (target?.kind === 'order') await orderAction(t, key, `/${target.ref}/cancel`, { reason: 'property' });
              break;
          }
        }
        await assertLedgerSound(t);
        const transactions = await sql<{ id: string }>`
          SELECT ledger_transaction_id AS id FROM balance_transactions WHERE business_id = ${business.id}`.execute(
          t.runtime.db,
        );
        if (transactions.rows.length > 0) {
          const shares = await platformShares(
            t,
            transactions.rows.map((row) => row.id),
          );
          for (const [account, held] of Object.entries(shares)) {
            assert.ok(held >= 0, `${account} holds ${held} of this merchant's payments`);
          }
        }
        await assertBalanceExplained(t, key);
        await fold(t);
        await assertLedgerSound(t);
      },
    ),
    { numRuns: 16, seed: Number(process.env.PROPERTY_SEED ?? 20261127) },
  );
});
