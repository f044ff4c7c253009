import { randomInt } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../db/connect.js';
import type { AmountType, DB, FeeBearer, IntentStatus } from '../../db/schema.js';
import type { Executor } from '../../db/transaction.js';
import { ApiError, invalid } from '../../http/errors.js';
import { checkMetadata } from '../../http/metadata.js';
import { randomBase62, randomDigits } from '../../lib/ids.js';
import { checkPaymentAmount } from '../payments/amount.js';
import { paymentEvent } from './events.js';
import { attemptPayment } from './payments.js';
import { refundPayment } from './refunds.js';
import { CommittedRefusal } from '../../http/idempotency/plugin.js';
import { sandboxMethod } from '../sandbox/method.js';
import { visibleSeller } from '../sellers/lookup.js';
import { sandboxAnswerOf, SANDBOX_DEFAULT_PAYER } from '../sandbox/sandbox.js';
import { lockIntentAndPayer } from './payer-lock.js';
import { listPayments } from '../payments/store.js';
import { changeIntent, expireIntents } from './changes.js';
import { unitOfWork } from '../events/unit-of-work.js';
import { pendingRequestsOf, withdrawRequests } from './request-ends.js';
import * as repo from './repo.js';
import type { IntentRow, IntentViewRow, IntentWithRefunds } from './repo.js';
import { checkSplit, splitView, type SplitInput, type SplitView } from './splits.js';
import { assertAllowed } from './state.js';
import type { Caller } from '../../http/context.js';

export type { Caller };

export const INTENT_LIFETIME_MS = 24 * 60 * 60 * 1000;
const MAX_CREATE_ATTEMPTS = 8;
/** Random codes a create tries before walking for one: at 90 % taken all 32 are taken 3 % of the time. */
const CODE_CANDIDATES = 32;

export interface IntentView {
  referenceNumber: string;
  shortCode: string;
  code: string | null;
  codeExpiresAt: string | null;
  payUrl: string;
  type: 'API';
  amount: number | null;
  suggestedAmount: number | null;
  amountType: AmountType;
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
  /** Only on an intent made through a payment link: the link, and what its payer wrote there. */
  paymentLink?: string;
  payerName?: string;
  payerNote?: string;
  /** Only on a split intent (decision 080). */
  splits?: SplitView;
  feeBearer?: FeeBearer;
}

export function formatCode(paymentCode: number): string {
  return String(paymentCode).padStart(6, '0');
}

export function intentView(intent: IntentViewRow, payBase: string): IntentView {
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
    ...(intent.payment_link === null ? {} : { paymentLink: intent.payment_link }),
    ...(intent.payer_name === null ? {} : { payerName: intent.payer_name }),
    ...(intent.payer_note === null ? {} : { payerNote: intent.payer_note }),
    ...splitView(intent),
  };
}

export function checkRedirectUrl(field: string, value: string | undefined): string | null {
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
  amountType?: AmountType;
  label?: string;
  metadata?: Record<string, string>;
  success_url?: string;
  cancel_url?: string;
  splits?: SplitInput;
  feeBearer?: FeeBearer;
}

export interface CreateIntentOptions {
  maxAmount: number;
  codeSpace: number;
}

/**
 * Creates an intent in the caller's transaction: the intent with a free 6-digit code, its
 * `payment.created` event and the event's deliveries, in one statement (see repo.insertIntent).
 */
