import { defineStateMachine } from '../../lib/state-machine.js';
import { PAYMENT_STATUSES, type PaymentStatus } from '../../db/schema/payments.js';

/** The columns' vocabularies live beside their table (db/schema/payments.ts): the schema reads nothing above db. */
export {
  INTENT_FAILURES,
  PAYMENT_FAILURES,
  PAYMENT_METHODS,
  PAYMENT_STATUSES,
  type IntentFailure,
  type PaymentFailureCode,
  type PaymentMethodName,
  type PaymentStatus,
} from '../../db/schema/payments.js';

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
