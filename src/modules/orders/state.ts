import { ApiError } from '../../http/errors.js';
import type { EventNameOf } from '../events/catalog.js';

/** Every status of an order: the one list the table type, schemas and filters derive from. */
export const ORDER_STATUSES = ['NEW', 'PREPARING', 'READY', 'PICKED_UP', 'DELIVERED', 'CANCELLED', 'REFUNDED'] as const;

export type OrderStatus = (typeof ORDER_STATUSES)[number];

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
  { from: readonly OrderStatus[]; to: OrderStatus | null; event: EventNameOf<'order'> | null }
>;

export type OrderAction = keyof typeof orderActions;

/** The steps forward a merchant takes by name (`POST .../{action}`), with no body. */
export const FORWARD_ACTIONS = ['accept', 'ready', 'pickup', 'deliver'] as const;

/** The workflow steps a merchant takes by name: forward, or `cancel` with a reason. */
export type WorkflowAction = (typeof FORWARD_ACTIONS)[number] | 'cancel';

/** What the guards read of an order. */
export interface OrderFacts {
  status: OrderStatus;
  paid: boolean;
  amount_paid: number;
  total_amount_refunded: number;
}

export type OrderDecision = { allowed: true; to: OrderStatus } | { allowed: false; refusal: ApiError };

/**
 * Whether `action` may happen to `order`, and the status it leads to: the table's statuses, and
 * a refund's guard (a paid order with something left to refund). Every route, page and button
 * asks here.
 */
export function decideOrder(order: OrderFacts, action: OrderAction): OrderDecision {
  const refuse = (message: string) => ({
    allowed: false as const,
    refusal: new ApiError('ORDER_INVALID_TRANSITION', message),
  });
  if (!(orderActions[action].from as readonly OrderStatus[]).includes(order.status)) {
    return refuse(
      action === 'customerCancel'
        ? `The shop has accepted this order (${order.status}); ask the shop to cancel it.`
        : `Cannot ${action} an order that is ${order.status}.`,
    );
  }
  if (action === 'refund') {
    if (!order.paid) return refuse('Only a paid order can be refunded.');
    if (order.amount_paid - order.total_amount_refunded <= 0) return refuse('Nothing is left to refund on this order.');
  }
  return { allowed: true, to: orderActions[action].to ?? order.status };
}

export function isOrderActionAllowed(order: OrderFacts, action: OrderAction): boolean {
  return decideOrder(order, action).allowed;
}

/** The status `action` leads to, or ORDER_INVALID_TRANSITION with the guard's reason. */
export function assertOrderAction(order: OrderFacts, action: OrderAction): OrderStatus {
  const decision = decideOrder(order, action);
  if (!decision.allowed) throw decision.refusal;
  return decision.to;
}
