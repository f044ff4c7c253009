import type { FastifyRequest } from 'fastify';
import { sql } from 'kysely';
import type { Executor } from '../../db/transaction.js';
import { newId } from '../../lib/ids.js';
import { payerName } from '../businesses/payer-name.js';
import { payBaseUrl } from '../intents/routes.js';
import type { RequestRow } from './store.js';

/**
 * The operator notification hook (decision 078): each new payment request is told to the
 * operator's own gateway (SMS, push), so that the payer's phone hears of it. This file queues the
 * notice in the request's transaction; operator-hook-sender.ts sends it from the worker.
 */

/** What a request's creation needs to queue its notice: present only when the hook is configured. */
export interface OperatorHookTarget {
  /** The wallet app's address as payers open it (`{PAY_URL}/wallet`). */
  walletUrl: string;
}

/**
 * The hook's target for a request arriving at this server, undefined when OPERATOR_HOOK_URL is
 * unset (nothing is queued then). The wallet app is served beside the checkout, so its link starts
 * where the checkout's `payUrl` does.
 */
export function operatorHookFor(request: FastifyRequest): OperatorHookTarget | undefined {
  if (!request.server.services.config.operatorHook) return undefined;
  return { walletUrl: `${payBaseUrl(request)}/wallet` };
}

/** The JSON the operator's hook receives, snake_case like the events' data. */
export interface OperatorNoticePayload {
  type: 'payment_request.created';
  /** The request's `PR-` id. */
  id: string;
  /** The payer's full E.164 phone: the operator must reach it (events mask it; this does not). */
  phone: string;
  merchant_name: string;
  /** False in the sandbox, where nobody is verified: a payer's screen should say so. */
  merchant_verified: boolean;
  /** In centimes (1/100 MRU), as every amount of the API. */
  amount: number;
  currency: 'MRU';
  message: string | null;
  expires_at: string;
  created_at: string;
  /** The wallet app, where the payer approves (`?mode=test` signs in to the sandbox). */
  wallet_url: string;
  /** A sandbox request: the phone may be a test number; an operator may route these to a test channel. */
  sandbox: boolean;
}

/**
 * Queues the request's notice in the caller's transaction, so a request that rolls back is never
 * told and one that commits always is. The body is built now and kept: every attempt sends the
 * same bytes under the same `webhook-id`, which receivers deduplicate on.
 */
export async function queueOperatorNotice(
  trx: Executor,
  request: RequestRow,
  target: OperatorHookTarget,
  now: Date,
): Promise<void> {
  const merchant = await payerName(trx, request.business_id, request.environment);
  const sandbox = request.environment === 'test';
  const payload: OperatorNoticePayload = {
    type: 'payment_request.created',
    id: request.id,
    phone: request.phone,
    merchant_name: merchant?.name ?? '',
    merchant_verified: merchant?.verified ?? false,
    amount: Number(request.amount),
    currency: 'MRU',
    message: request.message,
    expires_at: request.expires_at.toISOString(),
    created_at: request.created_at.toISOString(),
    wallet_url: sandbox ? `${target.walletUrl}?mode=test` : target.walletUrl,
    sandbox,
  };
  await sql`INSERT INTO operator_notices (id, request_id, environment, body, status, next_attempt_at, created_at,
      updated_at)
    VALUES (${newId('ntc')}, ${request.id}, ${request.environment}, ${JSON.stringify(payload)}, 'PENDING',
      ${now}::timestamptz, ${now}::timestamptz, ${now}::timestamptz)`.execute(trx);
}
