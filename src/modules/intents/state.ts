import type { IntentStatus } from '../../db/schema.js';

/**
 * The intent state machine of api.md 3.1 with decisions' FAILED rule: a FAILED intent stays
 * payable until it expires, and expiry cancels PENDING and FAILED intents alike.
 */
export const intentTransitions = {
  PENDING: ['PAID', 'CANCELLED', 'FAILED'],
  FAILED: ['PAID', 'CANCELLED', 'FAILED'],
  PAID: ['REFUNDED'],
  REFUNDED: ['REFUNDED'],
  CANCELLED: [],
} as const satisfies Record<IntentStatus, readonly IntentStatus[]>;

export function canTransition(from: IntentStatus, to: IntentStatus): boolean {
  return (intentTransitions[from] as readonly IntentStatus[]).includes(to);
}

/** Statuses in which a customer can still pay, and the intent holds its 6-digit code. */
export function isPayable(status: IntentStatus): boolean {
  return canTransition(status, 'PAID');
}
