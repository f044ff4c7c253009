import { ApiError } from '../../http/errors.js';
import { defineStateMachine, type Decision } from '../../lib/state-machine.js';
import { INTENT_STATUSES, type IntentStatus } from '../../db/schema/intents.js';

/** The columns' vocabularies live beside their table (db/schema/intents.ts): the schema reads nothing above db. */
export { AMOUNT_TYPES, INTENT_STATUSES, type AmountType, type IntentStatus } from '../../db/schema/intents.js';

/**
 * The intent state machine of api.md 3.1 with decisions' FAILED rule, as the one definition every
 * route, job and checkout path asks: what each action may start from, where it leads, and its
 * guard. A FAILED intent stays payable until it expires (a payment needs the intent unexpired: the
 * expiry job may not have run yet); the merchant cancels from PENDING only; expiry cancels PENDING
 * and FAILED alike; refunds repeat while something is left to refund.
 */
export const intentMachine = defineStateMachine({
  statuses: INTENT_STATUSES,
  initial: 'PENDING',
  actions: {
    pay: { from: ['PENDING', 'FAILED'], to: 'PAID', guard: unexpired },
    fail: { from: ['PENDING', 'FAILED'], to: 'FAILED', guard: unexpired },
    cancel: { from: ['PENDING'], to: 'CANCELLED' },
    expire: { from: ['PENDING', 'FAILED'], to: 'CANCELLED' },
    refund: { from: ['PAID', 'REFUNDED'], to: 'REFUNDED', guard: somethingLeftToRefund },
  },
  /** The catalogue's refusal of `action` on an intent in a status it does not start from. */
  refuse: (intent: IntentFacts, action) => {
    switch (action) {
      case 'cancel':
        return new ApiError(
          'INTENT_CANCEL_INVALID_STATUS',
          `Only a PENDING intent can be cancelled; this one is ${intent.status}.`,
        );
      case 'refund':
        return refundRefusal(intent.status);
      case 'pay':
      case 'fail':
      case 'expire':
        return new ApiError('INTENT_NOT_PENDING', `The intent is ${intent.status}.`);
      default: {
        const never: never = action;
        throw new Error(`unknown intent action ${String(never)}`);
      }
    }
  },
});

export const intentActions = intentMachine.actions;

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

export type IntentDecision = Decision<IntentStatus, ApiError>;

function unexpired(intent: IntentFacts, now: Date): ApiError | undefined {
  if (intent.expires_at.getTime() <= now.getTime()) return new ApiError('INTENT_NOT_PENDING', 'The intent is expired.');
  return undefined;
}

function somethingLeftToRefund(intent: IntentFacts): ApiError | undefined {
  const left = (intent.amount_paid ?? 0) - intent.total_amount_refunded;
  return left > 0 ? undefined : refundRefusal(intent.status);
}

function refundRefusal(status: IntentStatus): ApiError {
  return new ApiError(
    'INTENT_REFUND_INVALID_STATUS',
    `Only a PAID intent with something left to refund can be refunded; this one is ${status}` +
      (status === 'REFUNDED' ? ' in full.' : '.'),
  );
}

/**
 * Whether `action` may happen to `intent` at `now`, and where it leads (the machine's `decide`,
 * with `now` required: every caller names its clock). Every route, page, job and dashboard button
 * asks here; nothing else reads a status list or an expiry.
 */
export function decide(intent: IntentFacts, action: IntentAction, now: Date): IntentDecision {
  return intentMachine.decide(intent, action, now);
}

export function isAllowed(intent: IntentFacts, action: IntentAction, now: Date): boolean {
  return intentMachine.isAllowed(intent, action, now);
}

/** The status `action` leads to, or the catalogue's refusal of it. */
export function assertAllowed(intent: IntentFacts, action: IntentAction, now: Date): IntentStatus {
  return intentMachine.assert(intent, action, now);
}
