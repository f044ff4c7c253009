import { sql, type Kysely, type Transaction } from 'kysely';
import type { DB, Environment } from '../../db/schema.js';
import type { Caller } from '../../http/context.js';
import { ApiError, invalid } from '../../http/errors.js';
import { randomDigits } from '../../lib/ids.js';
import { lockIntentAndPayer } from '../intents/payer-lock.js';
import { attemptPayment, endWaitingPayment, type WaitingAnswer } from '../intents/payments.js';
import { findIntent } from '../intents/repo.js';
import { requestEvent } from '../intents/request-ends.js';
import { isAllowed } from '../intents/state.js';
import { checkPaymentAmount } from '../payments/amount.js';
import { walletRequest } from '../payments/methods.js';
import { sandboxPayer } from '../sandbox/sandbox.js';
import { queueOperatorNotice, type OperatorHookTarget } from './operator-hook.js';
import { REQUEST_LIFETIME } from './schemas.js';
import { endedStatus, REQUEST_EVENTS } from './state.js';
import {
  askedOfPhone,
  endRequest,
  findRequest,
  hasPendingRequest,
  insertRequest,
  requestsOfIntent,
  type RequestRow,
} from './store.js';
import { notifyWallet } from './wallet-notice.js';

/** The abuse limits of one business asking one phone (decision 077). */
export const REQUEST_LIMITS = { pendingPerPhone: 3, perPhonePerHour: 10 } as const;
const HOUR_MS = 3600_000;

export function requestView(row: RequestRow) {
  return {
    id: row.id,
    intent: row.intent_reference,
    status: row.status,
    amount: Number(row.amount),
    currency: 'MRU' as const,
    phone: row.phone,
    message: row.message,
    failureCode: row.failure_code,
    expiresAt: row.expires_at.toISOString(),
    createdAt: row.created_at.toISOString(),
    endedAt: row.ended_at?.toISOString() ?? null,
  };
}

function retryAfter(until: Date, now: Date): Record<string, string> {
  return { 'Retry-After': String(Math.max(1, Math.ceil((until.getTime() - now.getTime()) / 1000))) };
}

export interface CreateRequestInput {
  phone: string;
  expiresIn?: number | undefined;
  message?: string | undefined;
  amount?: number | undefined;
}

/**
 * A merchant asks a wallet to pay an intent, in the caller's transaction: the intent is locked
 * with the payer's wallet (a sandbox phone without one gets a funded wallet, as `simulate` does),
 * the asks are checked (payable, no other pending request, not muted, the abuse limits), then the
 * intent's payment that waits for the payer (PROCESSING, method WALLET_REQUEST) and the request
 * with its `payment_request.created` are written, and the operator's notice when the hook is on
 * (`operatorHook`, operator-hook.ts). Requests to one phone serialize on its wallet's lock, so its
 * limits hold when a business asks from many intents at once.
 */