export async function createIntent(
  trx: Executor,
  caller: Caller,
  input: CreateIntentInput,
  options: CreateIntentOptions,
): Promise<IntentWithRefunds> {
  const amountType = input.amountType ?? 'FIXED';
  if (amountType === 'FIXED' && input.amount === undefined) throw invalid('body.amount', 'is required');
  if (input.amount !== undefined) checkPaymentAmount(input.amount, options.maxAmount);
  const metadata = input.metadata ?? {};
  checkMetadata(metadata);
  const successUrl = checkRedirectUrl('body.success_url', input.success_url);
  const cancelUrl = checkRedirectUrl('body.cancel_url', input.cancel_url);
  const amount = amountType === 'FIXED' ? input.amount! : null;
  const suggestedAmount = amountType === 'OPEN' ? (input.amount ?? null) : null;
  const split = await checkSplit(trx, caller, input, amountType, amount);

  for (let attempt = 0; attempt < MAX_CREATE_ATTEMPTS; attempt++) {
    const createdAt = new Date();
    const referenceNumber = `PI-${randomDigits(16)}`;
    const shortCode = randomBase62(6);
    const event = paymentEvent(
      'payment.created',
      {
        reference_number: referenceNumber,
        short_code: shortCode,
        business_id: caller.businessId,
        environment: caller.environment,
        amount,
        amount_paid: null,
        status: 'PENDING',
        paid_at: null,
        payer_phone: null,
        metadata,
        total_amount_refunded: 0,
        payment_link: null,
        payer_name: null,
        payer_note: null,
      },
      createdAt,
    );
    const row = await repo.insertIntent(trx, {
      codeCandidates: Array.from({ length: CODE_CANDIDATES }, () => randomInt(options.codeSpace)),
      codeSpace: options.codeSpace,
      environment: caller.environment,
      referenceNumber,
      shortCode,
      businessId: caller.businessId,
      amountType,
      amount,
      suggestedAmount,
      label: input.label ?? '',
      metadata,
      successUrl,
      cancelUrl,
      split: split ?? null,
      expiresAt: new Date(createdAt.getTime() + INTENT_LIFETIME_MS),
      createdAt,
      event: { id: event.id, body: event.body },
    });
    if (row === 'exhausted') throw new ApiError('CODE_SPACE_EXHAUSTED');
    // undefined: a unique clash with a concurrent create; try again with fresh values.
    if (row) return { ...row, refunds: [] };
  }
  throw new ApiError('CODE_SPACE_EXHAUSTED', 'No payment code could be reserved. Retry shortly.');
}

/** api.md 5 rule 4 and 4.1: another business's intent does not exist; the other environment's is a mismatch. */
function visibleTo<T extends Pick<IntentRow, 'business_id' | 'environment'>>(intent: T | undefined, caller: Caller): T {
  if (!intent || intent.business_id !== caller.businessId) throw new ApiError('INTENT_NOT_FOUND');
  if (intent.environment !== caller.environment) throw new ApiError('SANDBOX_MISMATCH');
  return intent;
}

export async function getIntent(database: Database, caller: Caller, referenceNumber: string) {
  return visibleTo(await repo.findIntentWithRefunds(database, referenceNumber), caller);
}

/** `getIntent` with only what the API's view shows. */
export async function getIntentView(database: Database, caller: Caller, referenceNumber: string) {
  return visibleTo(await repo.findIntentView(database, referenceNumber), caller);
}

/** A page of the intent's payments (every attempt to pay it), newest first. */
export async function listIntentPayments(
  db: Kysely<DB>,
  caller: Caller,
  referenceNumber: string,
  page: { limit: number; offset: number },
) {
  const intent = visibleTo(await repo.findIntent(db, referenceNumber), caller);
  return listPayments(db, { intentId: intent.id }, page);
}

export async function listIntents(
  database: Database,
  caller: Caller,
  query: { status?: IntentStatus; seller?: string; from?: Date; to?: Date; limit: number; offset: number },
) {
  if (query.seller !== undefined) await visibleSeller(database.db, caller, query.seller, 'query.seller');
  return repo.listIntents(database, {
    businessId: caller.businessId,
    environment: caller.environment,
    status: query.status,
    seller: query.seller,
    from: query.from,
    to: query.to,
    limit: query.limit,
    offset: query.offset,
  });
}

/** A changed intent with its refunds (none to read until it was first refunded). */
async function withRefunds(trx: Executor, intent: IntentRow): Promise<IntentWithRefunds> {
  return { ...intent, refunds: intent.total_amount_refunded > 0 ? await repo.refundsOf(trx, intent.id) : [] };
}

const LOCK_NOT_AVAILABLE = '55P03';

