import type { DeliveryStatus } from '../webhooks/delivery-state.js';

interface DeliveryState {
  status: DeliveryStatus;
}

/**
 * Whether a delivery's last attempt failed or it was given up: FAILED (its retry scheduled) or
 * DEAD. A merchant sees it red and may retry it at once (a waiting one is due now, a DEAD one
 * starts a fresh schedule).
 */
export function isFailing(delivery: DeliveryState): boolean {
  return delivery.status === 'FAILED' || delivery.status === 'DEAD';
}

/** The deliveries as a page draws them: each with whether it is failing. */
export function withHealth<T extends DeliveryState>(deliveries: T[]): (T & { failing: boolean })[] {
  return deliveries.map((delivery) => ({ ...delivery, failing: isFailing(delivery) }));
}
