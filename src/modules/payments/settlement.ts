import type { SettlementLineRecord } from '../../db/schema.js';
import type { Commission } from './fees.js';
import type { AccountRef, PostingLine } from './ledger.js';
import type { SellerReversal, SplitShare } from './splits.js';

/**
 * Where a payment's money goes, as data: the accounts it credits and how much each gets. The
 * ledger posts whatever lines a plan holds (the payer's debit balances them), so a later
 * recipient (a seller's share) is one more line here, not a change to the ledger.
 */
export interface SettlementPlan {
  /** What the payer gives: the amount and the payer fee (a refund's is negative: what it gets back). */
  debit: number;
  /**
   * The credits, which sum to `debit`. A line of 0 stays: the ledger posts none for it, but the
   * merchant's line, even of 0, is what its balance transaction records.
   */
  lines: PostingLine[];
  commission: Commission;
}

const MERCHANT = (businessId: string): AccountRef => ({ kind: 'merchant', ownerId: businessId });

const SELLER = (sellerId: string): AccountRef => ({ kind: 'seller', ownerId: sellerId });

/**
 * The plan of a charge of `amount` under `commission` (decisions.md "Commission"): the amount less
 * the provider fee to the merchant, the fees less their taxes to the platform's revenue, each tax
 * to its account. A split (decision 080, `splitShares`) credits each seller its net share, after
 * the merchant's line, and the merchant the rest.
 */
export function chargeSettlement(
  businessId: string,
  amount: number,
  commission: Commission,
  split: readonly SplitShare[] = [],
): SettlementPlan {
  const toSellers = split.reduce((total, share) => total + share.net, 0);
  const lines: PostingLine[] = [
    { account: MERCHANT(businessId), amount: amount - commission.provider_ttc - toSellers },
    ...split.map((share) => ({ account: SELLER(share.seller), amount: share.net })),
    { account: { kind: 'revenue' }, amount: commission.total_revenue },
    { account: { kind: 'tof' }, amount: commission.tof },
    { account: { kind: 'tte' }, amount: commission.tte },
  ];
  return { debit: amount + commission.payer_ttc, lines, commission };
}

/**
 * The plan of a refund of `amount` that gives back `commission` (`refundCommission`, decision
 * 004): each line of a charge of that amount under that commission, reversed, so that what each
 * account gives back is what the rule says and the lines still balance against the payer's credit.
 * Each seller of a split gives back what `refundTakes` says; the merchant the rest.
 */
export function refundSettlement(
  businessId: string,
  amount: number,
  commission: Commission,
  sellers: readonly SellerReversal[] = [],
): SettlementPlan {
  const split = sellers.map((back) => ({ seller: back.seller, gross: back.amount, fee: 0, net: back.amount }));
  const charge = chargeSettlement(businessId, amount, commission, split);
  return {
    debit: -charge.debit,
    lines: charge.lines.map((line) => ({ account: line.account, amount: -line.amount })),
    commission,
  };
}

/** What the merchant's account receives of a plan. */
export function merchantShare(plan: SettlementPlan): number {
  return plan.lines.find((line) => line.account.kind === 'merchant')?.amount ?? 0;
}

/** A plan's lines as a payment keeps them: the account's kind and the centimes, lines of 0 left out. */
export function settlementRecord(plan: SettlementPlan): SettlementLineRecord[] {
  return plan.lines
    .filter((line) => line.amount !== 0)
    .map((line) =>
      line.account.kind === 'seller'
        ? { account: line.account.kind, amount: line.amount, seller: line.account.ownerId ?? '' }
        : { account: line.account.kind, amount: line.amount },
    );
}
