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

/**
 * Each seller's share of a payment of `amount` whose provider fee is `providerFee`. BUSINESS: the
 * seller gets its gross exactly, the business bears the whole fee. PROPORTIONAL: the fee is spread
 * over the shares by their gross (the business's share, what the sellers leave, last), rounded half
 * up on running totals as decision 004 rounds, so the fees of all lines add up to the fee exactly.
 * A split the create check let through always fits; should it not (the fee plan rose since), the
 * shares are cut in order, from the last, so that the business's line never goes below zero.
 */
export function splitShares(
  amount: number,
  providerFee: number,
  feeBearer: FeeBearer,
  lines: readonly SplitLineRecord[],
): SplitShare[] {
  let room = splitRoom(amount, providerFee, feeBearer);
  let grossSoFar = 0;
  let feeSoFar = 0;
  return lines.map((line) => {
    const gross = Math.max(0, Math.min(lineGross(line, amount), room));
    room -= gross;
    grossSoFar += gross;
    let fee = 0;
    if (feeBearer === 'PROPORTIONAL' && amount > 0) {
      const feeUpTo = Number((2n * BigInt(providerFee) * BigInt(grossSoFar) + BigInt(amount)) / (2n * BigInt(amount)));
      fee = feeUpTo - feeSoFar;
      feeSoFar = feeUpTo;
    }
    return { seller: line.seller, gross, fee, net: gross - fee };
  });
}

/**
 * What a refund of `refund` centimes takes back from each seller of a payment of `paid` that gave
 * them `shares`, after refunds of `refundedBefore` in all: each seller's net share in proportion
 * to what was refunded, on the running total (rounded down: what all refunds so far should have
 * taken, less what the earlier ones took), so the refund that closes the payment takes back every
 * net share exactly, whatever the sequence of partial refunds before it. Shares of 0 give nothing.
 */
export function splitReversal(
  shares: readonly SplitShare[],
  paid: number,
  refundedBefore: number,
  refund: number,
): SellerReversal[] {
  const takenAfter = (share: SplitShare, refunded: number) =>
    paid <= 0 ? 0 : Number((BigInt(share.net) * BigInt(refunded)) / BigInt(paid));
  return shares
    .map((share) => ({
      seller: share.seller,
      amount: takenAfter(share, refundedBefore + refund) - takenAfter(share, refundedBefore),
    }))
    .filter((reversal) => reversal.amount !== 0);
}

/**
 * What a return of an order (a refund, a cancel, a lower total) takes back from each seller of its
 * split. An order's `charged` grows when a modification raises its total (the rise is the
 * business's), so the intents' running rule alone could take back, after a lower total and then a
 * rise, more than a seller was given. Here each seller's target after this return is its net share
 * in proportion to what was returned of what was charged (all of it once everything is returned),
 * never more than its net, less what earlier returns already took (`taken`, from its balance
 * transactions): a seller never gives back more than its share, and the last return closes it.
 */
export function orderSplitReversal(
  shares: readonly SplitShare[],
  charged: number,
  returnedAfter: number,
  taken: ReadonlyMap<string, number>,
): SellerReversal[] {
  return shares
    .map((share) => {
      const target =
        charged <= 0 || returnedAfter >= charged
          ? share.net
          : Math.min(share.net, Number((BigInt(share.net) * BigInt(returnedAfter)) / BigInt(charged)));
      return { seller: share.seller, amount: Math.max(0, target - (taken.get(share.seller) ?? 0)) };
    })
    .filter((reversal) => reversal.amount !== 0);
}