/**
 * Cancel locks the intent like every other change, but does not queue behind one: while another
 * transaction holds the row (a payment committing), the status is changing under us, and the
 * answer is INTENT_CANCEL_CONFLICT (api.md 3.1 rule 2) rather than a wait.
 */
export async function cancelIntent(
  trx: Transaction<DB>,
  caller: Caller,
  referenceNumber: string,
): Promise<IntentWithRefunds> {
  let locked;
  try {
    locked = await repo.lockIntent(trx, { referenceNumber }, { nowait: true });
  } catch (error) {
    if ((error as { code?: unknown }).code === LOCK_NOT_AVAILABLE) throw new ApiError('INTENT_CANCEL_CONFLICT');
    throw error;
  }
  const intent = visibleTo(locked, caller);
  const now = new Date();
  const change = {
    status: assertAllowed(intent, 'cancel', now),
    cancel_reason: 'cancel',
    payment_code: null,
    updated_at: now,
  } as const;
  // Its pending request, if any, can no longer be paid: it ends with the intent.
  const requests = await pendingRequestsOf(trx, [intent.id]);
  const cancelled = await changeIntent(
    trx,
    intent,
    change,
    (changed) => [paymentEvent('payment.cancelled', changed, now)],
    withdrawRequests(unitOfWork(), requests, 'CANCELLED', now),
  );
  return withRefunds(trx, cancelled);
}

export async function refundIntent(
  trx: Transaction<DB>,
  caller: Caller,
  referenceNumber: string,
  input: { amount?: number; reason?: string },
): Promise<IntentWithRefunds> {
  return refundPayment(trx, visibleTo(await repo.lockIntent(trx, { referenceNumber }), caller), input);
}

export interface SimulateInput {
  outcome?: 'success' | 'failure';
  amount?: number;
  payerPhone?: string;
}

/**
 * Sandbox payment: the same pay operation a wallet payment goes through, with the sandbox's
 * method (its scenario table says what the payer's phone does). A locked sandbox wallet is a
 * FAILED payment kept and answered WALLET_LOCKED.
 */
export async function simulatePayment(
  trx: Transaction<DB>,
  caller: Caller,
  referenceNumber: string,
  input: SimulateInput,
  maxAmount: number,
): Promise<IntentWithRefunds | CommittedRefusal> {
  const phone = input.payerPhone ?? SANDBOX_DEFAULT_PAYER;
  // A simulated failure moves no money, and a payer who answers later holds nothing: no wallet is locked.
  const locked =
    input.outcome === 'failure' || sandboxAnswerOf(phone).answer !== 'PAYS'
      ? { intent: await repo.lockIntent(trx, { referenceNumber }), payer: undefined }
      : await lockIntentAndPayer(trx, { referenceNumber }, { phone, owner: caller });
  const intent = visibleTo(locked?.intent, caller);
  const now = new Date();
  assertAllowed(intent, 'pay', now);
  let amount: number;
  if (intent.amount_type === 'OPEN') {
    if (input.amount === undefined) throw invalid('body.amount', 'is required for an OPEN intent');
    checkPaymentAmount(input.amount, maxAmount);
    amount = input.amount;
  } else {
    amount = intent.amount!;
    if (input.amount !== undefined && input.amount !== amount) {
      throw invalid('body.amount', `must be the intent's amount (${amount}) for a FIXED intent`);
    }
  }
  const result = await attemptPayment(trx, intent, {
    amount,
    phone,
    payer: locked?.payer,
    method: sandboxMethod(input.outcome),
    now,
  });
  if (result.outcome === 'failed' && result.failure === 'WALLET_LOCKED') {
    return new CommittedRefusal(new ApiError('WALLET_LOCKED'));
  }
  return withRefunds(trx, result.intent);
}

/** `simulate-expiry`: what the 24-hour timer does, now. */
export async function simulateExpiry(
  trx: Transaction<DB>,
  caller: Caller,
  referenceNumber: string,
): Promise<IntentWithRefunds> {
  const intent = visibleTo(await repo.lockIntent(trx, { referenceNumber }), caller);
  const now = new Date();
  assertAllowed(intent, 'expire', now);
  const [expired] = await expireIntents(trx, [intent], now);
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
