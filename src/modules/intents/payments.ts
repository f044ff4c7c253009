import { sql, type RawBuilder, type Transaction } from 'kysely';
import { unitOfWork, type UnitOfWork } from '../events/unit-of-work.js';
import type { DB, PaymentFailure } from '../../db/schema.js';
import type { Executor } from '../../db/transaction.js';
import { feePlanFromColumns, paymentCommission, type Commission, type FeePlan } from '../payments/fees.js';
import {
  failureMessage,
  walletPin,
  walletRequest,
  type ImmediateAuthorization,
  type PaymentAttempt,
  type PaymentMethod,
} from '../payments/methods.js';
import type { Payer } from '../payments/payers.js';
import { settlementRecord } from '../payments/settlement.js';
import type { WalletCharge } from '../payments/wallet-payments.js';
import { INTENT_FAILURES, type PaymentFailureCode, type PaymentMethodName } from '../payments/state.js';
import {
  insertPayment,
  lockProcessingPayment,
  newPaymentId,
  paymentEnd,
  paymentInsert,
  type NewPayment,
} from '../payments/store.js';
import { sandboxMethod } from '../sandbox/method.js';
import { SANDBOX_FAILING_AMOUNT } from '../sandbox/sandbox.js';
import { lockIntentAndPayer } from './payer-lock.js';
import { changeIntent } from './changes.js';
import { paymentEvent } from './events.js';
import { lockIntent, type IntentRow, type LockedIntent } from './repo.js';
import { pendingRequestsOf, withdrawRequests } from './request-ends.js';
import { sharesOf } from './splits.js';
import { assertAllowed, intentMachine, isAllowed } from './state.js';

/**
 * An intent's payments: every attempt to pay it is a payment row (payments/store.ts) written in
 * the statement that makes its change. The intent owns its lifecycle and asks the attempt's
 * method (payments/methods.ts) whether the money moves.
 */

function failsTheIntent(failure: PaymentFailureCode): failure is PaymentFailure {
  return (INTENT_FAILURES as readonly string[]).includes(failure);
}

/** The methods by name: how a payment made with one is refunded, or approved once it waited. */
export const METHODS: Record<PaymentMethodName, PaymentMethod> = {
  WALLET_PIN: walletPin,
  SANDBOX: sandboxMethod(),
  WALLET_REQUEST: walletRequest,
};

export type PaymentOutcome = { paymentId: string; intent: IntentRow } & (
  | { outcome: 'paid'; commission: Commission }
  | { outcome: 'failed'; failure: PaymentFailureCode; reason: string }
  | { outcome: 'pending' }
);

/** An attempt described as its payment row says it. */
interface DescribedAttempt {
  method: PaymentMethodName;
  amount: number;
  phone: string;
  now: Date;
}

/** What an attempt came to, as its payment row records it. */
type AttemptOutcome =
  | { status: 'SUCCEEDED'; payer: Payer; charge: WalletCharge }
  | { status: 'FAILED'; failure: PaymentFailureCode }
  | { status: 'PROCESSING' };

/**
 * Where an attempt's outcome is written: a new payment row, or the end of one that waited. Either
 * way a statement of the unit of work that changes the intent, so the row, the money and the
 * event go together.
 */
interface AttemptRow {
  id: string;
  written(outcome: AttemptOutcome): RawBuilder<unknown>;
}

function newAttemptRow(intent: IntentRow, attempt: DescribedAttempt): AttemptRow {
  const id = newPaymentId();
  return { id, written: (outcome) => paymentInsert(intentPayment(id, intent, attempt, outcome)) };
}

