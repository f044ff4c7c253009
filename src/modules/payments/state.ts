import { defineStateMachine } from '../../lib/state-machine.js';

/** Every status of a payment (one attempt to pay): the one list the table type, schemas and views derive from. */
export const PAYMENT_STATUSES = ['PROCESSING', 'SUCCEEDED', 'FAILED'] as const;

export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

/**
 * How a payment is made: the wallet and its PIN typed on one of our pages (checkout, pay-by-code,
 * storefront), or the sandbox's simulation (a test key's `simulate`).
 */
export const PAYMENT_METHODS = ['WALLET_PIN', 'SANDBOX'] as const;

export type PaymentMethodName = (typeof PAYMENT_METHODS)[number];

/**
 * The failures that fail the intent too (FAILED, `payment.failed`, its `last_failure`), as they
 * always have: the money was asked for and not given.
 */
export const INTENT_FAILURES = ['INSUFFICIENT_BALANCE', 'SANDBOX_DECLINED', 'SIMULATED_FAILURE'] as const;

export type IntentFailure = (typeof INTENT_FAILURES)[number];

/**
 * Why a payment failed: the intent's failures, then those of an attempt that never reached the
 * money (a wrong PIN, a locked wallet), a payer who said no, one who never answered in
 * time, or one whose yes came after the intent could no longer be paid.
 */
export const PAYMENT_FAILURES = [
  ...INTENT_FAILURES,
  'INVALID_PIN',
  'WALLET_LOCKED',
  'DECLINED',
  'TIMED_OUT',
  'NOT_PAYABLE',
] as const;

export type PaymentFailureCode = (typeof PAYMENT_FAILURES)[number];

/**
 * A payment's state machine: it is inserted PROCESSING (a payer who answers later), SUCCEEDED or
 * FAILED (an answer at once); one that waits ends once, by a later transaction. Only the worker and
 * the intent's own code end a payment, so a refusal is a plain error.
 */
export const paymentMachine = defineStateMachine({
  statuses: PAYMENT_STATUSES,
  initial: 'PROCESSING',
  actions: {
    succeed: { from: ['PROCESSING'], to: 'SUCCEEDED' },
    fail: { from: ['PROCESSING'], to: 'FAILED' },
  },
  refuse: (payment: { status: PaymentStatus }, action) => new Error(`a ${payment.status} payment cannot ${action}`),
});
