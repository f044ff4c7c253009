import type { IntentStatus } from '../../db/schema.js';
import { ApiError, type ErrorCode } from '../../http/errors.js';

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

/** Statuses in which a customer can still pay, and the intent holds its 6-digit code. */
export const PAYABLE_STATUSES: readonly IntentStatus[] = intentActions.pay.from;

export function isPayable(status: IntentStatus): boolean {
  return PAYABLE_STATUSES.includes(status);
}

export function canTransition(status: IntentStatus, action: IntentAction): boolean {
  return (intentActions[action].from as readonly IntentStatus[]).includes(status);
}

/** The catalogue's refusal of `action` on an intent in `status`. */
export function transitionRefusal(status: IntentStatus, action: IntentAction): ApiError {
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

/** The status `action` leads to from `status`, or the catalogue's refusal for that action. */
export function assertTransition(status: IntentStatus, action: IntentAction): IntentStatus {
  if (!canTransition(status, action)) throw transitionRefusal(status, action);
  return intentActions[action].to;
}
