import type { OrderStatus } from '../../db/schema.js';
import { ApiError } from '../../http/errors.js';

export const ORDER_STATUSES = ['NEW', 'PREPARING', 'READY', 'PICKED_UP', 'DELIVERED', 'CANCELLED', 'REFUNDED'] as const;

/**
 * The order state machine (decisions "Orders"), as the one table every route asks: each action,
 * the statuses it starts from, where it leads (`null`: the status stays) and the event it sends.
 * A refund also needs a paid order with something left to refund; a modification keeps the status.
 * Anything else is ORDER_INVALID_TRANSITION.
 */
export const orderActions = {
  accept: { from: ['NEW'], to: 'PREPARING', event: 'order.accepted' },
  ready: { from: ['PREPARING'], to: 'READY', event: 'order.ready' },
  pickup: { from: ['READY'], to: 'PICKED_UP', event: null },
  deliver: { from: ['PICKED_UP'], to: 'DELIVERED', event: 'order.delivered' },
  cancel: { from: ['NEW', 'PREPARING'], to: 'CANCELLED', event: 'order.cancelled' },
  // api.md 3.3: the customer cancels while the order is NEW; once accepted, only the merchant can.
  customerCancel: { from: ['NEW'], to: 'CANCELLED', event: 'order.cancelled' },
  refund: { from: ORDER_STATUSES, to: 'REFUNDED', event: 'order.refunded' },
  modify: { from: ['NEW', 'PREPARING'], to: null, event: 'order.modified' },
} as const satisfies Record<
  string,
  { from: readonly OrderStatus[]; to: OrderStatus | null; event: `order.${string}` | null }
>;

export type OrderAction = keyof typeof orderActions;

/** The workflow steps a merchant takes by name (`POST .../{action}`). */
export type WorkflowAction = 'accept' | 'ready' | 'pickup' | 'deliver' | 'cancel';

export function canTransition(status: OrderStatus, action: OrderAction): boolean {
  return (orderActions[action].from as readonly OrderStatus[]).includes(status);
}

/** The status `action` leads to from `status`, or ORDER_INVALID_TRANSITION. */
export function assertTransition(status: OrderStatus, action: OrderAction): OrderStatus {
  if (!canTransition(status, action)) {
    throw new ApiError('ORDER_INVALID_TRANSITION', `Cannot ${action} an order that is ${status}.`);
  }
  return orderActions[action].to ?? status;
}
