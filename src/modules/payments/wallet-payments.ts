import type { Transaction } from 'kysely';
import type { DB, Environment, PaymentFailure } from '../../db/schema.js';
import { ApiError } from '../../http/errors.js';
import { randomDigits } from '../../lib/ids.js';
import { balanceIn, lockAccounts, transfer, type BalanceEntry, type LedgerTransfer } from './ledger.js';
import { feePlanOf, paymentCommission, refundCommission, type Commission, type FeeState } from './fees.js';
import type { Payer } from './payers.js';
import { changeIntent } from '../intents/changes.js';
import { paymentEvent } from '../intents/events.js';
import { recordRefund, type IntentRow, type IntentWithRefunds, type LockedIntent } from '../intents/repo.js';
import { assertAllowed } from '../intents/state.js';

/** decisions.md: in the sandbox, an intent of exactly this many centimes always fails when paid. */
export const SANDBOX_FAILING_AMOUNT = 1313;

export function isSandboxFailure(intent: IntentRow, amount: number): boolean {
  return intent.environment === 'test' && amount === SANDBOX_FAILING_AMOUNT;
}

export type { PaymentFailure };

const FAILURE_TEXT: Record<PaymentFailure, (amount: number) => string> = {
  INSUFFICIENT_BALANCE: () => 'Insufficient balance.',
  SANDBOX_DECLINED: (amount) => `The sandbox amount ${amount} always fails.`,
  SIMULATED_FAILURE: () => 'Simulated payment failure.',
};

export type PaymentOutcome =
  | { outcome: 'paid'; intent: IntentRow; commission: Commission }
  | { outcome: 'failed'; intent: IntentRow; failure: PaymentFailure; reason: string };

/**
 * The one confirm-payment operation every channel (hosted checkout, pay-by-code, sandbox
 * simulate) ends in, inside the caller's transaction with the intent row and the payer locked:
 * the ledger moves amount + payer fee from the wallet to the merchant, the platform revenue and
 * the tax accounts, the intent becomes PAID with its commission, its code is freed, and
 * `payment.confirmed` is written. Too little balance (or the reserved sandbox amount) makes the
 * attempt fail instead: FAILED and `payment.failed`. One statement either way: paid, it writes the
 * ledger transfer, the change and its event together.
 */
export async function confirmPayment(
  trx: Transaction<DB>,
  intent: LockedIntent,
  payment: { amount: number; payer: Payer; method: 'WALLET'; now: Date },
): Promise<PaymentOutcome> {
  const { now, payer } = payment;
  const status = assertAllowed(intent, 'pay', now);
  if (isSandboxFailure(intent, payment.amount)) {
    return failPayment(trx, intent, { failure: 'SANDBOX_DECLINED', attemptedAmount: payment.amount, now });
  }
  const plan = feePlanOf(intent);
  const charge = walletCharge({
    environment: intent.environment,
    businessId: intent.business_id,
    reference: intent.reference_number,
    payer,
    amount: payment.amount,
    commission: paymentCommission(payment.amount, plan),
    balance: {
      type: 'payment',
      source: { reference: intent.reference_number, kind: 'payment_intent' },
      description: intent.label
        ? `Payment ${intent.reference_number}: ${intent.label}`
        : `Payment ${intent.reference_number}`,
    },
    now,
  });
  if (charge === 'INSUFFICIENT_BALANCE') {
    return failPayment(trx, intent, { failure: 'INSUFFICIENT_BALANCE', attemptedAmount: payment.amount, now });
  }
  const { commission } = charge;
  const paid = {
    status,
    payment_code: null,
    amount_paid: payment.amount,
    paid_at: now,
    payment_method: payment.method,
    payer_phone: payer.wallet.phone,
    payer_wallet_id: payer.wallet.id,
    payer_fee: commission.payer_ttc,
    provider_ttc: commission.provider_ttc,
    payer_ttc: commission.payer_ttc,
    tof: commission.tof,
    tte: commission.tte,
    tof_bps: plan.tofBps,
    tte_bps: plan.tteBps,
    last_failure: null,
    updated_at: now,
  };
  const updated = await changeIntent(
    trx,
    intent,
    paid,
    (changed) => [paymentEvent('payment.confirmed', changed, now, { commission })],
    charge.transfer,
  );
  return { outcome: 'paid', intent: updated, commission };
}

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

