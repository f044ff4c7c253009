import assert from 'node:assert/strict';
import { test } from 'vitest';
import fc from 'fast-check';
import {
  chargeCommission,
  NO_FEES,
  paymentCommission,
  refundCommission,
  withCharge,
  withRefund,
  type FeePlan,
  type FeeState,
} from '../../src/modules/payments/fees.js';

const plan: fc.Arbitrary<FeePlan> = fc.record({
  providerBps: fc.integer({ min: 0, max: 10_000 }),
  payerFee: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 1_000 })),
  tofBps: fc.integer({ min: 0, max: 10_000 }),
  tteBps: fc.integer({ min: 0, max: 10_000 }),
  revenueModel: fc.constant('COMMISSION' as const),
  marginBps: fc.constant(0),
});

type Step = { kind: 'charge'; amount: number } | { kind: 'return'; share: number };
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('charge' as const), amount: fc.integer({ min: 1, max: 10_000_000 }) }),
  fc.record({ kind: fc.constant('return' as const), share: fc.double({ min: 0, max: 1, noNaN: true }) }),
);

const held = (fees: FeeState) => ({
  revenue:
    fees.providerTtc +
    fees.payerTtc -
    fees.tof -
    fees.tte -
    (fees.providerReturned - fees.tofReturned - fees.tteReturned),
  tof: fees.tof - fees.tofReturned,
  tte: fees.tte - fees.tteReturned,
});

/**
 * Issue 33, the arithmetic alone: whatever the plan and the sequence of charges (an order's
 * first payment and its higher totals) and returns (refunds, lower totals), every return gives
 * back non-negative shares that add up to the provider fee it returns, no platform account ever
 * holds less than zero of the payment, and once everything is returned each holds exactly its
 * part of the payer fees.
 */
test('refund shares: never negative, never more than was credited, exact at the end (property-based)', () => {
  fc.assert(
    fc.property(
      plan,
      fc.integer({ min: 1, max: 10_000_000 }),
      fc.array(step, { maxLength: 12 }),
      (fees, first, steps) => {
        let state = withCharge(NO_FEES, first, paymentCommission(first, fees));
        const check = () => {
          for (const [account, value] of Object.entries(held(state))) assert.ok(value >= 0, `${account}: ${value}`);
        };
        check();
        const giveBack = (amount: number, final: boolean) => {
          const back = refundCommission(state, amount, final);
          for (const value of [back.provider_ttc, back.tof, back.tte, back.total_revenue]) assert.ok(value >= 0);
          assert.equal(back.payer_ttc, 0);
          assert.equal(back.tof + back.tte + back.total_revenue, back.provider_ttc);
          state = withRefund(state, amount, back);
          check();
        };
        for (const next of steps) {
          const left = state.charged - state.returned;
          if (next.kind === 'charge') {
            state = withCharge(
              state,
              next.amount,
              chargeCommission(paymentCommission(next.amount, fees).provider_ttc, 0, fees),
            );
            check();
          } else if (left > 0) {
            const amount = Math.max(1, Math.min(left, Math.floor(left * next.share)));
            giveBack(amount, amount === left);
          }
        }
        const left = state.charged - state.returned;
        if (left > 0) giveBack(left, true);
        assert.equal(state.providerReturned, state.providerTtc, 'the whole provider fee went back');
        const kept = held(state);
        assert.equal(kept.revenue + kept.tof + kept.tte, state.payerTtc, 'the payer fee stays');
      },
    ),
    { numRuns: 2_000, seed: Number(process.env.PROPERTY_SEED ?? 20261127) },
  );
});
