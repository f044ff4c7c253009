import { ApiError } from '../../http/errors.js';
import { defineStateMachine } from '../../lib/state-machine.js';
import type { EventNameOf } from '../events/catalog.js';
import { PAYOUT_STATUSES, type PayoutStatus } from '../../db/schema/payouts.js';

/** The columns' vocabularies live beside their table (db/schema/payouts.ts): the schema reads nothing above db. */
export {
  PAYOUT_FAILURE_CODES,
  PAYOUT_STATUSES,
  type PayoutFailureCode,
  type PayoutStatus,
} from '../../db/schema/payouts.js';

/** The status a payout is created with, and the only one a step starts from. */
export const PAYOUT_OPEN_STATUS = 'PENDING' satisfies PayoutStatus;

/** What a payout's refusal names. */
export interface PayoutFacts {
  reference: string;
  status: PayoutStatus;
}

/**
 * The payout state machine: every step starts from PENDING and ends it, once. The worker pays or
 * fails a payout; the merchant cancels it. Each step names its event.
 */
export const payoutMachine = defineStateMachine({
  statuses: PAYOUT_STATUSES,
  initial: PAYOUT_OPEN_STATUS,
  actions: {
    pay: { from: [PAYOUT_OPEN_STATUS], to: 'PAID', event: 'payout.paid' },
    fail: { from: [PAYOUT_OPEN_STATUS], to: 'FAILED', event: 'payout.failed' },
    cancel: { from: [PAYOUT_OPEN_STATUS], to: 'CANCELLED', event: 'payout.cancelled' },
  },
  refuse: (payout: PayoutFacts, step) => {
    const done = { pay: 'paid', fail: 'failed', cancel: 'cancelled' }[step];
    return new ApiError(
      'PAYOUT_NOT_PENDING',
      `Payout ${payout.reference} is ${payout.status}: only a PENDING payout can be ${done}.`,
    );
  },
});

/** Each step's row; its event is one of the catalogue's payout events. */
export const payoutSteps = payoutMachine.actions satisfies Record<string, { event: EventNameOf<'payout'> }>;

export type PayoutStep = keyof typeof payoutSteps;
