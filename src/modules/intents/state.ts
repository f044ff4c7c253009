import { ApiError, type ErrorCode } from '../../http/errors.js';

/** Every status of a payment intent: the one list the table type, schemas and filters derive from. */
export const INTENT_STATUSES = ['PENDING', 'PAID', 'REFUNDED', 'CANCELLED', 'FAILED'] as const;

export type IntentStatus = (typeof INTENT_STATUSES)[number];

/** A fixed amount set by the merchant, or an open one the payer enters. */
export const AMOUNT_TYPES = ['FIXED', 'OPEN'] as const;

export type AmountType = (typeof AMOUNT_TYPES)[number];

/**
 * The intent state machine of api.md 3.1 with decisions' FAILED rule, as the one table every
 * route, job and checkout path asks: what each action may start from and where it leads. A FAILED
 * intent stays payable until it expires; the merchant cancels from PENDING only; expiry cancels
 * PENDING and FAILED alike; refunds repeat while something is left to refund.
 */
export const intentActions = {
  pay: { from: ['PENDING', 'FAILED'], to: 'PAID' },
  fail: { from: ['PENDING', 'FAILED'], to: 'FAILED' },
  cancel: { from: ['PENDING'], to: 'CANCELLED' },
  expire: { from: ['PENDING', 'FAILED'], to: 'CANCELLED' },
  refund: { from: ['PAID', 'REFUNDED'], to: 'REFUNDED' },
} as const satisfies Record<string, { from: readonly IntentStatus[]; to: IntentStatus }>;

export type IntentAction = keyof typeof intentActions;

/** Why a CANCELLED intent is cancelled: stored with the status, shown by the hosted pages. */
export type CancelReason = 'cancel' | 'expiry';

/** What the guards read of an intent. */
export interface IntentFacts {
  status: IntentStatus;
  expires_at: Date;
  amount_paid: number | null;
  total_amount_refunded: number;
}

export type IntentDecision = { allowed: true; to: IntentStatus } | { allowed: false; refusal: ApiError };

/**
 * Whether `action` may happen to `intent` at `now`, and where it leads: the status the table
 * allows, and each action's guard: a payment needs the intent unexpired (the expiry job may not
 * have run yet), a refund something left to refund. Every route, page, job and dashboard button
 * asks here; nothing else reads a status list or an expiry.
 */
export function decide(intent: IntentFacts, action: IntentAction, now: Date): IntentDecision {
  if (!(intentActions[action].from as readonly IntentStatus[]).includes(intent.status)) {
    return { allowed: false, refusal: transitionRefusal(intent.status, action) };
  }
  if ((action === 'pay' || action === 'fail') && intent.expires_at.getTime() <= now.getTime()) {
    return { allowed: false, refusal: new ApiError('INTENT_NOT_PENDING', 'The intent is expired.') };
  }
  if (action === 'refund' && (intent.amount_paid ?? 0) - intent.total_amount_refunded <= 0) {
    return { allowed: false, refusal: transitionRefusal(intent.status, action) };
  }
  return { allowed: true, to: intentActions[action].to };
}

export function isAllowed(intent: IntentFacts, action: IntentAction, now: Date): boolean {
  return decide(intent, action, now).allowed;
}

/** The status `action` leads to, or the catalogue's refusal of it. */
export function assertAllowed(intent: IntentFacts, action: IntentAction, now: Date): IntentStatus {
  const decision = decide(intent, action, now);
  if (!decision.allowed) throw decision.refusal;
  return decision.to;
}

/** The catalogue's refusal of `action` on an intent in `status`. */
function transitionRefusal(status: IntentStatus, action: IntentAction): ApiError {
  const code: ErrorCode =
    action === 'cancel'
      ? 'INTENT_CANCEL_INVALID_STATUS'
      : action === 'refund'
        ? 'INTENT_REFUND_INVALID_STATUS'
        : 'INTENT_NOT_PENDING';
  switch (action) {
    case 'cancel':
      return new ApiError(code, `Only a PENDING intent can be cancelled; this one is ${status}.`);
    case 'refund':
      return new ApiError(
        code,
        `Only a PAID intent with something left to refund can be refunded; this one is ${status}` +
          (status === 'REFUNDED' ? ' in full.' : '.'),
      );
    case 'pay':
    case 'fail':
    case 'expire':
      return new ApiError(code, `The intent is ${status}.`);
    default: {
      const never: never = action;
      throw new Error(`unknown intent action ${String(never)}`);
    }
  }
}
