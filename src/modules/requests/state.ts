import type { PaymentRequestStatus } from '../../db/schema.js';
import type { PaymentFailureCode } from '../payments/state.js';

/** A request ends once: how its waiting payment ended says which way. */
export function endedStatus(
  ended: { paid: true } | { paid: false; failure: PaymentFailureCode },
): Exclude<PaymentRequestStatus, 'PENDING'> {
  if (ended.paid) return 'APPROVED';
  switch (ended.failure) {
    case 'DECLINED':
      return 'DECLINED';
    case 'TIMED_OUT':
      return 'EXPIRED';
    case 'CANCELLED':
      return 'CANCELLED';
    default:
      // Approved, and the payment failed (too little balance, the intent no longer payable).
      return 'FAILED';
  }
}

/** The event each ending sends. */
export const REQUEST_EVENTS = {
  APPROVED: 'payment_request.approved',
  DECLINED: 'payment_request.declined',
  EXPIRED: 'payment_request.expired',
  CANCELLED: 'payment_request.cancelled',
  FAILED: 'payment_request.failed',
} as const satisfies Record<Exclude<PaymentRequestStatus, 'PENDING'>, string>;