/** An intent's fee state: what its payment credited and what its refunds took back. */
export function intentFees(intent: IntentRow): FeeState {
  return {
    charged: intent.amount_paid ?? 0,
    providerTtc: intent.provider_ttc,
    payerTtc: intent.payer_ttc,
    tof: intent.tof,
    tte: intent.tte,
    returned: intent.total_amount_refunded,
    providerReturned: intent.provider_returned,
    tofReturned: intent.tof_returned,
    tteReturned: intent.tte_returned,
  };
}

/**
 * A refund of a paid intent, partial or full, back to the wallet that paid, with the intent
 * locked by the caller: the money (`walletRefund`), the refund's record, the intent's totals and
 * `payment.refunded` in one statement.
 */
export async function refundPayment(
  trx: Transaction<DB>,
  intent: IntentRow,
  input: { amount?: number | undefined; reason?: string | undefined },
): Promise<IntentWithRefunds> {
  const now = new Date();
  const status = assertAllowed(intent, 'refund', now);
  const left = refundableLeft(intent);
  const amount = input.amount ?? left;
  if (amount < 1 || amount > left) {
    throw new ApiError('REFUND_AMOUNT_INVALID', `The refund amount must be between 1 and ${left} centimes.`);
  }
  const fees = intentFees(intent);
  const commission = refundCommission(fees, amount, amount === left);
  const refundId = `RF-${randomDigits(16)}`;
  // Written by the statement that records the refund (none for a payment that moved no wallet money).
  const money = intent.payer_wallet_id
    ? await walletRefund(trx, {
        environment: intent.environment,
        businessId: intent.business_id,
        walletId: intent.payer_wallet_id,
        reference: refundId,
        amount,
        commission,
        balance: {
          type: 'refund',
          source: { reference: intent.reference_number, kind: 'payment_intent' },
          description: `Refund ${refundId} of ${intent.reference_number}`,
        },
        now,
      })
    : undefined;
  const totalAmountRefunded = intent.total_amount_refunded + amount;
  return recordRefund(
    trx,
    { id: intent.id, status, totalAmountRefunded },
    {
      id: refundId,
      amount,
      reason: input.reason ?? null,
      providerTtc: commission.provider_ttc,
      tof: commission.tof,
      tte: commission.tte,
      createdAt: now,
      ledgerTransactionId: money?.transactionId ?? null,
    },
    [
      paymentEvent('payment.refunded', { ...intent, status, total_amount_refunded: totalAmountRefunded }, now, {
        commission,
        refund: { id: refundId, amount },
      }),
    ],
    money,
  );
}

/** What can still go back to the payer: what was paid less what was refunded. */
export function refundableLeft(intent: IntentRow): number {
  return (intent.amount_paid ?? 0) - intent.total_amount_refunded;
}

/** A payment attempt that ended in an unrecoverable error: FAILED, still payable until expiry. */
export async function failPayment(
  trx: Transaction<DB>,
  intent: IntentRow,
  attempt: { failure: PaymentFailure; attemptedAmount: number; now: Date },
): Promise<PaymentOutcome & { outcome: 'failed' }> {
  const reason = FAILURE_TEXT[attempt.failure](attempt.attemptedAmount);
  const failed = {
    status: assertAllowed(intent, 'fail', attempt.now),
    last_failure: attempt.failure,
    updated_at: attempt.now,
  };
  const updated = await changeIntent(trx, intent, failed, (changed) => [
    paymentEvent('payment.failed', changed, attempt.now, { attemptedAmount: attempt.attemptedAmount }),
  ]);
  return { outcome: 'failed', intent: updated, failure: attempt.failure, reason };
}
