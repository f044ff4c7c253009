import type { Transaction } from 'kysely';
import type { DB, Environment } from '../../db/schema.js';
import { ApiError } from '../../http/errors.js';
import { balanceIn, lockAccounts, transfer, type BalanceEntry, type LedgerTransfer } from './ledger.js';
import type { Payer } from './payers.js';
import type { Commission } from './fees.js';

/**
 * The money of one payment, as a ledger transfer for the statement that records what was paid:
 * amount + payer fee out of the payer's locked wallet, the amount less the provider fee to the
 * merchant, the fees less their taxes to the platform's revenue, the taxes to their accounts.
 * Every channel that takes a customer's money (intents and orders) pays through here. Too little
 * in the wallet: no transfer.
 */
export function walletCharge(charge: {
  environment: Environment;
  businessId: string;
  reference: string;
  payer: Payer;
  amount: number;
  /** What the platform takes (`paymentCommission`, or `orderCommission` for an order's lines). */
  commission: Commission;
  balance: Omit<BalanceEntry, 'amount'>;
  now: Date;
}): { commission: Commission; transfer: LedgerTransfer } | 'INSUFFICIENT_BALANCE' {
  const { commission } = charge;
  const debit = charge.amount + commission.payer_ttc;
  if (charge.payer.available < debit) return 'INSUFFICIENT_BALANCE';
  return {
    commission,
    transfer: transfer({
      environment: charge.environment,
      kind: 'payment',
      reference: charge.reference,
      at: charge.now,
      balance: { ...charge.balance, amount: charge.amount },
      lines: [
        { account: { kind: 'wallet', ownerId: charge.payer.wallet.id }, amount: -debit },
        { account: { kind: 'merchant', ownerId: charge.businessId }, amount: charge.amount - commission.provider_ttc },
        { account: { kind: 'revenue' }, amount: commission.total_revenue },
        { account: { kind: 'tof' }, amount: commission.tof },
        { account: { kind: 'tte' }, amount: commission.tte },
      ],
    }),
  };
}

/**
 * The money of one refund, as a ledger transfer for the statement that records the refund: from
 * the merchant (less the provider fee returned) and from the platform's share of the fees
 * (`refundCommission`), to the payer's wallet. The merchant's account is locked first, so that
 * refunds of one merchant never overdraw it together; too little in it is 402
 * INSUFFICIENT_FUNDS (the merchant's side of too little money, as for a payout; the payer's side
 * is INSUFFICIENT_BALANCE) and nothing moves. Lock order everywhere: the merchant's account, then the
 * wallet's, then any product.
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
    now: Date;
  },
): Promise<LedgerTransfer> {
  const merchant = { kind: 'merchant', ownerId: refund.businessId } as const;
  const fromMerchant = refund.amount - refund.commission.provider_ttc;
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
    balance: { ...refund.balance, amount: -refund.amount },
    lines: [
      { account: merchant, amount: -fromMerchant },
      { account: { kind: 'wallet', ownerId: refund.walletId }, amount: refund.amount },
      { account: { kind: 'revenue' }, amount: -refund.commission.total_revenue },
      { account: { kind: 'tof' }, amount: -refund.commission.tof },
      { account: { kind: 'tte' }, amount: -refund.commission.tte },
    ],
  });
}
