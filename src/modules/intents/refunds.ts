import type { Transaction } from 'kysely';
import type { DB } from '../../db/schema.js';
import { ApiError } from '../../http/errors.js';
import { randomDigits } from '../../lib/ids.js';
import { refundCommission, type FeeState } from '../payments/fees.js';
import type { PaymentMethod } from '../payments/methods.js';
import { sellersTaken } from '../payments/split-refunds.js';
import { refundTakes } from '../payments/splits.js';
import { paymentEvent } from './events.js';
import { METHODS } from './payments.js';
import { recordRefund, type IntentRow, type IntentWithRefunds } from './repo.js';
import { assertAllowed } from './state.js';

/**
 * An intent's refunds: the money goes back to the wallet that paid, by the method that paid, and
 * the fees come back in proportion (payments/fees.ts).
 */

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
  // Each seller of a split gives back its net share in proportion, rounded up, less what it gave
  // back before, so that the business's line never goes below zero (decision 080).
  const sellers = intent.split_shares
    ? refundTakes(
        intent.split_shares,
        { after: intent.total_amount_refunded + amount, of: intent.amount_paid ?? 0 },
        await sellersTaken(trx, {
          environment: intent.environment,
          businessId: intent.business_id,
          reference: intent.reference_number,
          types: ['refund'],
        }),
        amount - commission.provider_ttc,
      )
    : undefined;
  const refundId = `RF-${randomDigits(16)}`;
  // Written by the statement that records the refund (none for a payment that moved no wallet money).
  const money = intent.payer_wallet_id
    ? await (
        await methodOfPayment(trx, intent)
      ).refund(trx, {
        environment: intent.environment,
        businessId: intent.business_id,
        walletId: intent.payer_wallet_id,
        reference: refundId,
        amount,
        commission,
        sellers,
        balance: {
          type: 'refund',
          source: { reference: intent.reference_number, kind: 'payment_intent' },
          detail: { reference: refundId },
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
        refund: {
          id: refundId,
          amount,
          // Every seller of the split, with 0 for one this refund took nothing from.
          splits: intent.split_shares?.map((share) => ({
            seller: share.seller,
            amount: sellers?.find((take) => take.seller === share.seller)?.amount ?? 0,
          })),
        },
      }),
    ],
    money,
  );
}

/** What can still go back to the payer: what was paid less what was refunded. */
export function refundableLeft(intent: IntentRow): number {
  return (intent.amount_paid ?? 0) - intent.total_amount_refunded;
}

/** The method of the payment that paid `intent` (WALLET_PIN for one paid before payments were rows). */
async function methodOfPayment(trx: Transaction<DB>, intent: IntentRow): Promise<PaymentMethod> {
  const paid = await trx
    .selectFrom('payments')
    .select('method')
    .where('intent_id', '=', intent.id)
    .where('status', '=', 'SUCCEEDED')
    .executeTakeFirst();
  return METHODS[paid?.method ?? 'WALLET_PIN'];
}
