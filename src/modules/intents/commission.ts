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
 * The part of the fees a refund gives back: the provider fee pro rata, rounded down, and never
 * the payer fee. Computed on the running total so that refunds adding up to the whole payment
 * give back exactly the whole provider fee, whatever the split.
 */
export function refundCommission(paid: PaidFees, refundedBefore: number, refundAmount: number): Commission {
  const providerShare = (refunded: number) =>
    Number((BigInt(paid.providerTtc) * BigInt(refunded)) / BigInt(paid.amountPaid));
  const before = assemble(providerShare(refundedBefore), 0, paid.tofBps, paid.tteBps);
  const after = assemble(providerShare(refundedBefore + refundAmount), 0, paid.tofBps, paid.tteBps);
  return {
    provider_ttc: after.provider_ttc - before.provider_ttc,
    payer_ttc: 0,
    tof: after.tof - before.tof,
    tte: after.tte - before.tte,
    total_revenue: after.total_revenue - before.total_revenue,
  };
}
