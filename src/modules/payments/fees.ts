import type { Commission, RevenueModel } from '../../db/schema.js';

export type { Commission };

/**
 * Fees and their taxes (decisions.md "Commission"). All values are integer centimes; rates are
 * basis points. BigInt keeps every intermediate product exact, whatever the amount.
 */
export interface FeePlan {
  providerBps: number;
  payerFee: number;
  tofBps: number;
  tteBps: number;
  /** COMMISSION: the provider rate on the amount. MARGIN: `marginBps` on an order's margin (`orderCommission`). */
  revenueModel: RevenueModel;
  marginBps: number;
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
  // Only rates near 100 % each could make the two rounded taxes pass the fees by a centime.
  const tte = Math.min(includedTax(fees, tteBps), fees - tof);
  return { provider_ttc: providerTtc, payer_ttc: payerTtc, tof, tte, total_revenue: fees - tof - tte };
}

/** The commission of a payment of `amount` (an intent's, or any charge without lines). */
export function paymentCommission(amount: number, plan: FeePlan, payerFee = plan.payerFee): Commission {
  const providerTtc = divideRoundHalfUp(BigInt(amount) * BigInt(plan.providerBps), 10_000n);
  return assemble(providerTtc, payerFee, plan.tofBps, plan.tteBps);
}

/** A business's payout fee as the operator sets it: a flat part plus a rate, tax included. */
export interface PayoutFeePlan {
  payoutFeeFlat: number;
  payoutFeeBps: number;
  tofBps: number;
  tteBps: number;
}

/**
 * The fee of a payout of `amount`: the flat part plus the rate on the amount, rounded up (decision
 * 072): a rate is never 0 on a small payout, and a batch of small payouts never pays less than the
 * same amount paid out at once, as rounding each item to the nearest centime would allow.
 */
export function payoutFee(amount: number, plan: PayoutFeePlan): number {
  const numerator = BigInt(amount) * BigInt(plan.payoutFeeBps);
  return plan.payoutFeeFlat + Number((numerator + 9_999n) / 10_000n);
}

/** What a payout's fee splits into: the taxes it includes and the platform's revenue. */
export function payoutFeeCommission(fee: number, plan: Pick<FeePlan, 'tofBps' | 'tteBps'>): Commission {
  return assemble(0, fee, plan.tofBps, plan.tteBps);
}

/** An order line as the MARGIN revenue model sees it: what it costs the customer and the shop. */
export interface MarginLine {
  /** The line's total (unit price with variant and options, times quantity). */
  amount: number;
  quantity: number;
  /** The product's cost per unit; null when the product has none. */
  costBasis: number | null;
}

/**
 * The provider fee of an order's lines. COMMISSION: the provider rate on the total. MARGIN: the
 * margin rate on each line's margin (its total less cost basis × quantity, never below zero),
 * the provider rate on the total of lines whose product has no cost basis; rounded half up once,
 * on the sum.
 */
export function linesProviderFee(lines: readonly MarginLine[], plan: FeePlan): number {
  let numerator = 0n;
  for (const line of lines) {
    if (plan.revenueModel === 'MARGIN' && line.costBasis !== null) {
      const margin = Math.max(0, line.amount - line.costBasis * line.quantity);
      numerator += BigInt(margin) * BigInt(plan.marginBps);
    } else {
      numerator += BigInt(line.amount) * BigInt(plan.providerBps);
    }
  }
  return divideRoundHalfUp(numerator, 10_000n);
}

/** The commission of an order's charge whose provider fee is `providerTtc` (`linesProviderFee`). */
export function chargeCommission(providerTtc: number, payerFee: number, plan: FeePlan): Commission {
  return assemble(providerTtc, payerFee, plan.tofBps, plan.tteBps);
}

/**
 * Where the fees of a payment (or of an order's several charges) stand for its refunds: what was
 * charged, what its fees put in each platform account, and what refunds took back so far. The
 * revenue account received the fees less the taxes, and gave back the provider fee returned less
 * the taxes returned.
 */
export interface FeeState {
  /** The amounts charged (without payer fees) and the provider fee on them. */
  charged: number;
  providerTtc: number;
  /** The payer fees: the platform keeps them whatever is refunded. */
  payerTtc: number;
  /** What the tax accounts received. */
  tof: number;
  tte: number;
  returned: number;
  providerReturned: number;
  tofReturned: number;
  tteReturned: number;
}

export const NO_FEES: FeeState = Object.freeze({
  charged: 0,
  providerTtc: 0,
  payerTtc: 0,
  tof: 0,
  tte: 0,
  returned: 0,
  providerReturned: 0,
  tofReturned: 0,
  tteReturned: 0,
});

