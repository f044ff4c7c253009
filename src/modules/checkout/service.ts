import type { Kysely } from 'kysely';
import type { DB, Environment } from '../../db/schema.js';
import { ApiError } from '../../http/errors.js';
import { maskPhone } from '../../lib/phone.js';
import { confirmPayment, isPastExpiry, lockIntentAndPayer } from '../intents/payment.js';
import { checkAmount } from '../intents/service.js';
import type { IntentRow } from '../intents/repo.js';
import { isPayable } from '../intents/state.js';
import { authenticateWallet, SANDBOX_WALLETS } from '../wallets/service.js';

/** What a customer sees of an intent: what to pay, to whom, and its state; nothing else. */
export interface CheckoutView {
  shortCode: string;
  merchantName: string;
  label: string;
  amountType: 'FIXED' | 'OPEN';
  amount: number | null;
  suggestedAmount: number | null;
  payerFee: number;
  currency: 'MRU';
  state: 'PAYABLE' | 'PAID' | 'EXPIRED' | 'CANCELLED' | 'REFUNDED';
  sandbox: boolean;
  expiresAt: string;
  successUrl: string | null;
  cancelUrl: string | null;
  receipt: { reference: string; amountPaid: number; paidAt: string; payerPhone: string } | null;
  /** Centimes refunded so far (0 when none): a REFUNDED state may be a part of the payment. */
  amountRefunded: number;
  testWallets: { phone: string; pin: string; note: string; balance: number; locked: boolean }[];
}

async function intentBy(db: Kysely<DB>, where: { shortCode: string } | { code: number; environment: Environment }) {
  let query = db.selectFrom('payment_intents').selectAll();
  query =
    'shortCode' in where
      ? query.where('short_code', '=', where.shortCode)
      : query.where('payment_code', '=', where.code).where('environment', '=', where.environment);
  const intent = await query.executeTakeFirst();
  if (!intent) throw new ApiError('INTENT_NOT_FOUND', 'No payment with this link or code.');
  return intent;
}

export async function checkoutView(db: Kysely<DB>, intent: IntentRow): Promise<CheckoutView> {
  const business = await db
    .selectFrom('businesses')
    .leftJoin('fee_plans', 'fee_plans.business_id', 'businesses.id')
    .select(['businesses.name', 'fee_plans.payer_fee'])
    .where('businesses.id', '=', intent.business_id)
    .executeTakeFirstOrThrow();
  const now = new Date();
  const state: CheckoutView['state'] =
    intent.status === 'PAID'
      ? 'PAID'
      : intent.status === 'REFUNDED'
        ? 'REFUNDED'
        : isPayable(intent.status)
          ? isPastExpiry(intent, now)
            ? 'EXPIRED'
            : 'PAYABLE'
          : intent.cancel_reason === 'expiry'
            ? 'EXPIRED'
            : 'CANCELLED';
  const sandbox = intent.environment === 'test';
  return {
    shortCode: intent.short_code,
    merchantName: business.name,
    label: intent.label,
    amountType: intent.amount_type,
    amount: intent.amount_type === 'FIXED' ? intent.amount : null,
    suggestedAmount: intent.suggested_amount,
    payerFee: business.payer_fee ?? 0,
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
  return checkoutView(db, await intentBy(db, { shortCode }));
}

/** Pay-by-code looks up the 6-digit code among payable intents of one environment. */
export async function viewByCode(db: Kysely<DB>, code: string, environment: Environment) {
  return checkoutView(db, await intentBy(db, { code: Number(code), environment }));
}

/**
 * A customer pays with their wallet: PIN first (outside any transaction: the hash is slow), then
 * the one confirm-payment operation under the intent's row lock. Two customers paying at once:
 * the second finds the intent PAID and is refused before any money moves.
 */
export async function payIntent(
  db: Kysely<DB>,
  shortCode: string,
  input: { phone: string; pin: string; amount?: number | undefined },
  maxAmount: number,
): Promise<CheckoutView> {
  const found = await intentBy(db, { shortCode });
  let amount: number;
  if (found.amount_type === 'OPEN') {
    if (input.amount === undefined) {
      throw new ApiError('VALIDATION_ERROR', 'Enter the amount to pay.', [
        { field: 'body.amount', message: 'is required' },
      ]);
    }
    checkAmount(input.amount, maxAmount);
    amount = input.amount;
  } else {
    amount = found.amount!;
  }
  if (!isPayable(found.status) || isPastExpiry(found, new Date()))
    throw new ApiError('INTENT_NOT_PENDING', 'This payment can no longer be paid.');
  const wallet = await authenticateWallet(db, found.environment, input.phone, input.pin);
  const result = await db.transaction().execute(async (trx) => {
    const { intent, payer } = (await lockIntentAndPayer(trx, { id: found.id }, { phone: wallet.phone })) ?? {};
    const now = new Date();
    if (!intent || !isPayable(intent.status) || isPastExpiry(intent, now))
      throw new ApiError('INTENT_NOT_PENDING', 'This payment can no longer be paid.');
    if (!payer) throw new ApiError('WALLET_NOT_FOUND');
    return confirmPayment(trx, intent, { amount, payer, method: 'WALLET', now });
  });
  // A failed attempt is committed (FAILED, payment.failed) and then reported to the customer.
  if (result.outcome === 'failed') {
    switch (result.failure) {
      case 'INSUFFICIENT_BALANCE':
        throw new ApiError(
          'INSUFFICIENT_BALANCE',
          'The wallet balance cannot cover this payment. Nothing was charged.',
        );
      case 'SANDBOX_DECLINED':
      case 'SIMULATED_FAILURE':
        throw new ApiError('PAYMENT_FAILED', `${result.reason} Nothing was charged.`);
      default: {
        const never: never = result.failure;
        throw new Error(`unknown payment failure ${String(never)}`);
      }
    }
  }
  return checkoutView(db, result.intent);
}
