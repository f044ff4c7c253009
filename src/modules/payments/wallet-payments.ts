import type { Transaction } from 'kysely';
import type { DB, Environment } from '../../db/schema.js';
import { ApiError } from '../../http/errors.js';
import type { Commission } from './fees.js';
import { balanceIn, lockAccounts, transfer, type BalanceEntry, type LedgerTransfer } from './ledger.js';
import type { Payer } from './payers.js';
import { chargeSettlement, merchantShare, refundSettlement, type SettlementPlan } from './settlement.js';
import type { SellerReversal, SplitShare } from './splits.js';

const sumOf = <T>(items: readonly T[], of: (item: T) => number) => items.reduce((total, item) => total + of(item), 0);

/** A wallet charge: its settlement plan and the ledger transfer that posts it. */
export interface WalletCharge {
  commission: Commission;
  settlement: SettlementPlan;
  transfer: LedgerTransfer;
}

/**
 * The money of one payment, as a ledger transfer for the statement that records what was paid:
 * the plan's debit (amount + payer fee) out of the payer's locked wallet, and the plan's lines
 * (`chargeSettlement`). Every channel that takes a customer's money (intents and orders) pays
 * through here. Too little in the wallet: no transfer.
 */
export function walletCharge(charge: {
  environment: Environment;
  businessId: string;
  reference: string;
  payer: Payer;
  amount: number;
  /** What the platform takes (`paymentCommission`, or `chargeCommission` for an order's lines). */
  commission: Commission;
  balance: Omit<BalanceEntry, 'amount'>;
  /** The sellers' shares of a split payment (`splitShares`): lines of the same posting. */
  split?: readonly SplitShare[] | undefined;
  now: Date;
}): WalletCharge | 'INSUFFICIENT_BALANCE' {
  const settlement = chargeSettlement(charge.businessId, charge.amount, charge.commission, charge.split);
  if (charge.payer.available < settlement.debit) return 'INSUFFICIENT_BALANCE';
  return {
    commission: charge.commission,
    settlement,
    transfer: transfer({
      environment: charge.environment,
      kind: 'payment',
      reference: charge.reference,
      at: charge.now,
      // The merchant's gross is what the sellers leave of the amount: its `fee` is then its own part of the fees.
      balance: { ...charge.balance, amount: charge.amount - sumOf(charge.split ?? [], (share) => share.gross) },
      // Each seller's balance transaction shows its gross share and its part of the fee (decision 082).
      sellerBalances: new Map(
        (charge.split ?? []).map((share) => [share.seller, { ...charge.balance, amount: share.gross }]),
      ),
      lines: [
        { account: { kind: 'wallet', ownerId: charge.payer.wallet.id }, amount: -settlement.debit },
        ...settlement.lines,
      ],
    }),
  };
}

/**
 * The money of one refund, as a ledger transfer for the statement that records the refund: each
 * line of the charge given back as `refundSettlement` says, to the payer's wallet. The merchant's
 * account is locked first, so that refunds of one merchant never overdraw it together; too little
 * in it is 402 INSUFFICIENT_FUNDS (the merchant's side of too little money, as for a payout; the
 * payer's side is INSUFFICIENT_BALANCE) and nothing moves. Lock order everywhere: the merchant's
 * account, then the wallet's, then any product.
 */
export async function walletRefund(
  trx: Transaction<DB>,
  refund: {
    environment: Environment;
    businessId: string;
    walletId: string;
    reference: string;
    amount: number;
    commission: Commission;
    balance: Omit<BalanceEntry, 'amount'>;
    /** What each seller of a split gives back (`refundTakes`): never locked nor refused, it may go below zero. */
    sellers?: readonly SellerReversal[] | undefined;
    now: Date;
  },
): Promise<LedgerTransfer> {
  const merchant = { kind: 'merchant', ownerId: refund.businessId } as const;
  const settlement = refundSettlement(refund.businessId, refund.amount, refund.commission, refund.sellers);
  const fromMerchant = -merchantShare(settlement);
  const locked = await lockAccounts(trx, refund.environment, [merchant]);
  const available = balanceIn(locked, merchant);
  if (available < fromMerchant) {
    throw new ApiError(
      'INSUFFICIENT_FUNDS',
      `The available balance (${available} centimes) cannot cover this refund (${fromMerchant} centimes needed). Nothing was refunded.`,
    );
  }
  return transfer({
    environment: refund.environment,
    kind: 'refund',
    reference: refund.reference,
    at: refund.now,
    balance: { ...refund.balance, amount: -(refund.amount - sumOf(refund.sellers ?? [], (back) => back.amount)) },
    // The merchant's line first, as refunds have always been posted.
    lines: [
      ...settlement.lines.filter((line) => line.account.kind === 'merchant'),
      { account: { kind: 'wallet', ownerId: refund.walletId }, amount: -settlement.debit },
      ...settlement.lines.filter((line) => line.account.kind !== 'merchant'),
    ],
  });
}
