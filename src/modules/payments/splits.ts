import type { FeeBearer, SplitLineRecord, SplitShareRecord } from '../../db/schema.js';

/**
 * A payment split between sellers (decision 080), as arithmetic on centimes: what each seller's
 * line of a settlement plan holds, and what each refund takes back from it. Pure: the intent
 * reads and stores the split, the settlement plan posts the lines.
 */

export type SplitShare = SplitShareRecord;

/** What one seller gives back with a refund. */
export interface SellerReversal {
  seller: string;
  amount: number;
}

/** A line's gross on a payment of `amount`: its fixed amount, or its rate of the amount rounded down. */
export function lineGross(line: SplitLineRecord, amount: number): number {
  return 'amount' in line ? line.amount : Number((BigInt(amount) * BigInt(line.bps)) / 10_000n);
}

/**
 * What the sellers' gross shares may add up to on a payment of `amount` with provider fee
 * `providerFee`: all of it when the fee is spread over the shares, the amount less the fee when
 * the business bears it (the business's line never goes below zero).
 */
export function splitRoom(amount: number, providerFee: number, feeBearer: FeeBearer): number {
  return feeBearer === 'BUSINESS' ? amount - providerFee : amount;
}

/** `numerator × by / denominator` rounded half up (decision 004), in integers. */
const roundHalfUp = (numerator: number, by: number, denominator: number) =>
  Number((2n * BigInt(numerator) * BigInt(by) + BigInt(denominator)) / (2n * BigInt(denominator)));

/**
 * Spreads `total` over `weights` in proportion, rounded half up on running totals (decision 004):
 * each part is what the parts up to it should be less what the ones before took, so they add up
 * to `total` exactly, and none passes its weight when `total` does not pass their sum.
 */
function spread(total: number, weights: readonly number[]): number[] {
  const sum = weights.reduce((all, weight) => all + weight, 0);
  let soFar = 0;
  let given = 0;
  return weights.map((weight) => {
    soFar += weight;
    const upTo = sum > 0 ? roundHalfUp(total, soFar, sum) : 0;
    const part = upTo - given;
    given = upTo;
    return part;
  });
}

/**
 * Each seller's share of a payment of `amount` whose provider fee is `providerFee`. BUSINESS: the
 * seller gets its gross exactly, the business bears the whole fee. PROPORTIONAL: the fee is spread
 * over the shares by their gross (the business's share, what the sellers leave, last), rounded half
 * up on running totals as decision 004 rounds, so the fees of all lines add up to the fee exactly.
 * When what the sellers leave cannot bear the business's part of the fee (an order whose sellers
 * fill the cart, an intent whose fee plan rose since its create), the shortfall is the sellers':
 * spread over them by their gross as a fee, as above, so each keeps its gross, shows the fee it
 * bears, and the business's line is exactly zero, never below (decisions 080, 081).
 */
export function splitShares(
  amount: number,
  providerFee: number,
  feeBearer: FeeBearer,
  lines: readonly SplitLineRecord[],
): SplitShare[] {
  // The shares never pass the payment (a create check the caller made, kept here as a bound).
  let left = amount;
  const grosses = lines.map((line) => {
    const gross = Math.max(0, Math.min(lineGross(line, amount), left));
    left -= gross;
    return gross;
  });
  const fees =
    feeBearer === 'PROPORTIONAL' && amount > 0
      ? spread(providerFee, [...grosses, left]).slice(0, grosses.length)
      : grosses.map(() => 0);
  const nets = grosses.reduce((all, gross, i) => all + gross - fees[i]!, 0);
  const shortfall = Math.min(nets, Math.max(0, providerFee + nets - amount));
  const extra = spread(shortfall, grosses);
  return lines.map((line, i) => {
    const fee = fees[i]! + extra[i]!;
    return { seller: line.seller, gross: grosses[i]!, fee, net: grosses[i]! - fee };
  });
}

/**
 * What a refund takes back from each seller of a split (decisions 080 and 081), one rule for
 * intents and orders. After it, a seller should have given back its net share in proportion to
 * what was returned of what was paid (`returned.after` of `returned.of`), rounded up, never more
 * than its net, all of it once everything is returned; the refund takes that less what the
 * seller's earlier refunds actually took (`taken`, from its balance transactions), never less
 * than 0. Rounded up so that the business, not the sellers, is the one whose give-back lags: it
 * never gives back more than its own proportional share (less than a centime over), and a payment
 * whose sellers took everything never needs the business's balance for a refund. `room` is what
 * the refund leaves once the provider fee goes back (the refund less the fee given back): the
 * sellers' takes never pass it, so the business's line never goes below zero; a take is cut from
 * the last seller first, and the cut is taken by the next refund, whose target is the same rule.
 */
export function refundTakes(
  shares: readonly SplitShare[],
  returned: { after: number; of: number },
  taken: ReadonlyMap<string, number>,
  room: number,
): SellerReversal[] {
  const takes = shares.map((share) => {
    const target =
      returned.of <= 0 || returned.after >= returned.of
        ? share.net
        : Math.min(share.net, ceilDiv(share.net, returned.after, returned.of));
    return { seller: share.seller, amount: Math.max(0, target - (taken.get(share.seller) ?? 0)) };
  });
  let over = takes.reduce((all, take) => all + take.amount, 0) - Math.max(0, room);
  for (let i = takes.length - 1; i >= 0 && over > 0; i--) {
    const cut = Math.min(over, takes[i]!.amount);
    takes[i]!.amount -= cut;
    over -= cut;
  }
  return takes.filter((take) => take.amount !== 0);
}

const ceilDiv = (numerator: number, by: number, denominator: number) =>
  Number((BigInt(numerator) * BigInt(by) + BigInt(denominator) - 1n) / BigInt(denominator));
