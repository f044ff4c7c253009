import { sql, type RawBuilder, type Selectable } from 'kysely';
import type { Environment, PaymentFailure, WalletsTable } from '../../db/schema.js';
import type { Executor } from '../../db/transaction.js';
import { ApiError } from '../../http/errors.js';
import { changeWithEvents, type EventRecord } from '../events/outbox.js';
import { balanceIn, lockAccounts, transfer, type LedgerTransfer } from '../ledger/ledger.js';
import { paymentCommission, type Commission, type FeePlan } from './commission.js';
import { paymentEvent } from './events.js';
import type { IntentRow, LockedIntent } from './repo.js';
import { assertTransition, canTransition, intentActions } from './state.js';

/** decisions.md: in the sandbox, an intent of exactly this many centimes always fails when paid. */
export const SANDBOX_FAILING_AMOUNT = 1313;

/** The sandbox payer used when a simulation names none (the rich test wallet of the README). */
export const SANDBOX_DEFAULT_PAYER = '+22220000001';

/** The fee plan read with the locked intent; the defaults of decisions.md cover a missing plan. */
export function feePlanOf(intent: LockedIntent): FeePlan {
  return feePlanFromColumns({
    provider_bps: intent.plan_provider_bps,
    payer_fee: intent.plan_payer_fee,
    tof_bps: intent.plan_tof_bps,
    tte_bps: intent.plan_tte_bps,
  });
}

/** A business's fee plan from its `fee_plans` columns (read with something else), or the defaults. */
export function feePlanFromColumns(
  row:
    | { provider_bps: number | null; payer_fee: number | null; tof_bps: number | null; tte_bps: number | null }
    | undefined,
): FeePlan {
  return {
    providerBps: row?.provider_bps ?? 100,
    payerFee: row?.payer_fee ?? 0,
    tofBps: row?.tof_bps ?? 500,
    tteBps: row?.tte_bps ?? 0,
  };
}

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

/** A payer's wallet with its account row, both locked (`lockPayer`, `lockIntentAndPayer`). */
export interface Payer {
  wallet: Selectable<WalletsTable>;
  /** What the wallet held when it was locked (a charge built since does not lower it). */
  available: number;
}

/**
 * A payer's wallet row with its account's balance, locked (the FROM item of both locks below).
 * The account is found by its primary key from a subquery on the owner: as a plain join, the
 * generic plan of the prepared statement read every wallet account of the environment with the
 * owner as a filter (1,115 rows read at 3,000 wallets without statistics).
 */
const LOCKED_PAYER = (environment: RawBuilder<unknown>, phone: string, condition = sql`true`) => sql`
  SELECT w.*, a.balance AS available
  FROM wallets w
  JOIN ledger_accounts a ON a.id = (
    SELECT id FROM ledger_accounts WHERE environment = w.environment AND kind = 'wallet' AND owner_id = w.id)
  WHERE w.environment = ${environment} AND w.phone = ${phone} AND ${condition}
  FOR NO KEY UPDATE OF w, a`;

/**
 * The payer's wallet and its ledger account, locked in one statement: the PIN counters and the
 * balance are then read and changed by one transaction at a time.
 */
export async function lockPayer(trx: Executor, environment: Environment, phone: string): Promise<Payer | undefined> {
  const result = await sql<Selectable<WalletsTable> & { available: number }>`${LOCKED_PAYER(
    sql`${environment}`,
    phone,
  )}`.execute(trx);
  const row = result.rows[0];
  if (!row) return undefined;
  const { available, ...wallet } = row;
  return { wallet, available: Number(available) };
}

type IntentAndPayerRow = LockedIntent & {
  [Column in keyof Selectable<WalletsTable> as `wallet_${Column}`]: Selectable<WalletsTable>[Column] | null;
} & { wallet_available: number | null };

/**
 * What `lockPayer` after `repo.lockIntent` does, in one statement and in that lock order: the
 * intent found by `where` is locked by its subquery before the lateral subquery that depends on
 * it locks the payer's wallet in the intent's environment (only when the intent is `owner`'s, if
 * given). `payer` is undefined when the phone has no wallet there.
 */
