import { randomInt } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../db/connect.js';
import type { DB, Environment, IntentStatus } from '../../db/schema.js';
import { ApiError } from '../../http/errors.js';
import { randomBase62, randomDigits } from '../../lib/ids.js';
import { recordEvents } from '../events/outbox.js';
import { refundCommission } from './commission.js';
import { paymentEvent } from './events.js';
import { lockAccounts, post, balanceIn } from '../ledger/ledger.js';
import { findWallet, lockedUntil } from '../wallets/service.js';
import { confirmPayment, expireIntents, failPayment, isPastExpiry, SANDBOX_DEFAULT_PAYER } from './payment.js';
import * as repo from './repo.js';
import type { IntentRow, IntentWithRefunds } from './repo.js';
import { isPayable } from './state.js';

/** The business and environment a request acts for (from its API key). */
export interface Caller {
  businessId: string;
  environment: Environment;
}

export const INTENT_LIFETIME_MS = 24 * 60 * 60 * 1000;
export const METADATA_MAX_KEYS = 50;
export const METADATA_MAX_VALUE_LENGTH = 500;
/** Not in the contract: Stripe's key limit, so a key stays a key and not a second value. */
export const METADATA_MAX_KEY_LENGTH = 40;
const MAX_CREATE_ATTEMPTS = 8;

export interface IntentView {
  referenceNumber: string;
  shortCode: string;
  code: string | null;
  codeExpiresAt: string | null;
  payUrl: string;
  type: 'API';
  amount: number | null;
  suggestedAmount: number | null;
  amountType: 'FIXED' | 'OPEN';
  currency: 'MRU';
  label: string;
  status: IntentStatus;
  sandbox: boolean;
  metadata: Record<string, string>;
  payment: { amountPaid: number; paidAt: string; method: string } | null;
  refunds: { id: string; amount: number; reason: string | null; status: 'SUCCEEDED'; createdAt: string }[];
  totalAmountRefunded: number;
  successUrl: string | null;
  cancelUrl: string | null;
  expiresAt: string;
  createdAt: string;
  updatedAt: string;
}

export function formatCode(paymentCode: number): string {
  return String(paymentCode).padStart(6, '0');
}

export function intentView(intent: IntentWithRefunds, payBase: string): IntentView {
  const code = intent.payment_code === null ? null : formatCode(intent.payment_code);
  return {
    referenceNumber: intent.reference_number,
    shortCode: intent.short_code,
    code,
    codeExpiresAt: code === null ? null : intent.expires_at.toISOString(),
    payUrl: `${payBase}/p/${intent.short_code}`,
    type: 'API',
    amount: intent.amount_type === 'OPEN' ? null : intent.amount,
    suggestedAmount: intent.suggested_amount,
    amountType: intent.amount_type,
    currency: 'MRU',
    label: intent.label,
    status: intent.status,
    sandbox: intent.environment === 'test',
    metadata: intent.metadata,
    payment:
      intent.paid_at && intent.amount_paid !== null
        ? {
            amountPaid: intent.amount_paid,
            paidAt: intent.paid_at.toISOString(),
            method: intent.payment_method ?? 'WALLET',
          }
        : null,
    refunds: intent.refunds.map((refund) => ({
      id: refund.id,
      amount: refund.amount,
      reason: refund.reason,
      status: refund.status,
      createdAt: refund.createdAt.toISOString(),
    })),
    totalAmountRefunded: intent.total_amount_refunded,
    successUrl: intent.success_url,
    cancelUrl: intent.cancel_url,
    expiresAt: intent.expires_at.toISOString(),
    createdAt: intent.created_at.toISOString(),
    updatedAt: intent.updated_at.toISOString(),
  };
}

function invalid(field: string, message: string): ApiError {
  return new ApiError('VALIDATION_ERROR', `${field} ${message}.`, [{ field, message }]);
}

export function checkAmount(amount: number, maxAmount: number): void {
  if (amount < 1 || amount > maxAmount) {
    throw new ApiError('AMOUNT_OUT_OF_RANGE', `The amount must be between 1 and ${maxAmount} centimes.`);
  }
}

