import type { EventNameOf } from '../events/catalog.js';

/** Every status of a payout: the one list the table type, schemas and filters derive from. */
export const PAYOUT_STATUSES = ['PENDING', 'PAID', 'FAILED', 'CANCELLED'] as const;

export type PayoutStatus = (typeof PAYOUT_STATUSES)[number];

/** Why a payout failed, as its `failureCode` says. */
export const PAYOUT_FAILURE_CODES = ['WALLET_NOT_FOUND', 'WALLET_LOCKED'] as const;

export type PayoutFailureCode = (typeof PAYOUT_FAILURE_CODES)[number];

/**
 * The payout state machine: every step starts from PENDING and ends it, once. The worker pays or
 * fails a payout; the merchant cancels it. Each step names its event.
 */
export const payoutSteps = {
  pay: { to: 'PAID', event: 'payout.paid' },
  fail: { to: 'FAILED', event: 'payout.failed' },
  cancel: { to: 'CANCELLED', event: 'payout.cancelled' },
} as const satisfies Record<string, { to: PayoutStatus; event: EventNameOf<'payout'> }>;

export type PayoutStep = keyof typeof payoutSteps;

/** The only status a step starts from. */
export const PAYOUT_OPEN_STATUS = 'PENDING' satisfies PayoutStatus;