export async function createRequest(
  trx: Transaction<DB>,
  caller: Caller,
  referenceNumber: string,
  input: CreateRequestInput,
  options: { maxAmount: number; operatorHook?: OperatorHookTarget | undefined },
): Promise<RequestRow> {
  const now = new Date();
  const locked = await lockIntentAndPayer(trx, { referenceNumber }, { phone: input.phone, owner: caller });
  const intent = locked?.intent;
  if (!intent || intent.business_id !== caller.businessId) throw new ApiError('INTENT_NOT_FOUND');
  if (intent.environment !== caller.environment) throw new ApiError('SANDBOX_MISMATCH');
  if (!isAllowed(intent, 'pay', now)) throw new ApiError('INTENT_NOT_PENDING', 'This intent can no longer be paid.');
  const amount = requestedAmount(intent, input.amount, options.maxAmount);
  let payer = locked.payer;
  if (!payer) {
    if (caller.environment === 'live') throw new ApiError('WALLET_NOT_FOUND', 'No wallet has this phone number.');
    payer = await sandboxPayer(trx, input.phone);
  }
  const asked = await askedOfPhone(trx, caller, input.phone, new Date(now.getTime() - HOUR_MS));
  if (asked.muted) throw new ApiError('PAYMENT_REQUESTS_MUTED');
  if (asked.pending >= REQUEST_LIMITS.pendingPerPhone) {
    throw new ApiError(
      'TOO_MANY_PAYMENT_REQUESTS',
      `This phone already has ${asked.pending} pending requests from this business (at most ${REQUEST_LIMITS.pendingPerPhone}).`,
      undefined,
      retryAfter(asked.soonestExpiry ?? now, now),
    );
  }
  if (asked.lastHour >= REQUEST_LIMITS.perPhonePerHour) {
    throw new ApiError(
      'TOO_MANY_PAYMENT_REQUESTS',
      `This business asked this phone ${asked.lastHour} times in the last hour (at most ${REQUEST_LIMITS.perPhonePerHour}).`,
      undefined,
      retryAfter(new Date((asked.oldestInHour ?? now).getTime() + HOUR_MS), now),
    );
  }
  if (await hasPendingRequest(trx, intent.id)) throw new ApiError('PAYMENT_REQUEST_PENDING');
  const attempt = await attemptPayment(trx, intent, {
    amount,
    phone: payer.wallet.phone,
    payer,
    method: walletRequest,
    now,
  });
  if (attempt.outcome !== 'pending') throw new Error(`a payment request's payment ended at once (${attempt.outcome})`);
  const row: RequestRow = {
    id: `PR-${randomDigits(16)}`,
    business_id: intent.business_id,
    environment: intent.environment,
    intent_id: intent.id,
    payment_id: attempt.paymentId,
    phone: payer.wallet.phone,
    amount,
    message: input.message?.trim() || null,
    status: 'PENDING',
    failure_code: null,
    // A request cannot outlive its intent: past the intent's expiry nothing can be paid through it.
    expires_at: new Date(
      Math.min(now.getTime() + (input.expiresIn ?? REQUEST_LIFETIME.default) * 1000, intent.expires_at.getTime()),
    ),
    created_at: now,
    updated_at: now,
    ended_at: null,
    intent_reference: intent.reference_number,
  };
  await insertRequest(
    trx,
    {
      id: row.id,
      businessId: row.business_id,
      environment: row.environment,
      intentId: row.intent_id,
      paymentId: row.payment_id,
      phone: row.phone,
      amount,
      message: row.message,
      expiresAt: row.expires_at,
      createdAt: now,
    },
    requestEvent('payment_request.created', row, now),
  );
  if (options.operatorHook) await queueOperatorNotice(trx, row, options.operatorHook, now);
  await notifyWallet(trx, payer.wallet.id);
  return row;
}

/** The amount a request asks: a FIXED intent's own (a different one is refused), an OPEN intent's as given. */
function requestedAmount(
  intent: { amount_type: 'FIXED' | 'OPEN'; amount: number | null },
  amount: number | undefined,
  maxAmount: number,
): number {
  if (intent.amount_type === 'FIXED') {
    if (amount !== undefined && amount !== intent.amount) {
      throw invalid('body.amount', "must be the intent's amount, or left out");
    }
    return intent.amount!;
  }
  if (amount === undefined) throw invalid('body.amount', 'is required for an OPEN intent');
  checkPaymentAmount(amount, maxAmount);
  return amount;
}

/** api.md 5 rule 4: another business's request does not exist; the other environment's is a mismatch. */
async function visibleRequest(db: Kysely<DB> | Transaction<DB>, caller: Caller, id: string): Promise<RequestRow> {
  const request = await findRequest(db, id);
  if (!request || request.business_id !== caller.businessId) {
    throw new ApiError('PAYMENT_REQUEST_NOT_FOUND', `No payment request ${id}.`);
  }
  if (request.environment !== caller.environment) throw new ApiError('SANDBOX_MISMATCH');
  return request;
}