function checkRedirectUrl(field: string, value: string | undefined): string | null {
  if (value === undefined) return null;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalid(field, 'must be an absolute http(s) URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw invalid(field, 'must be an absolute http(s) URL');
  return value;
}

export interface CreateIntentInput {
  amount?: number;
  amountType?: 'FIXED' | 'OPEN';
  label?: string;
  metadata?: Record<string, string>;
  success_url?: string;
  cancel_url?: string;
}

export interface CreateIntentOptions {
  claim: repo.CreateClaim;
  maxAmount: number;
  codeSpace: number;
  payBase: string;
  /** Serializes the response exactly as it will be sent; the code is not known yet. */
  render(view: IntentView): string;
}

const CODE_PLACEHOLDER = '000000';

/**
 * Creates an intent and stores its idempotent response in one statement (see repo.insertIntent).
 * Returns the response body to send, or null when a new claim found its key already used.
 */
export async function createIntent(
  database: Database,
  caller: Caller,
  input: CreateIntentInput,
  options: CreateIntentOptions,
): Promise<string | null> {
  const amountType = input.amountType ?? 'FIXED';
  if (amountType === 'FIXED' && input.amount === undefined) throw invalid('body.amount', 'is required');
  if (input.amount !== undefined) checkAmount(input.amount, options.maxAmount);
  const metadata = input.metadata ?? {};
  const keys = Object.keys(metadata);
  const badKey = keys.find((key) => key.length < 1 || key.length > METADATA_MAX_KEY_LENGTH);
  if (badKey !== undefined) {
    throw invalid(`body.metadata.${badKey}`, `key must be 1 to ${METADATA_MAX_KEY_LENGTH} characters`);
  }
  if (keys.length > METADATA_MAX_KEYS) {
    throw new ApiError('METADATA_TOO_MANY_KEYS', `metadata may have at most ${METADATA_MAX_KEYS} keys.`);
  }
  const tooLong = keys.find((key) => [...(metadata[key] ?? '')].length > METADATA_MAX_VALUE_LENGTH);
  if (tooLong !== undefined) {
    throw new ApiError(
      'METADATA_VALUE_TOO_LONG',
      `metadata.${tooLong} is longer than ${METADATA_MAX_VALUE_LENGTH} characters.`,
    );
  }
  const successUrl = checkRedirectUrl('body.success_url', input.success_url);
  const cancelUrl = checkRedirectUrl('body.cancel_url', input.cancel_url);

  for (let attempt = 0; attempt < MAX_CREATE_ATTEMPTS; attempt++) {
    const createdAt = new Date();
    const expiresAt = new Date(createdAt.getTime() + INTENT_LIFETIME_MS);
    const row: IntentWithRefunds = {
      id: 0,
      reference_number: `PI-${randomDigits(16)}`,
      short_code: randomBase62(6),
      business_id: caller.businessId,
      environment: caller.environment,
      amount_type: amountType,
      amount: amountType === 'FIXED' ? input.amount! : null,
      suggested_amount: amountType === 'OPEN' ? (input.amount ?? null) : null,
      label: input.label ?? '',
      metadata,
      success_url: successUrl,
      cancel_url: cancelUrl,
      status: 'PENDING',
      payment_code: Number(CODE_PLACEHOLDER),
      expires_at: expiresAt,
      amount_paid: null,
      paid_at: null,
      payment_method: null,
      payer_phone: null,
      payer_fee: 0,
      provider_ttc: 0,
      payer_ttc: 0,
      tof: 0,
      tte: 0,
      tof_bps: 0,
      tte_bps: 0,
      total_amount_refunded: 0,
      last_failure: null,
      created_at: createdAt,
      updated_at: createdAt,
      refunds: [],
    };
    const body = options.render(intentView(row, options.payBase));
    // The reference and short code come first and never contain this text, so the first match
    // is the code field: the statement writes the allocated code at this position.
    const codeIndex = body.indexOf(`"code":"${CODE_PLACEHOLDER}"`) + '"code":"'.length;
    const event = paymentEvent('payment.created', row, createdAt);
    const outcome = await repo.insertIntent(database, {
      claim: options.claim,
      randomStart: randomInt(options.codeSpace),
      codeSpace: options.codeSpace,
      environment: caller.environment,
      referenceNumber: row.reference_number,
      shortCode: row.short_code,
      businessId: caller.businessId,
      amountType,
      amount: row.amount,
      suggestedAmount: row.suggested_amount,
      label: row.label,
      metadata,
      successUrl,
      cancelUrl,
      expiresAt,
      createdAt,
      eventId: event.id,
      eventBody: event.body,
      responseBody: body,
      codePosition: codeIndex + 1,
    });
    // undefined: a unique clash with a concurrent create; try again with fresh values.
    if (outcome === undefined) continue;
    if (!outcome.codeFound) throw new ApiError('CODE_SPACE_EXHAUSTED');
    if (!outcome.claimed) {
      if ('key' in options.claim) return null;
      throw new ApiError('IDEMPOTENCY_KEY_IN_PROGRESS');
    }
    const code = formatCode(outcome.paymentCode!);
    return body.slice(0, codeIndex) + code + body.slice(codeIndex + code.length);
  }
  throw new ApiError('CODE_SPACE_EXHAUSTED', 'No payment code could be reserved. Retry shortly.');
}

/** api.md 5 rule 4 and 4.1: another business's intent does not exist; the other environment's is a mismatch. */
function visibleTo<T extends IntentRow>(intent: T | undefined, caller: Caller): T {
  if (!intent || intent.business_id !== caller.businessId) throw new ApiError('INTENT_NOT_FOUND');
  if (intent.environment !== caller.environment) throw new ApiError('SANDBOX_MISMATCH');
  return intent;
}

export async function getIntent(database: Database, caller: Caller, referenceNumber: string) {
  return visibleTo(await repo.findIntentWithRefunds(database, referenceNumber), caller);
}

export async function listIntents(
  database: Database,
  caller: Caller,
  query: { status?: IntentStatus; from?: Date; to?: Date; limit: number; offset: number },
) {
  return repo.listIntents(database, {
    businessId: caller.businessId,
    environment: caller.environment,
    status: query.status,
    from: query.from,
    to: query.to,
    limit: query.limit,
    offset: query.offset,
  });
}

async function withRefunds(trx: Transaction<DB>, intent: IntentRow): Promise<IntentWithRefunds> {
  return { ...intent, refunds: await repo.refundsOf(trx, intent.id) };
}

/**
 * Cancel is allowed from PENDING only. The status is read first, then changed only if it is
 * still PENDING: when another transaction moved it in between (a payment committing under us),
 * the answer is INTENT_CANCEL_CONFLICT rather than a silent overwrite.
 */
export async function cancelIntent(
  trx: Transaction<DB>,
  caller: Caller,
  referenceNumber: string,
): Promise<IntentWithRefunds> {
  const intent = visibleTo(await repo.findIntent(trx, referenceNumber), caller);
  if (intent.status !== 'PENDING') {
    throw new ApiError(
      'INTENT_CANCEL_INVALID_STATUS',
      `Only a PENDING intent can be cancelled; this one is ${intent.status}.`,
    );
  }
  const now = new Date();
  const cancelled = await trx
    .updateTable('payment_intents')
    .set({ status: 'CANCELLED', payment_code: null, updated_at: now })
    .where('id', '=', intent.id)
    .where('status', '=', 'PENDING')
    .returningAll()
    .executeTakeFirst();
  if (!cancelled) throw new ApiError('INTENT_CANCEL_CONFLICT');
  await recordEvents(trx, [paymentEvent('payment.cancelled', cancelled, now)]);
  return withRefunds(trx, cancelled);
}

export async function refundIntent(
  trx: Transaction<DB>,
  caller: Caller,
  referenceNumber: string,
  input: { amount?: number; reason?: string },
): Promise<IntentWithRefunds> {
  const intent = visibleTo(await repo.lockIntent(trx, referenceNumber), caller);
  const paid = intent.amount_paid ?? 0;
  const left = paid - intent.total_amount_refunded;
  if ((intent.status !== 'PAID' && intent.status !== 'REFUNDED') || left <= 0) {
    throw new ApiError(
      'INTENT_REFUND_INVALID_STATUS',
      `Only a PAID intent with something left to refund can be refunded; this one is ${intent.status}` +
        (intent.status === 'REFUNDED' ? ' in full.' : '.'),
    );
  }
  const amount = input.amount ?? left;
  if (amount < 1 || amount > left) {
    throw new ApiError('REFUND_AMOUNT_INVALID', `The refund amount must be between 1 and ${left} centimes.`);
  }
  const now = new Date();
  const commission = refundCommission(
    { amountPaid: paid, providerTtc: intent.provider_ttc, tofBps: intent.tof_bps, tteBps: intent.tte_bps },
    intent.total_amount_refunded,
    amount,
  );
  const refundId = `RF-${randomDigits(16)}`;
  // The money goes back through the ledger: from the merchant (less the provider fee returned)
  // and from the platform's share of the fees, to the payer's wallet.
  const payer = intent.payer_phone ? await findWallet(trx, intent.environment, intent.payer_phone) : undefined;
  let ledgerTransactionId: string | null = null;
  if (payer) {
    const merchant = { kind: 'merchant', ownerId: intent.business_id } as const;
    const fromMerchant = amount - commission.provider_ttc;
    const locked = await lockAccounts(trx, intent.environment, [merchant, { kind: 'wallet', ownerId: payer.id }]);
    if (balanceIn(locked, merchant) < fromMerchant) {
      throw new ApiError(
        'INSUFFICIENT_BALANCE',
        `The merchant balance cannot cover this refund (${fromMerchant} centimes needed).`,
      );
    }
    ledgerTransactionId = await post(trx, {
      environment: intent.environment,
      kind: 'refund',
      reference: refundId,
      at: now,
      lines: [
        { account: merchant, amount: -fromMerchant },
        { account: { kind: 'wallet', ownerId: payer.id }, amount },
        { account: { kind: 'revenue' }, amount: -commission.total_revenue },
        { account: { kind: 'tof' }, amount: -commission.tof },
        { account: { kind: 'tte' }, amount: -commission.tte },
      ],
    });
  }
  await trx
    .insertInto('refunds')
    .values({
      id: refundId,
      intent_id: intent.id,
      amount,
      reason: input.reason ?? null,
      status: 'SUCCEEDED',
      provider_ttc: commission.provider_ttc,
      tof: commission.tof,
      tte: commission.tte,
      created_at: now,
      ledger_transaction_id: ledgerTransactionId,
    })
    .execute();
  const refunded = await trx
    .updateTable('payment_intents')
    .set({ status: 'REFUNDED', total_amount_refunded: intent.total_amount_refunded + amount, updated_at: now })
    .where('id', '=', intent.id)
    .returningAll()
    .executeTakeFirstOrThrow();
  await recordEvents(trx, [
    paymentEvent('payment.refunded', refunded, now, { commission, refund: { id: refundId, amount } }),
  ]);
  return withRefunds(trx, refunded);
}

export interface SimulateInput {
  outcome?: 'success' | 'failure';
  amount?: number;
  payerPhone?: string;
}

/** Sandbox payment: the same confirm or fail operation a wallet payment goes through. */
export async function simulatePayment(
  trx: Transaction<DB>,
  caller: Caller,
  referenceNumber: string,
  input: SimulateInput,
  maxAmount: number,
): Promise<IntentWithRefunds> {
  const intent = visibleTo(await repo.lockIntent(trx, referenceNumber), caller);
  const now = new Date();
  if (!isPayable(intent.status) || isPastExpiry(intent, now)) {
    throw new ApiError('INTENT_NOT_PENDING', `The intent is ${isPayable(intent.status) ? 'expired' : intent.status}.`);
  }
  let amount: number;
  if (intent.amount_type === 'OPEN') {
    if (input.amount === undefined) throw invalid('body.amount', 'is required for an OPEN intent');
    checkAmount(input.amount, maxAmount);
    amount = input.amount;
  } else {
    amount = intent.amount!;
    if (input.amount !== undefined && input.amount !== amount) {
      throw invalid('body.amount', `must be the intent's amount (${amount}) for a FIXED intent`);
    }
  }
  if (input.outcome === 'failure') {
    const reason = 'Simulated payment failure.';
    return withRefunds(trx, await failPayment(trx, intent, { reason, attemptedAmount: amount, now }));
  }
  const phone = input.payerPhone ?? SANDBOX_DEFAULT_PAYER;
  const wallet = await findWallet(trx, intent.environment, phone);
  if (!wallet) throw new ApiError('WALLET_NOT_FOUND', `No sandbox wallet for ${phone}.`);
  const until = lockedUntil(wallet, now);
  if (until) throw new ApiError('WALLET_LOCKED');
  const result = await confirmPayment(trx, intent, { amount, wallet, method: 'WALLET', now });
  const updated = result.intent;
  return withRefunds(trx, updated);
}

/** `simulate-expiry`: what the 24-hour timer does, now. */
export async function simulateExpiry(
  trx: Transaction<DB>,
  caller: Caller,
  referenceNumber: string,
): Promise<IntentWithRefunds> {
  const intent = visibleTo(await repo.lockIntent(trx, referenceNumber), caller);
  if (!isPayable(intent.status)) throw new ApiError('INTENT_NOT_PENDING', `The intent is ${intent.status}.`);
  const [expired] = await expireIntents(trx, [intent], new Date());
  return withRefunds(trx, expired!);
}

/**
 * The expiry job: moves payable intents past `expiresAt` to CANCELLED with `payment.expired`,
 * in batches. Rows another worker holds are skipped, so several workers share the work.
 */
export async function expireDueIntents(db: Kysely<DB>, batchSize = 500): Promise<number> {
  let total = 0;
  for (;;) {
    const count = await db.transaction().execute(async (trx) => {
      const due = await repo.lockExpiredIntents(trx, batchSize);
      return (await expireIntents(trx, due, new Date())).length;
    });
    total += count;
    if (count < batchSize) return total;
  }
}
