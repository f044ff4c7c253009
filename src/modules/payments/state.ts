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
 * Why a payment failed. The first three also fail the intent (FAILED, `payment.failed`) as they
 * always have; the others are attempts that never reached the money (a wrong PIN, a locked or
 * unknown wallet), a payer who said no, one who never answered in time, or one whose yes came after
 * the intent could no longer be paid.
 */
export const PAYMENT_FAILURES = [
  'INSUFFICIENT_BALANCE',
  'SANDBOX_DECLINED',
  'SIMULATED_FAILURE',
  'INVALID_PIN',
  'WALLET_LOCKED',
  'WALLET_NOT_FOUND',
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

export const paymentActions = paymentMachine.actions;
