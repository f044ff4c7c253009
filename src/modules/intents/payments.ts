import type { Transaction } from 'kysely';
import type { DB, PaymentFailure } from '../../db/schema.js';
import { ApiError } from '../../http/errors.js';
import { randomDigits } from '../../lib/ids.js';
import {
  feePlanFromColumns,
  paymentCommission,
  refundCommission,
  type Commission,
  type FeePlan,
  type FeeState,
} from '../payments/fees.js';
import { walletCharge, walletRefund } from '../payments/wallet-payments.js';
import type { Payer } from '../payments/payers.js';
import { SANDBOX_FAILING_AMOUNT } from '../sandbox/sandbox.js';
import { changeIntent } from './changes.js';
import { paymentEvent } from './events.js';
import { recordRefund, type IntentRow, type IntentWithRefunds, type LockedIntent } from './repo.js';
import { assertAllowed } from './state.js';

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

/**
 * The fee plan read with the locked intent; the defaults of decisions.md cover a missing plan. An
 * intent has no lines, so no margin: it pays under the commission plan whatever the model.
 */
export function feePlanOf(intent: LockedIntent): FeePlan {
  return feePlanFromColumns({
    provider_bps: intent.plan_provider_bps,
    payer_fee: intent.plan_payer_fee,
    tof_bps: intent.plan_tof_bps,
    tte_bps: intent.plan_tte_bps,
    revenue_model: null,
    margin_bps: null,
  });
}