/** The fee state after one more charge (an order's higher total) with its commission. */
export function withCharge(fees: FeeState, amount: number, commission: Commission): FeeState {
  return {
    ...fees,
    charged: fees.charged + amount,
    providerTtc: fees.providerTtc + commission.provider_ttc,
    payerTtc: fees.payerTtc + commission.payer_ttc,
    tof: fees.tof + commission.tof,
    tte: fees.tte + commission.tte,
  };
}

/** The fee state after a refund that gave back `commission` of `amount`. */
export function withRefund(fees: FeeState, amount: number, commission: Commission): FeeState {
  return {
    ...fees,
    returned: fees.returned + amount,
    providerReturned: fees.providerReturned + commission.provider_ttc,
    tofReturned: fees.tofReturned + commission.tof,
    tteReturned: fees.tteReturned + commission.tte,
  };
}

type PlatformShares = { revenue: number; tof: number; tte: number };
/** The order in which a refund's shares are adjusted when one account has too little left. */
const SHARE_ORDER = ['revenue', 'tof', 'tte'] as const;

const floorDiv = (numerator: number, by: number, denominator: number) =>
  denominator <= 0 ? 0 : Number((BigInt(numerator) * BigInt(by)) / BigInt(denominator));

/**
 * How `returned` centimes of fees, given back in all, split over the platform accounts in
 * proportion to what each received: the taxes together, then tof within them, each rounded half
 * up; revenue and tte take the rest. Each share grows with `returned` and never passes what its
 * account received, since no account received more than all the fees.
 */
function sharesOf(credited: PlatformShares, fees: number, returned: number): PlatformShares {
  const taxes = credited.tof + credited.tte;
  const taxesBack = fees > 0 ? divideRoundHalfUp(BigInt(taxes) * BigInt(returned), BigInt(fees)) : 0;
  const tofBack = taxes > 0 ? divideRoundHalfUp(BigInt(credited.tof) * BigInt(taxesBack), BigInt(taxes)) : 0;
  return { revenue: returned - taxesBack, tof: tofBack, tte: taxesBack - tofBack };
}

/**
 * The part of the fees a refund gives back (decisions.md "Commission"): the provider fee pro rata
 * to the amount refunded, rounded down on the running total, never the payer fee; all that is
 * left of it on the refund that leaves nothing to refund (`final`). What it gives back is taken
 * from the revenue and tax accounts in proportion to what this payment credited them, on the
 * running totals too, and never more than each has left of it: a platform account cannot go
 * below what its other payments put in.
 */
export function refundCommission(fees: FeeState, refundAmount: number, final: boolean): Commission {
  const proportional = floorDiv(fees.providerTtc, fees.returned + refundAmount, fees.charged);
  const providerAfter = final
    ? fees.providerTtc
    : Math.min(fees.providerTtc, Math.max(fees.providerReturned, proportional));
  const give = providerAfter - fees.providerReturned;
  const feesTotal = fees.providerTtc + fees.payerTtc;
  const credited = { revenue: feesTotal - fees.tof - fees.tte, tof: fees.tof, tte: fees.tte };
  const taken = {
    revenue: fees.providerReturned - fees.tofReturned - fees.tteReturned,
    tof: fees.tofReturned,
    tte: fees.tteReturned,
  };
  const target = sharesOf(credited, feesTotal, providerAfter);
  const room = (account: keyof PlatformShares) => Math.max(0, credited[account] - taken[account]);
  const back = { revenue: 0, tof: 0, tte: 0 };
  for (const account of SHARE_ORDER) {
    back[account] = Math.min(room(account), Math.max(0, target[account] - taken[account]));
  }
  // Only an order charged again after a return can leave the running shares behind what was
  // taken; then the difference is made up where there is room, revenue first.
  let left = give - back.revenue - back.tof - back.tte;
  for (const account of SHARE_ORDER) {
    const step = left > 0 ? Math.min(left, room(account) - back[account]) : Math.max(left, -back[account]);
    back[account] += step;
    left -= step;
  }
  back.revenue += left;
  return { provider_ttc: give, payer_ttc: 0, tof: back.tof, tte: back.tte, total_revenue: back.revenue };
}

export const DEFAULT_MARGIN_BPS = 1000;

/** A business's fee plan from its `fee_plans` columns (read with something else), or the defaults. */
export function feePlanFromColumns(
  row:
    | {
        provider_bps: number | null;
        payer_fee: number | null;
        tof_bps: number | null;
        tte_bps: number | null;
        revenue_model: RevenueModel | null;
        margin_bps: number | null;
      }
    | undefined,
): FeePlan {
  return {
    providerBps: row?.provider_bps ?? 100,
    payerFee: row?.payer_fee ?? 0,
    tofBps: row?.tof_bps ?? 500,
    tteBps: row?.tte_bps ?? 0,
    revenueModel: row?.revenue_model ?? 'COMMISSION',
    marginBps: row?.margin_bps ?? DEFAULT_MARGIN_BPS,
  };
}
