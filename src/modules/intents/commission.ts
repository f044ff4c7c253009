/**
 * Fees and their taxes (decisions.md "Commission"). All values are integer centimes; rates are
 * basis points. BigInt keeps every intermediate product exact, whatever the amount.
 */
export interface FeePlan {
  providerBps: number;
  payerFee: number;
  tofBps: number;
  tteBps: number;
}

/** The `commission` object of payment events, snake_case as api.md 6.2. */
export interface Commission {
  provider_ttc: number;
  payer_ttc: number;
  tof: number;
  tte: number;
  total_revenue: number;
}

export const NO_COMMISSION: Commission = Object.freeze({
  provider_ttc: 0,
  payer_ttc: 0,
  tof: 0,
  tte: 0,
  total_revenue: 0,
});

/** round_half_up(numerator / denominator) for non-negative integers. */
function divideRoundHalfUp(numerator: bigint, denominator: bigint): number {
  return Number((2n * numerator + denominator) / (2n * denominator));
}

/** The tax contained in a tax-inclusive fee: fee × bps / (10000 + bps), rounded half up. */
export function includedTax(fee: number, bps: number): number {
  return divideRoundHalfUp(BigInt(fee) * BigInt(bps), 10_000n + BigInt(bps));
}

function assemble(providerTtc: number, payerTtc: number, tofBps: number, tteBps: number): Commission {
  const fees = providerTtc + payerTtc;
  const tof = includedTax(fees, tofBps);
  const tte = includedTax(fees, tteBps);
  return { provider_ttc: providerTtc, payer_ttc: payerTtc, tof, tte, total_revenue: fees - tof - tte };
}

export function paymentCommission(amount: number, plan: FeePlan): Commission {
  const providerTtc = divideRoundHalfUp(BigInt(amount) * BigInt(plan.providerBps), 10_000n);
  return assemble(providerTtc, plan.payerFee, plan.tofBps, plan.tteBps);
}

/** What the payment stored: its provider fee and the tax rates in force when it was paid. */
export interface PaidFees {
  amountPaid: number;
  providerTtc: number;
  tofBps: number;
  tteBps: number;
}

/**
 * Where the fees of a payment (or of an order's several charges) stand for its refunds: the
 * amounts charged and their provider fee, and what was returned so far of each.
 */
export interface RefundableFees {
  charged: number;
  providerTtc: number;
  returned: number;
  providerReturned: number;
  tofBps: number;
  tteBps: number;
}

/**
 * The part of the fees a refund gives back: the provider fee pro rata, rounded down, and never
 * the payer fee. Computed on the running totals so that refunds adding up to everything charged
 * give back exactly the whole provider fee, whatever the split; `final` (nothing left to refund
 * after this one) gives back all that is left of it, which matters when an order's modification
 * charged more after an earlier return changed the proportion.
 */
export function returnedCommission(fees: RefundableFees, refundAmount: number, final = false): Commission {
  const proportional = Number(
    (BigInt(fees.providerTtc) * BigInt(fees.returned + refundAmount)) / BigInt(Math.max(fees.charged, 1)),
  );
  const share = final ? fees.providerTtc : Math.min(fees.providerTtc, proportional);
  const after = Math.max(fees.providerReturned, share);
  const before = assemble(fees.providerReturned, 0, fees.tofBps, fees.tteBps);
  const now = assemble(after, 0, fees.tofBps, fees.tteBps);
  return {
    provider_ttc: now.provider_ttc - before.provider_ttc,
    payer_ttc: 0,
    tof: now.tof - before.tof,
    tte: now.tte - before.tte,
    total_revenue: now.total_revenue - before.total_revenue,
  };
}

/** An intent refund: one payment, `refundedBefore` already returned from it. */
export function refundCommission(paid: PaidFees, refundedBefore: number, refundAmount: number): Commission {
  const providerShare = (refunded: number) =>
    Number((BigInt(paid.providerTtc) * BigInt(refunded)) / BigInt(paid.amountPaid));
  return returnedCommission(
    {
      charged: paid.amountPaid,
      providerTtc: paid.providerTtc,
      returned: refundedBefore,
      providerReturned: providerShare(refundedBefore),
      tofBps: paid.tofBps,
      tteBps: paid.tteBps,
    },
    refundAmount,
  );
}