function intentPayment(id: string, intent: IntentRow, attempt: DescribedAttempt, outcome: AttemptOutcome): NewPayment {
  const attempted = {
    id,
    businessId: intent.business_id,
    environment: intent.environment,
    subject: { intentId: intent.id },
    method: attempt.method,
    amount: attempt.amount,
    createdAt: attempt.now,
  };
  if (outcome.status === 'SUCCEEDED') {
    const { payer, charge } = outcome;
    return {
      ...attempted,
      status: 'SUCCEEDED',
      payerPhone: payer.wallet.phone,
      payerWalletId: payer.wallet.id,
      commission: charge.commission,
      settlement: settlementRecord(charge.settlement),
      failure: null,
      ledgerTransactionId: charge.transfer.transactionId,
    };
  }
  return {
    ...attempted,
    status: outcome.status,
    payerPhone: attempt.phone,
    payerWalletId: null,
    commission: null,
    settlement: [],
    failure:
      outcome.status === 'FAILED'
        ? { code: outcome.failure, message: failureMessage(outcome.failure, attempt.amount) }
        : null,
    ledgerTransactionId: null,
  };
}

function waitingAttemptRow(id: string, attempt: DescribedAttempt): AttemptRow {
  return {
    id,
    written: (outcome) => {
      switch (outcome.status) {
        case 'SUCCEEDED':
          return paymentEnd(id, {
            status: 'SUCCEEDED',
            payerWalletId: outcome.payer.wallet.id,
            commission: outcome.charge.commission,
            settlement: settlementRecord(outcome.charge.settlement),
            ledgerTransactionId: outcome.charge.transfer.transactionId,
            at: attempt.now,
          });
        case 'FAILED':
          return paymentEnd(id, {
            status: 'FAILED',
            failure: { code: outcome.failure, message: failureMessage(outcome.failure, attempt.amount) },
            at: attempt.now,
          });
        case 'PROCESSING':
          throw new Error(`payment ${id} waited already`);
        default: {
          const never: never = outcome;
          throw new Error(`unknown outcome ${JSON.stringify(never)}`);
        }
      }
    },
  };
}

/** The attempt as the method sees it: the intent's fee plan applied, its balance entry worded. */
function methodAttempt(intent: LockedIntent, attempt: DescribedAttempt, payer: Payer | undefined): PaymentAttempt {
  const commission = paymentCommission(attempt.amount, feePlanOf(intent));
  return {
    environment: intent.environment,
    businessId: intent.business_id,
    reference: intent.reference_number,
    amount: attempt.amount,
    commission,
    // A split's sellers are more lines of the same posting (decision 080).
    split: sharesOf(intent, attempt.amount, commission.provider_ttc),
    balance: {
      type: 'payment',
      source: { reference: intent.reference_number, kind: 'payment_intent' },
      detail: intent.label ? { label: intent.label } : {},
    },
    phone: attempt.phone,
    payer,
    declinedInSandbox: intent.environment === 'test' && attempt.amount === SANDBOX_FAILING_AMOUNT,
    now: attempt.now,
  };
}

/**
 * The one pay operation every channel (hosted checkout, pay-by-code, sandbox simulate) ends in,
 * inside the caller's transaction with the intent row (and the payer, if it has a wallet) locked.
 * The state machine refuses an intent that cannot be paid before anything is written. Then the
 * method answers:
 * - paid: the ledger moves amount + payer fee from the wallet to the settlement plan's accounts,
 *   the intent becomes PAID with its commission, its code is freed, `payment.confirmed` is written
 *   and the payment is SUCCEEDED, in one statement;
 * - failed: too little balance, the reserved sandbox amount or a simulated failure fail the intent
 *   too (FAILED, `payment.failed`, still payable until it expires); any other failure is the
 *   payment's alone;
 * - waiting for the payer: a PROCESSING payment that holds nothing (`endWaitingPayment` ends it).
 */
