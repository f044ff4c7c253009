import assert from 'node:assert/strict';
import { afterAll, beforeAll, test } from 'vitest';
import fc from 'fast-check';
import { expectStatus, startTestApp, type TestApp } from '../support/harness.js';
import { act } from '../intents/support.js';
import { walletBalance } from '../orders/support.js';
import { assertBalanceExplained, assertLedgerSound, fold, setPlan } from '../payments/support.js';
import { createPayout, earn, PAYOUTS, payoutTo, sendPayouts } from './support.js';

const FAILING = '+22220001313';

type Operation =
  | { kind: 'pay'; amount: number }
  | { kind: 'refund'; payment: number; share: number }
  | { kind: 'payout'; share: number; fails: boolean }
  | { kind: 'batch'; shares: number[]; failing: number }
  | { kind: 'cancel'; payout: number }
  | { kind: 'send' };

const operation: fc.Arbitrary<Operation> = fc.oneof(
  fc.record({ kind: fc.constant('pay' as const), amount: fc.integer({ min: 1, max: 50_000 }) }),
  fc.record({
    kind: fc.constant('refund' as const),
    payment: fc.nat(),
    share: fc.double({ min: 0.05, max: 1, noNaN: true }),
  }),
  fc.record({
    kind: fc.constant('payout' as const),
    share: fc.double({ min: 0.01, max: 1.2, noNaN: true }),
    fails: fc.boolean(),
  }),
  fc.record({
    kind: fc.constant('batch' as const),
    shares: fc.array(fc.double({ min: 0.01, max: 0.5, noNaN: true }), { minLength: 1, maxLength: 4 }),
    failing: fc.nat(),
  }),
  fc.record({ kind: fc.constant('cancel' as const), payout: fc.nat() }),
  fc.constant({ kind: 'send' as const }),
);

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '1000000' } });
});
afterAll(() => t.close());

/**
 * Issue 35: after any sequence of payments, refunds, payouts (paid, failed, cancelled) and
 * batches, the ledger check passes, the balance equals its transactions, the merchant holds its
 * net payments less what its paid and pending payouts took (amount and fee), and each destination
 * wallet holds exactly what its paid payouts sent.
 */
test('money out follows every payout: ledger sound, balances equal their transactions (property-based)', async () => {
  let run = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.array(operation, { minLength: 1, maxLength: 10 }),
      fc.integer({ min: 0, max: 400 }),
      fc.integer({ min: 0, max: 500 }),
      fc.integer({ min: 0, max: 300 }),
      async (operations, providerBps, payoutFeeFlat, payoutFeeBps) => {
        run += 1;
        const business = await t.createBusiness({ name: `Payout money ${run}` });
        const key = business.keys.secretTest;
        await setPlan(t, business.id, { providerBps, payerFee: 0, tofBps: 500, tteBps: 100 });
        expectStatus(await t.admin('PUT', `/businesses/${business.id}/fees`, { payoutFeeFlat, payoutFeeBps }), 200);
        const destination = `+2226${String(run).padStart(7, '0')}`;
        const balance = async () => (await t.request('GET', '/api/v1/dev/balance', { key })).body.data.available;
        const payments: string[] = [await earn(t, key, 20_000)];
        const payouts: string[] = [];
        for (const op of operations) {
          switch (op.kind) {
            case 'pay':
              payments.push(await earn(t, key, op.amount === 1313 ? 1314 : op.amount));
              break;
            case 'refund': {
              const reference = payments[op.payment % payments.length]!;
              const intent = (await t.request('GET', `/api/v1/dev/intents/${reference}`, { key })).body.data;
              const left = (intent.payment?.amountPaid ?? 0) - intent.totalAmountRefunded;
              if (left > 0)
                await act(t, key, reference, 'refund', { amount: Math.max(1, Math.floor(left * op.share)) });
              break;
            }
            case 'payout': {
              const amount = Math.max(1, Math.floor((await balance()) * op.share));
              const created = await createPayout(t, key, payoutTo(op.fails ? FAILING : destination, amount));
              if (created.status === 201) payouts.push(created.body.data.referenceNumber);
              else assert.equal(created.body.error.code, 'INSUFFICIENT_FUNDS', created.text);
              break;
            }
            case 'batch': {
              const available = await balance();
              const items = op.shares.map((share, index) =>
                payoutTo(
                  index === op.failing % op.shares.length ? FAILING : destination,
                  Math.max(1, Math.floor(available * share)),
                ),
              );
              const created = await t.request('POST', `${PAYOUTS}/batch`, {
                key,
                idempotencyKey: true,
                body: { items },
              });
              if (created.status === 201) {
                payouts.push(
                  ...created.body.data.payouts.map((payout: { referenceNumber: string }) => payout.referenceNumber),
                );
              } else assert.equal(created.body.error.code, 'INSUFFICIENT_FUNDS', created.text);
              break;
            }
            case 'cancel': {
              if (payouts.length === 0) break;
              const reference = payouts[op.payout % payouts.length]!;
              const cancelled = await t.request('POST', `${PAYOUTS}/${reference}/cancel`, {
                key,
                idempotencyKey: true,
                body: {},
              });
              if (cancelled.status !== 200)
                assert.equal(cancelled.body.error.code, 'PAYOUT_NOT_PENDING', cancelled.text);
              break;
            }
            case 'send':
              await sendPayouts(t);
              break;
          }
        }
        await fold(t);
        await assertLedgerSound(t);
        await assertBalanceExplained(t, key);
        const rows = await t.runtime.db
          .selectFrom('payouts')
          .selectAll()
          .where('business_id', '=', business.id)
          .execute();
        const intents = await t.runtime.db
          .selectFrom('payment_intents')
          .select(['amount_paid', 'provider_ttc', 'provider_returned', 'total_amount_refunded'])
          .where('business_id', '=', business.id)
          .execute();
        const netPayments = intents.reduce(
          (sum, i) => sum + (i.amount_paid ?? 0) - i.total_amount_refunded - (i.provider_ttc - i.provider_returned),
          0,
        );
        const takenOut = rows
          .filter((row) => row.status === 'PAID' || row.status === 'PENDING')
          .reduce((sum, row) => sum + row.amount + row.fee, 0);
        assert.equal(await balance(), netPayments - takenOut);
        const sent = rows.filter((row) => row.status === 'PAID').reduce((sum, row) => sum + row.amount, 0);
        if (sent > 0) assert.equal(await walletBalance(t, destination), sent);
        assert.ok(rows.every((row) => row.status !== 'FAILED' || row.destination_phone === FAILING));
        await sendPayouts(t);
      },
    ),
    { numRuns: 8 },
  );
});
