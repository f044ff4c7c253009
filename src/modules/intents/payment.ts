import type { Transaction } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { Executor } from '../../db/transaction.js';
import { recordEvents } from '../events/outbox.js';
import { balanceIn, lockAccounts, post } from '../ledger/ledger.js';
import { paymentCommission, type Commission, type FeePlan } from './commission.js';
import { paymentEvent } from './events.js';
import type { IntentRow } from './repo.js';

/** decisions.md: in the sandbox, an intent of exactly this many centimes always fails when paid. */
export const SANDBOX_FAILING_AMOUNT = 1313;

/** The sandbox payer used when a simulation names none (the rich test wallet of the README). */
export const SANDBOX_DEFAULT_PAYER = '+22220000001';

export async function feePlanOf(trx: Executor, businessId: string): Promise<FeePlan> {
  const plan = await trx
    .selectFrom('fee_plans')
    .select(['provider_bps', 'payer_fee', 'tof_bps', 'tte_bps'])
    .where('business_id', '=', businessId)
    .executeTakeFirst();
  // A business always gets a plan when created; the defaults of decisions.md cover any gap.
  return {
    providerBps: plan?.provider_bps ?? 100,
    payerFee: plan?.payer_fee ?? 0,
    tofBps: plan?.tof_bps ?? 500,
    tteBps: plan?.tte_bps ?? 0,
  };
}

export function isSandboxFailure(intent: IntentRow, amount: number): boolean {
  return intent.environment === 'test' && amount === SANDBOX_FAILING_AMOUNT;
}

export type PaymentOutcome =
  | { outcome: 'paid'; intent: IntentRow; commission: Commission }
  | { outcome: 'failed'; intent: IntentRow; reason: string };

/**
 * The one confirm-payment operation every channel (hosted checkout, pay-by-code, sandbox
 * simulate) ends in, inside the caller's transaction with the intent row locked and payable:
 * the payer's balance is checked under lock, the ledger moves amount + payer fee from the wallet
 * to the merchant, the platform revenue and the tax accounts, the intent becomes PAID with its
 * commission, its code is freed, and `payment.confirmed` is written. Too little balance (or the
 * reserved sandbox amount) makes the attempt fail instead: FAILED and `payment.failed`.
 */
export async function confirmPayment(
  trx: Transaction<DB>,
  intent: IntentRow,
  payment: { amount: number; wallet: { id: string; phone: string }; method: 'WALLET'; now: Date },
): Promise<PaymentOutcome> {
  const { now } = payment;
  if (isSandboxFailure(intent, payment.amount)) {
    const reason = `The sandbox amount ${payment.amount} always fails.`;
    return {
      outcome: 'failed',
      reason,
      intent: await failPayment(trx, intent, { reason, attemptedAmount: payment.amount, now }),
    };
  }
  const plan = await feePlanOf(trx, intent.business_id);
  const commission = paymentCommission(payment.amount, plan);
  const payer = { kind: 'wallet', ownerId: payment.wallet.id } as const;
  const merchant = { kind: 'merchant', ownerId: intent.business_id } as const;
  const locked = await lockAccounts(trx, intent.environment, [
    payer,
    merchant,
    { kind: 'revenue' },
    { kind: 'tof' },
    { kind: 'tte' },
  ]);
  const debit = payment.amount + commission.payer_ttc;
  if (balanceIn(locked, payer) < debit) {
    const reason = 'Insufficient balance.';
    return {
      outcome: 'failed',
      reason,
      intent: await failPayment(trx, intent, { reason, attemptedAmount: payment.amount, now }),
    };
  }
  await post(trx, {
    environment: intent.environment,
    kind: 'payment',
    reference: intent.reference_number,
    at: now,
    lines: [
      { account: payer, amount: -debit },
      { account: merchant, amount: payment.amount - commission.provider_ttc },
      { account: { kind: 'revenue' }, amount: commission.total_revenue },
      { account: { kind: 'tof' }, amount: commission.tof },
      { account: { kind: 'tte' }, amount: commission.tte },
    ],
  });
  const updated = await trx
    .updateTable('payment_intents')
    .set({
      status: 'PAID',
      payment_code: null,
      amount_paid: payment.amount,
      paid_at: now,
      payment_method: payment.method,
      payer_phone: payment.wallet.phone,
      payer_fee: commission.payer_ttc,
      provider_ttc: commission.provider_ttc,
      payer_ttc: commission.payer_ttc,
      tof: commission.tof,
      tte: commission.tte,
      tof_bps: plan.tofBps,
      tte_bps: plan.tteBps,
      last_failure: null,
      updated_at: now,
    })
    .where('id', '=', intent.id)
    .where('status', 'in', ['PENDING', 'FAILED'])
    .returningAll()
    .executeTakeFirstOrThrow();
  await recordEvents(trx, [paymentEvent('payment.confirmed', updated, now, { commission })]);
  return { outcome: 'paid', intent: updated, commission };
}

/** A payment attempt that ended in an unrecoverable error: FAILED, still payable until expiry. */
export async function failPayment(
  trx: Transaction<DB>,
  intent: IntentRow,
  failure: { reason: string; attemptedAmount: number; now: Date },
): Promise<IntentRow> {
  const updated = await trx
    .updateTable('payment_intents')
    .set({ status: 'FAILED', last_failure: failure.reason, updated_at: failure.now })
    .where('id', '=', intent.id)
    .where('status', 'in', ['PENDING', 'FAILED'])
    .returningAll()
    .executeTakeFirstOrThrow();
  await recordEvents(trx, [
    paymentEvent('payment.failed', updated, failure.now, { attemptedAmount: failure.attemptedAmount }),
  ]);
  return updated;
}

/** Expiry, by the timer or by `simulate-expiry`: CANCELLED, code freed, `payment.expired`. */
export async function expireIntents(trx: Transaction<DB>, intents: IntentRow[], now: Date): Promise<IntentRow[]> {
  if (intents.length === 0) return [];
  const expired = await trx
    .updateTable('payment_intents')
    .set({ status: 'CANCELLED', payment_code: null, updated_at: now })
    .where(
      'id',
      'in',
      intents.map((intent) => intent.id),
    )
    .where('status', 'in', ['PENDING', 'FAILED'])
    .returningAll()
    .execute();
  await recordEvents(
    trx,
    expired.map((intent) => paymentEvent('payment.expired', intent, now)),
  );
  return expired;
}

/** Whether a payable intent's time is up (the expiry job may not have run yet). */
export function isPastExpiry(intent: IntentRow, now: Date): boolean {
  return intent.expires_at.getTime() <= now.getTime();
}
