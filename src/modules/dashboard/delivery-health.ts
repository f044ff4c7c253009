import type { DeliveryStatus } from '../webhooks/delivery-state.js';

interface DeliveryState {
  status: DeliveryStatus;
  attemptCount: number;
  lastStatusCode: number | null;
}

/**
 * Whether a delivery's last attempt failed: ended FAILED or DEAD, or still PENDING (waiting for
 * its next attempt) after an attempt that got no 2xx answer. A merchant sees it red and may retry
 * it at once (the state table's `retry` starts from any status).
 */
export function isFailing(delivery: DeliveryState): boolean {
  if (delivery.status === 'FAILED' || delivery.status === 'DEAD') return true;
  if (delivery.status !== 'PENDING' || delivery.attemptCount === 0) return false;
  const answered = delivery.lastStatusCode !== null && delivery.lastStatusCode >= 200 && delivery.lastStatusCode < 300;
  return !answered;
}

/** The deliveries as a page draws them: each with whether it is failing. */
export function withHealth<T extends DeliveryState>(deliveries: T[]): (T & { failing: boolean })[] {
  return deliveries.map((delivery) => ({ ...delivery, failing: isFailing(delivery) }));
}
