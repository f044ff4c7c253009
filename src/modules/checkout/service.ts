import type { Kysely, Transaction } from 'kysely';
import type { AmountType, DB, Environment, IntentStatus } from '../../db/schema.js';
import { ApiError } from '../../http/errors.js';
import { CommittedRefusal } from '../../http/idempotency/plugin.js';
import { maskPhone } from '../../lib/phone.js';
import { attemptPayment, recordRefusedAttempt } from '../intents/payments.js';
import { authenticateWallet, type WalletRow } from '../wallets/service.js';
import { walletPin } from '../payments/methods.js';
import { lockIntentAndPayer } from '../intents/payer-lock.js';
import type { IntentRow } from '../intents/repo.js';
import { isAllowed } from '../intents/state.js';
import { checkPaymentAmount } from '../payments/amount.js';
import { SANDBOX_WALLETS } from '../sandbox/sandbox.js';

/** What the hosted page shows of an intent's status: payable until it expires, whatever failed before. */
export type CheckoutState = 'PAYABLE' | Exclude<IntentStatus, 'PENDING' | 'FAILED'> | 'EXPIRED';

/** What a customer sees of an intent: what to pay, to whom, and its state; nothing else. */
export interface CheckoutView {
  shortCode: string;
  merchantName: string;
  label: string;
  amountType: AmountType;
  amount: number | null;
  suggestedAmount: number | null;
  payerFee: number;
  currency: 'MRU';
  state: CheckoutState;
  sandbox: boolean;
  expiresAt: string;
  successUrl: string | null;
  cancelUrl: string | null;
  /** The payment as it was made: the amount, the payer fee charged on top, when, from which wallet (masked). */
  receipt: { reference: string; amountPaid: number; payerFee: number; paidAt: string; payerPhone: string } | null;
  /** Centimes refunded so far (0 when none): a REFUNDED state may be a part of the payment. */
  amountRefunded: number;
  testWallets: { phone: string; pin: string; note: string; balance: number; locked: boolean }[];
}

/** Who a customer pays: the merchant's name and the payer fee on top of the amount. */
interface Payee {
  name: string;
  payerFee: number;
}

/** An intent with its payee, in one statement. */
async function intentBy(
  db: Kysely<DB>,
  where: { shortCode: string } | { code: number; environment: Environment },
): Promise<{ intent: IntentRow; payee: Payee }> {
  let query = db
    .selectFrom('payment_intents as i')
    .innerJoin('businesses as b', 'b.id', 'i.business_id')
    .leftJoin('fee_plans as f', 'f.business_id', 'i.business_id')
    .selectAll('i')
    .select(['b.name as payee_name', 'f.payer_fee as payee_payer_fee']);
  query =
    'shortCode' in where
      ? query.where('i.short_code', '=', where.shortCode)
      : query.where('i.payment_code', '=', where.code).where('i.environment', '=', where.environment);
  const row = await query.executeTakeFirst();
  if (!row) throw new ApiError('INTENT_NOT_FOUND', 'No payment with this link or code.');
  const { payee_name: name, payee_payer_fee: payerFee, ...intent } = row;
  return { intent, payee: { name, payerFee: payerFee ?? 0 } };
}

export function checkoutView(intent: IntentRow, payee: Payee): CheckoutView {
  const now = new Date();
  const state: CheckoutView['state'] =
    intent.status === 'PAID'
      ? 'PAID'
      : intent.status === 'REFUNDED'
        ? 'REFUNDED'
        : isAllowed(intent, 'pay', now)
          ? 'PAYABLE'
          : // Still able to expire: payable but for its time, which is up.
            isAllowed(intent, 'expire', now) || intent.cancel_reason === 'expiry'
            ? 'EXPIRED'
            : 'CANCELLED';
  const sandbox = intent.environment === 'test';
  return {
    shortCode: intent.short_code,
    merchantName: payee.name,
    label: intent.label,
    amountType: intent.amount_type,
    amount: intent.amount_type === 'FIXED' ? intent.amount : null,
    suggestedAmount: intent.suggested_amount,
    payerFee: payee.payerFee,
    currency: 'MRU',
    state,
    sandbox,
    expiresAt: intent.expires_at.toISOString(),
    successUrl: intent.success_url,
    cancelUrl: intent.cancel_url,
    receipt:
      intent.paid_at && intent.amount_paid !== null
        ? {
            reference: intent.reference_number,
            amountPaid: intent.amount_paid,
            payerFee: intent.payer_fee,
            paidAt: intent.paid_at.toISOString(),
            payerPhone: maskPhone(intent.payer_phone ?? '+0'),
          }
        : null,
    amountRefunded: intent.total_amount_refunded,
    testWallets: sandbox
      ? SANDBOX_WALLETS.map(({ phone, pin, note, balance, locked }) => ({ phone, pin, note, balance, locked }))
      : [],
  };
}