export function getRequest(db: Kysely<DB>, caller: Caller, id: string): Promise<RequestRow> {
  return visibleRequest(db, caller, id);
}

/** An intent's requests, newest first. */
export async function listIntentRequests(
  db: Kysely<DB>,
  caller: Caller,
  referenceNumber: string,
  window: { limit: number; offset: number },
) {
  const intent = await findIntent(db, referenceNumber);
  if (!intent || intent.business_id !== caller.businessId) throw new ApiError('INTENT_NOT_FOUND');
  if (intent.environment !== caller.environment) throw new ApiError('SANDBOX_MISMATCH');
  return requestsOfIntent(db, intent.id, window);
}

/**
 * Ends a pending request in the caller's transaction by ending its waiting payment
 * (`endWaitingPayment`: the intent, the wallet and the payment locked in that order; an approval
 * pays the intent with `payment.confirmed`), then the request with its event. Undefined when the
 * request had ended already: exactly one of racing ends wins.
 */
export async function endPending(
  trx: Transaction<DB>,
  request: RequestRow,
  answer: WaitingAnswer | 'CANCELLED',
  now: Date,
): Promise<RequestRow | undefined> {
  const ended = await endWaitingPayment(
    trx,
    { id: request.payment_id, intentId: Number(request.intent_id), phone: request.phone },
    answer,
    now,
  );
  if (!ended) return undefined;
  const status = endedStatus(ended);
  const failureCode = status === 'FAILED' && !ended.paid ? ended.failure : null;
  return endRequest(trx, request.id, { status, failureCode, at: now }, (row) =>
    requestEvent(REQUEST_EVENTS[status], row, now),
  );
}

/** The merchant withdraws a pending request: CANCELLED, its payment FAILED `CANCELLED`; nothing moved. */
export async function cancelRequest(trx: Transaction<DB>, caller: Caller, id: string): Promise<RequestRow> {
  const request = await visibleRequest(trx, caller, id);
  if (request.status !== 'PENDING') throw new ApiError('PAYMENT_REQUEST_NOT_PENDING');
  const ended = await endPending(trx, request, 'CANCELLED', new Date());
  if (!ended) throw new ApiError('PAYMENT_REQUEST_NOT_PENDING');
  return ended;
}

/**
 * The payer's answer in the wallet app (its PIN checked by the caller), to a request to its own
 * phone: an approval pays the intent, or fails (too little balance: FAILED, the intent stays
 * payable); a decline ends it. A request whose time is up takes no answer (the expiry ends it).
 */
export async function answerRequest(
  trx: Transaction<DB>,
  wallet: { phone: string; environment: Environment },
  id: string,
  answer: 'APPROVED' | 'DECLINED',
): Promise<RequestRow> {
  const now = new Date();
  const request = await findRequest(trx, id);
  if (!request || request.phone !== wallet.phone || request.environment !== wallet.environment) {
    throw new ApiError('PAYMENT_REQUEST_NOT_FOUND');
  }
  if (request.status !== 'PENDING' || request.expires_at <= now) throw new ApiError('PAYMENT_REQUEST_NOT_PENDING');
  const ended = await endPending(trx, request, answer, now);
  if (!ended) throw new ApiError('PAYMENT_REQUEST_NOT_PENDING');
  return ended;
}

/** A payer mutes (or unmutes) a business: its requests to this phone are then refused. */
export async function setMuted(
  db: Kysely<DB> | Transaction<DB>,
  wallet: { phone: string; environment: Environment },
  businessId: string,
  muted: boolean,
): Promise<void> {
  if (muted) {
    await sql`INSERT INTO merchant_mutes (environment, phone, business_id, created_at)
      VALUES (${wallet.environment}, ${wallet.phone}, ${businessId}, now()) ON CONFLICT DO NOTHING`.execute(db);
  } else {
    await sql`DELETE FROM merchant_mutes WHERE environment = ${wallet.environment} AND phone = ${wallet.phone}
      AND business_id = ${businessId}`.execute(db);
  }
}