export async function attemptPayment(
  trx: Transaction<DB>,
  intent: LockedIntent,
  attempt: { amount: number; phone: string; payer: Payer | undefined; method: PaymentMethod; now: Date },
): Promise<PaymentOutcome> {
  assertAllowed(intent, 'pay', attempt.now);
  const described = { method: attempt.method.name, amount: attempt.amount, phone: attempt.phone, now: attempt.now };
  const row = newAttemptRow(intent, described);
  const authorization = await attempt.method.authorize(trx, methodAttempt(intent, described, attempt.payer));
  if (authorization.status === 'PROCESSING') {
    await writeAlone(trx, row, authorization);
    return { outcome: 'pending', paymentId: row.id, intent };
  }
  return settleAttempt(trx, intent, row, described, authorization);
}

/** A paid or failed attempt, written with the intent's change it causes. */
async function settleAttempt(
  trx: Transaction<DB>,
  intent: LockedIntent,
  row: AttemptRow,
  described: DescribedAttempt,
  authorization: ImmediateAuthorization,
): Promise<PaymentOutcome> {
  if (authorization.status === 'FAILED') return failAttempt(trx, intent, row, described, authorization.failure);
  const { payer, charge } = authorization;
  const updated = await payIntent(
    trx,
    intent,
    { paymentId: row.id, amount: described.amount, payer, commission: charge.commission, now: described.now },
    unitOfWork().money(charge.transfer).write(row.written(authorization)),
  );
  return { outcome: 'paid', paymentId: row.id, intent: updated, commission: charge.commission };
}

/** A payment's row written on its own: an outcome that does not change the intent. */
async function writeAlone(trx: Transaction<DB>, row: AttemptRow, outcome: AttemptOutcome): Promise<void> {
  await unitOfWork().write(row.written(outcome)).run(trx);
}

/**
 * The intent's side of a payment that succeeded: PAID with its commission, `payment.confirmed`,
 * and its pending request, if another payment paid it, withdrawn (`CANCELLED`).
 */
async function payIntent(
  trx: Transaction<DB>,
  intent: LockedIntent,
  paid: { paymentId: string; amount: number; payer: Payer; commission: Commission; now: Date },
  unit: UnitOfWork,
): Promise<IntentRow> {
  const { commission, now } = paid;
  withdrawRequests(unit, await pendingRequestsOf(trx, [intent.id], paid.paymentId), 'CANCELLED', now);
  const plan = feePlanOf(intent);
  // The shares the charge posted: the same function of the same amount and fee (methodAttempt).
  const splits = sharesOf(intent, paid.amount, commission.provider_ttc);
  const change = {
    status: assertAllowed(intent, 'pay', now),
    payment_code: null,
    amount_paid: paid.amount,
    paid_at: now,
    payment_method: 'WALLET',
    payer_phone: paid.payer.wallet.phone,
    payer_wallet_id: paid.payer.wallet.id,
    payer_fee: commission.payer_ttc,
    provider_ttc: commission.provider_ttc,
    payer_ttc: commission.payer_ttc,
    tof: commission.tof,
    tte: commission.tte,
    tof_bps: plan.tofBps,
    tte_bps: plan.tteBps,
    last_failure: null,
    ...(splits ? { split_shares: splits } : {}),
    updated_at: now,
  };
  return changeIntent(
    trx,
    intent,
    change,
    (changed) => [paymentEvent('payment.confirmed', changed, now, { commission, splits })],
    unit,
  );
}

/**
 * A failed attempt: its payment FAILED, and the intent FAILED with `payment.failed` when the
 * failure is one that fails the intent, in one statement; otherwise the payment alone.
 */
async function failAttempt(
  trx: Transaction<DB>,
  intent: IntentRow,
  row: AttemptRow,
  attempt: DescribedAttempt,
  failure: PaymentFailureCode,
): Promise<PaymentOutcome> {
  const reason = failureMessage(failure, attempt.amount);
  const outcome = { status: 'FAILED', failure } as const;
  if (!failsTheIntent(failure)) {
    await writeAlone(trx, row, outcome);
    return { outcome: 'failed', paymentId: row.id, intent, failure, reason };
  }
  const change = {
    status: assertAllowed(intent, 'fail', attempt.now),
    last_failure: failure,
    updated_at: attempt.now,
  };
  const updated = await changeIntent(
    trx,
    intent,
    change,
    (changed) => [paymentEvent('payment.failed', changed, attempt.now, { attemptedAmount: attempt.amount })],
    unitOfWork().write(row.written(outcome)),
  );
  return { outcome: 'failed', paymentId: row.id, intent: updated, failure, reason };
}

