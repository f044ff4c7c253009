import type { Transaction } from 'kysely';
import type { DB, Environment } from '../../db/schema.js';
import { ApiError } from '../../http/errors.js';
import type { Commission } from './fees.js';
import type { BalanceEntry, LedgerTransfer } from './ledger.js';
import type { Payer } from './payers.js';
import type { SellerReversal, SplitShare } from './splits.js';
import type { PaymentFailureCode, PaymentMethodName } from './state.js';
import { walletCharge, walletRefund, type WalletCharge } from './wallet-payments.js';

/** One attempt to pay, as the intent or order that asks for it describes it. */
export interface PaymentAttempt {
  environment: Environment;
  businessId: string;
  /** The intent's or order's reference: its ledger transaction's reference and balance source. */
  reference: string;
  amount: number;
  /** What the platform takes of it (the fee plan applied by the caller). */
  commission: Commission;
  balance: Omit<BalanceEntry, 'amount'>;
  /** The sellers' shares when the payment is split (decision 080): more lines of the same posting. */
  split?: readonly SplitShare[] | undefined;
  /** The payer's phone, and its wallet if the caller locked one for it (with the intent). */
  phone: string;
  payer: Payer | undefined;
  /**
   * The sandbox's reserved failing amount, which the caller knows (sandbox/sandbox.ts): declined
   * once the wallet is found usable, as the sandbox always has, so a locked wallet still answers
   * as locked.
   */
  declinedInSandbox: boolean;
  now: Date;
}

/**
 * What a method answers an attempt: paid now (the charge to post in the caller's statement),
 * refused (nothing moved), or waiting for the payer (nothing held: a later transaction ends it).
 */
export type Authorization =
  | { status: 'SUCCEEDED'; payer: Payer; charge: WalletCharge }
  | { status: 'FAILED'; failure: PaymentFailureCode; message: string }
  | { status: 'PROCESSING' };

/** An answer given at once: paid or refused. */
export type ImmediateAuthorization = Exclude<Authorization, { status: 'PROCESSING' }>;

/** What a refund gives back, to the wallet the payment came from. */
export interface MethodRefund {
  environment: Environment;
  businessId: string;
  walletId: string;
  reference: string;
  amount: number;
  commission: Commission;
  balance: Omit<BalanceEntry, 'amount'>;
  /** What each seller of a split payment gives back (`refundTakes`). */
  sellers?: readonly SellerReversal[] | undefined;
  now: Date;
}

/**
 * A way to pay. The intent or order owns its lifecycle and asks its method, inside its
 * transaction, whether the money moves; the method never writes the intent, the order or the
 * payment's row (the caller writes them with the money, in one statement).
 */
export interface PaymentMethod {
  readonly name: PaymentMethodName;
  authorize(trx: Transaction<DB>, attempt: PaymentAttempt): Promise<Authorization>;
  /**
   * The payer's yes to an attempt that waited (PROCESSING): the money moves now, or the attempt
   * fails. Only a method that can answer PROCESSING has it.
   */
  approve?(trx: Transaction<DB>, attempt: PaymentAttempt): Promise<ImmediateAuthorization>;
  refund(trx: Transaction<DB>, refund: MethodRefund): Promise<LedgerTransfer>;
}

/** The words kept on a failed payment, by its code. */
export function failureMessage(failure: PaymentFailureCode, amount: number): string {
  switch (failure) {
    case 'INSUFFICIENT_BALANCE':
      return 'Insufficient balance.';
    case 'SANDBOX_DECLINED':
      return `The sandbox amount ${amount} always fails.`;
    case 'SIMULATED_FAILURE':
      return 'Simulated payment failure.';
    case 'INVALID_PIN':
      return 'Wrong phone number or PIN.';
    case 'WALLET_LOCKED':
      return 'The wallet is locked.';
    case 'DECLINED':
      return 'The payer declined the payment.';
    case 'TIMED_OUT':
      return 'The payer did not answer in time.';
    case 'NOT_PAYABLE':
      return 'The payment could no longer be made when the payer answered.';
    case 'CANCELLED':
      return 'The request was withdrawn before the payer answered: the merchant cancelled it, or its intent was cancelled or paid another way.';
    default: {
      const never: never = failure;
      throw new Error(`unknown payment failure ${String(never)}`);
    }
  }
}

export const failed = (failure: PaymentFailureCode, amount: number): ImmediateAuthorization => ({
  status: 'FAILED',
  failure,
  message: failureMessage(failure, amount),
});

/** The charge of a locked wallet: the money moves, or too little is there and nothing does. */
export function chargeWallet(attempt: PaymentAttempt, payer: Payer): ImmediateAuthorization {
  if (attempt.declinedInSandbox) return failed('SANDBOX_DECLINED', attempt.amount);
  const charge = walletCharge({ ...attempt, payer });
  if (charge === 'INSUFFICIENT_BALANCE') return failed('INSUFFICIENT_BALANCE', attempt.amount);
  return { status: 'SUCCEEDED', payer, charge };
}

/**
 * The wallet and its PIN typed on one of our pages (checkout, pay-by-code, storefront): the PIN
 * was checked before the transaction (the hash is slow), the wallet locked with the intent.
 */
export const walletPin: PaymentMethod = {
  name: 'WALLET_PIN',
  authorize(_trx, attempt) {
    if (!attempt.payer) throw new ApiError('WALLET_NOT_FOUND');
    return Promise.resolve(chargeWallet(attempt, attempt.payer));
  },
  refund: (trx, refund) => walletRefund(trx, refund),
};

/**
 * A request pushed to the payer's wallet (payment requests): nothing moves when it is made (the
 * payment waits, PROCESSING); the payer's yes in the wallet app, PIN checked, charges the wallet
 * locked with the intent.
 */
export const walletRequest: PaymentMethod = {
  name: 'WALLET_REQUEST',
  authorize: () => Promise.resolve({ status: 'PROCESSING' }),
  approve(_trx, attempt) {
    if (!attempt.payer) throw new ApiError('WALLET_NOT_FOUND');
    return Promise.resolve(chargeWallet(attempt, attempt.payer));
  },
  refund: (trx, refund) => walletRefund(trx, refund),
};