export async function viewByShortCode(db: Kysely<DB>, shortCode: string) {
  const { intent, payee } = await intentBy(db, { shortCode });
  return checkoutView(intent, payee);
}

/** Pay-by-code looks up the 6-digit code among payable intents of one environment. */
export async function viewByCode(db: Kysely<DB>, code: string, environment: Environment) {
  const { intent, payee } = await intentBy(db, { code: Number(code), environment });
  return checkoutView(intent, payee);
}

export interface PayableIntent {
  intent: IntentRow;
  payee: Payee;
  amount: number;
}

/**
 * The intent a customer is about to pay, and how much. Its state is checked under its lock in
 * `payIntent`; a request without an idempotency key is also checked here, before the PIN, so that
 * paying what can no longer be paid costs it no PIN attempt. A keyed request (the hosted page
 * sends a key per attempt) may repeat an attempt that paid, whose answer comes from the key after
 * the PIN: it is not refused here, and a wrong PIN on it counts as one.
 */
export async function payableIntent(
  db: Kysely<DB>,
  shortCode: string,
  input: { amount?: number | undefined },
  options: { maxAmount: number; keyed: boolean },
): Promise<PayableIntent> {
  const { intent, payee } = await intentBy(db, { shortCode });
  let amount: number;
  if (intent.amount_type === 'OPEN') {
    if (input.amount === undefined) {
      throw new ApiError('VALIDATION_ERROR', 'Enter the amount to pay.', [
        { field: 'body.amount', message: 'is required' },
      ]);
    }
    checkPaymentAmount(input.amount, options.maxAmount);
    amount = input.amount;
  } else {
    amount = intent.amount!;
  }
  if (!options.keyed && !isAllowed(intent, 'pay', new Date()))
    throw new ApiError('INTENT_NOT_PENDING', 'This payment can no longer be paid.');
  return { intent, payee, amount };
}

/**
 * The paying customer's wallet, by its phone and PIN, checked outside any transaction (the hash is
 * slow). A wrong PIN or a locked wallet is a FAILED payment the merchant sees among the intent's
 * attempts, then the refusal the customer gets.
 */
export async function authenticatePayer(
  db: Kysely<DB>,
  payable: PayableIntent,
  credentials: { phone: string; pin: string },
): Promise<WalletRow> {
  try {
    return await authenticateWallet(db, payable.intent.environment, credentials.phone, credentials.pin);
  } catch (error) {
    if (error instanceof ApiError && (error.code === 'INVALID_PIN' || error.code === 'WALLET_LOCKED')) {
      await recordRefusedAttempt(db, payable.intent, {
        method: 'WALLET_PIN',
        amount: payable.amount,
        phone: credentials.phone,
        failure: error.code,
      });
    }
    throw error;
  }
}

/**
 * A customer pays with their wallet, whose PIN the caller checked (outside any transaction: the
 * hash is slow), in the caller's transaction: the one confirm-payment operation under the
 * intent's row lock. Two customers paying at once: the second finds the intent PAID and is
 * refused before any money moves. A failed attempt is kept (FAILED, `payment.failed`) and
 * answered with its error.
 */
/** What a payer is told of an attempt that failed: too little in the wallet, or the method's reason. */
export function failedPaymentError(failed: { failure: string; reason: string }): ApiError {
  if (failed.failure === 'INSUFFICIENT_BALANCE') {
    return new ApiError('INSUFFICIENT_BALANCE', 'The wallet balance cannot cover this payment. Nothing was charged.');
  }
  return new ApiError('PAYMENT_FAILED', `${failed.reason} Nothing was charged.`);
}

export async function payIntent(
  trx: Transaction<DB>,
  payable: PayableIntent,
  phone: string,
): Promise<CheckoutView | CommittedRefusal> {
  const { intent, payer } = (await lockIntentAndPayer(trx, { id: payable.intent.id }, { phone })) ?? {};
  const now = new Date();
  if (!intent || !isAllowed(intent, 'pay', now))
    throw new ApiError('INTENT_NOT_PENDING', 'This payment can no longer be paid.');
  if (!payer) throw new ApiError('WALLET_NOT_FOUND');
  const result = await attemptPayment(trx, intent, {
    amount: payable.amount,
    phone: payer.wallet.phone,
    payer,
    method: walletPin,
    now,
  });
  if (result.outcome === 'failed') return new CommittedRefusal(failedPaymentError(result));
  // A wallet and its PIN answer at once: nothing waits for a payer who is here.
  if (result.outcome === 'pending') throw new Error(`payment ${result.paymentId} of a wallet and PIN is waiting`);
  // The payer fee as it was charged: the plan read under the intent's lock.
  return checkoutView(result.intent, { name: payable.payee.name, payerFee: intent.plan_payer_fee ?? 0 });
}