export async function lockIntentAndPayer(
  trx: Executor,
  where: { referenceNumber: string } | { id: number },
  payer: { phone: string; owner?: { businessId: string; environment: Environment } },
): Promise<{ intent: LockedIntent; payer: Payer | undefined } | undefined> {
  const found = 'referenceNumber' in where ? sql`reference_number = ${where.referenceNumber}` : sql`id = ${where.id}`;
  const result = await sql<IntentAndPayerRow>`
    SELECT i.*, f.provider_bps AS plan_provider_bps, f.payer_fee AS plan_payer_fee, f.tof_bps AS plan_tof_bps,
      f.tte_bps AS plan_tte_bps, p.id AS wallet_id, p.environment AS wallet_environment, p.phone AS wallet_phone,
      p.pin_hash AS wallet_pin_hash, p.status AS wallet_status, p.failed_pin_attempts AS wallet_failed_pin_attempts,
      p.locked_until AS wallet_locked_until, p.created_at AS wallet_created_at, p.available AS wallet_available
    FROM (SELECT * FROM payment_intents WHERE ${found} FOR UPDATE) i
    LEFT JOIN fee_plans f ON f.business_id = i.business_id
    LEFT JOIN LATERAL (${LOCKED_PAYER(
      sql`i.environment`,
      payer.phone,
      payer.owner === undefined
        ? sql`true`
        : sql`i.business_id = ${payer.owner.businessId} AND i.environment = ${payer.owner.environment}`,
    )}) p ON true`.execute(trx);
  const row = result.rows[0];
  if (!row) return undefined;
  const {
    wallet_id: id,
    wallet_environment: environment,
    wallet_phone: phone,
    wallet_pin_hash: pinHash,
    wallet_status: status,
    wallet_failed_pin_attempts: failedPinAttempts,
    wallet_locked_until: lockedUntil,
    wallet_created_at: createdAt,
    wallet_available: available,
    ...intent
  } = row;
  return {
    intent,
    payer:
      id === null || environment === null || phone === null || pinHash === null || status === null
        ? undefined
        : {
            wallet: {
              id,
              environment,
              phone,
              pin_hash: pinHash,
              status,
              failed_pin_attempts: Number(failedPinAttempts),
              locked_until: lockedUntil,
              created_at: createdAt!,
            },
            available: Number(available),
          },
  };
}

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
  trx: Executor,
  intent: LockedIntent,
  payment: { amount: number; payer: Payer; method: 'WALLET'; now: Date },
): Promise<PaymentOutcome> {
  const { now, payer } = payment;
  assertTransition(intent.status, 'pay');
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
    plan,
    now,
  });
  if (charge === 'INSUFFICIENT_BALANCE') {
    return failPayment(trx, intent, { failure: 'INSUFFICIENT_BALANCE', attemptedAmount: payment.amount, now });
  }
  const { commission } = charge;
  const paid = {
    status: assertTransition(intent.status, 'pay'),
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
  plan: FeePlan;
  now: Date;
}): { commission: Commission; transfer: LedgerTransfer } | 'INSUFFICIENT_BALANCE' {
  const commission = paymentCommission(charge.amount, charge.plan);
  const debit = charge.amount + commission.payer_ttc;
  if (charge.payer.available < debit) return 'INSUFFICIENT_BALANCE';
  return {
    commission,
    transfer: transfer({
      environment: charge.environment,
      kind: 'payment',
      reference: charge.reference,
      at: charge.now,
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
 * the merchant (less the provider fee returned) and from the platform's share of the fees, to the
 * payer's wallet. The merchant's account is locked first, so that refunds of one merchant never
 * overdraw it together; too little in it is 402 INSUFFICIENT_BALANCE and nothing moves. Lock
 * order everywhere: the merchant's account, then the wallet's, then any product.
 */
export async function walletRefund(
  trx: Executor,
  refund: {
    environment: Environment;
    businessId: string;
    walletId: string;
    reference: string;
    amount: number;
    commission: Commission;
    now: Date;
  },
): Promise<LedgerTransfer> {
  const merchant = { kind: 'merchant', ownerId: refund.businessId } as const;
  const fromMerchant = refund.amount - refund.commission.provider_ttc;
  const locked = await lockAccounts(trx, refund.environment, [merchant]);
  if (balanceIn(locked, merchant) < fromMerchant) {
    throw new ApiError(
      'INSUFFICIENT_BALANCE',
      `The merchant balance cannot cover this refund (${fromMerchant} centimes needed).`,
    );
  }
  return transfer({
    environment: refund.environment,
    kind: 'refund',
    reference: refund.reference,
    at: refund.now,
    lines: [
      { account: merchant, amount: -fromMerchant },
      { account: { kind: 'wallet', ownerId: refund.walletId }, amount: refund.amount },
      { account: { kind: 'revenue' }, amount: -refund.commission.total_revenue },
      { account: { kind: 'tof' }, amount: -refund.commission.tof },
      { account: { kind: 'tte' }, amount: -refund.commission.tte },
    ],
  });
}

/** A payment attempt that ended in an unrecoverable error: FAILED, still payable until expiry. */
export async function failPayment(
  trx: Executor,
  intent: IntentRow,
  attempt: { failure: PaymentFailure; attemptedAmount: number; now: Date },
): Promise<PaymentOutcome & { outcome: 'failed' }> {
  const reason = FAILURE_TEXT[attempt.failure](attempt.attemptedAmount);
  const failed = {
    status: assertTransition(intent.status, 'fail'),
    last_failure: attempt.failure,
    updated_at: attempt.now,
  };
  const updated = await changeIntent(trx, intent, failed, (changed) => [
    paymentEvent('payment.failed', changed, attempt.now, { attemptedAmount: attempt.attemptedAmount }),
  ]);
  return { outcome: 'failed', intent: updated, failure: attempt.failure, reason };
}

/**
 * Expiry, by the timer or by `simulate-expiry`, of intents locked by the caller: CANCELLED with
 * its reason stored, code freed, `payment.expired`.
 */
export async function expireIntents(trx: Executor, intents: IntentRow[], now: Date): Promise<IntentRow[]> {
  const due = intents.filter((intent) => canTransition(intent.status, 'expire'));
  if (due.length === 0) return [];
  const change = {
    status: intentActions.expire.to,
    cancel_reason: 'expiry',
    payment_code: null,
    updated_at: now,
  } as const;
  const expired = await changeWithEvents(
    trx,
    trx
      .updateTable('payment_intents')
      .set(change)
      .where(
        'id',
        'in',
        due.map((intent) => intent.id),
      )
      .returningAll(),
    due.map((intent) => paymentEvent('payment.expired', { ...intent, ...change }, now)),
  );
  // The events were built for every due intent: the caller's locks make each of them change.
  if (expired.length !== due.length) throw new Error(`${due.length - expired.length} due intents were not expired`);
  return expired;
}

/**
 * One intent's change and its events, in one statement, with the ledger transfer that pays it if
 * any. The caller holds the intent's row locked, so the row the change leaves is the one read plus
 * the change: the events are built from it, and it is the answer (no row to read back). A change
 * of anything a trigger or default would rewrite does not belong here.
 */
export async function changeIntent(
  trx: Executor,
  intent: IntentRow,
  // Columns whose written value is the value read back (metadata is written as JSON text).
  change: Partial<Omit<IntentRow, 'id' | 'metadata'>>,
  events: (changed: IntentRow) => EventRecord[],
  money?: LedgerTransfer,
): Promise<IntentRow> {
  const changed: IntentRow = { ...intent, ...change };
  const rows = await changeWithEvents(
    trx,
    trx.updateTable('payment_intents').set(change).where('id', '=', intent.id).returning('id'),
    events(changed),
    money?.ctes,
  );
  if (rows.length !== 1) throw new Error(`intent ${intent.id} was not changed`);
  return changed;
}

/** Whether a payable intent's time is up (the expiry job may not have run yet). */
export function isPastExpiry(intent: IntentRow, now: Date): boolean {
  return intent.expires_at.getTime() <= now.getTime();
}
