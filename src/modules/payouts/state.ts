import { ApiError } from '../../http/errors.js';
import { defineStateMachine } from '../../lib/state-machine.js';
import type { EventNameOf } from '../events/catalog.js';

/** Every status of a payout: the one list the table type, schemas and filters derive from. */
export const PAYOUT_STATUSES = ['PENDING', 'PAID', 'FAILED', 'CANCELLED'] as const;

export type PayoutStatus = (typeof PAYOUT_STATUSES)[number];

/** Why a payout failed, as its `failureCode` says. */
export const PAYOUT_FAILURE_CODES = ['WALLET_NOT_FOUND', 'WALLET_LOCKED'] as const;

export type PayoutFailureCode = (typeof PAYOUT_FAILURE_CODES)[number];

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