/** How a payer who was asked answered: yes, no, or nothing before the timeout. */
export type WaitingAnswer = 'APPROVED' | 'DECLINED' | 'TIMED_OUT';

/** How a waiting payment ended: paid, or failed and why (a `CANCELLED` one was withdrawn by the merchant). */
export type WaitingEnd = { intent: IntentRow } & ({ paid: true } | { paid: false; failure: PaymentFailureCode });

/**
 * Ends a PROCESSING payment of an intent by a later transaction: the payer approved (its method's
 * `approve`: paid as any attempt is, if the intent can still be paid and the wallet still holds
 * enough), declined, or never answered. The intent is locked first, then the payer's wallet, then
 * the payment, as an attempt locks them; a payment another transaction ended meanwhile is left
 * alone (false). A payment that held nothing can end however the intent has moved since: a yes to
 * an intent paid, cancelled or expired since is FAILED `NOT_PAYABLE`, and nothing moves. A
 * merchant's withdrawal of the question (`CANCELLED`) ends it as FAILED `CANCELLED`. Undefined:
 * the payment had ended already.
 */
export async function endWaitingPayment(
  trx: Transaction<DB>,
  waiting: { id: string; intentId: number; phone: string },
  answer: WaitingAnswer | 'CANCELLED',
  now: Date,
): Promise<WaitingEnd | undefined> {
  const locked =
    answer === 'APPROVED'
      ? await lockIntentAndPayer(trx, { id: waiting.intentId }, { phone: waiting.phone })
      : { intent: await lockIntent(trx, { id: waiting.intentId }), payer: undefined };
  const payment = await lockProcessingPayment(trx, waiting.id);
  if (!locked?.intent || !payment) return undefined;
  const { intent } = locked;
  const described = { method: payment.method, amount: payment.amount, phone: waiting.phone, now };
  const row = waitingAttemptRow(payment.id, described);
  const approve = METHODS[payment.method].approve;
  if (answer !== 'APPROVED' || !approve || !isAllowed(intent, 'pay', now)) {
    const failure = answer !== 'APPROVED' ? answer : 'NOT_PAYABLE';
    await writeAlone(trx, row, { status: 'FAILED', failure });
    return { paid: false, failure, intent };
  }
  const ended = await settleAttempt(
    trx,
    intent,
    row,
    described,
    await approve(trx, methodAttempt(intent, described, locked.payer)),
  );
  if (ended.outcome === 'paid') return { paid: true, intent: ended.intent };
  if (ended.outcome === 'failed') return { paid: false, failure: ended.failure, intent: ended.intent };
  throw new Error(`payment ${payment.id} waited again`);
}

/**
 * An attempt refused before the intent was locked (a wrong PIN, a locked wallet, checked outside
 * the transaction because the hash is slow): a FAILED payment of its own, kept only while the
 * intent could still be paid (the state machine's `pay`, and the expiry its guard reads, in SQL).
 */
export async function recordRefusedAttempt(
  db: Executor,
  intent: IntentRow,
  attempt: { method: PaymentMethodName; amount: number; phone: string; failure: PaymentFailureCode },
): Promise<void> {
  const now = new Date();
  const payment = intentPayment(
    newPaymentId(),
    intent,
    { ...attempt, now },
    { status: 'FAILED', failure: attempt.failure },
  );
  await insertPayment(
    db,
    payment,
    sql<boolean>`EXISTS (SELECT 1 FROM payment_intents WHERE id = ${intent.id}
      AND ${intentMachine.sqlFilter('pay')} AND expires_at > ${now})`,
  );
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
