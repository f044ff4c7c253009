import { ApiError } from '../../http/errors.js';
import { defineStateMachine, type Decision } from '../../lib/state-machine.js';
import type { EventNameOf } from '../events/catalog.js';
import { ORDER_STATUSES, type OrderStatus } from '../../db/schema/orders.js';

/** The columns' vocabularies live beside their table (db/schema/orders.ts): the schema reads nothing above db. */
export { ORDER_STATUSES, type OrderStatus } from '../../db/schema/orders.js';

/**
 * The order state machine (decisions "Orders"), as the one definition every route asks: each
 * action, the statuses it starts from, where it leads (`null`: the status stays), the event it
 * sends and its guard: a refund needs a paid order with something left to refund. Anything else is
 * ORDER_INVALID_TRANSITION.
 */
export const orderMachine = defineStateMachine({
  statuses: ORDER_STATUSES,
  initial: 'NEW',
  actions: {
    accept: { from: ['NEW'], to: 'PREPARING', event: 'order.accepted' },
    ready: { from: ['PREPARING'], to: 'READY', event: 'order.ready' },
    pickup: { from: ['READY'], to: 'PICKED_UP', event: null },
    deliver: { from: ['PICKED_UP'], to: 'DELIVERED', event: 'order.delivered' },
    cancel: { from: ['NEW', 'PREPARING'], to: 'CANCELLED', event: 'order.cancelled' },
    // api.md 3.3: the customer cancels while the order is NEW; once accepted, only the merchant can.
    customerCancel: { from: ['NEW'], to: 'CANCELLED', event: 'order.cancelled' },
    refund: { from: ORDER_STATUSES, to: 'REFUNDED', event: 'order.refunded', guard: somethingLeftToRefund },
    modify: { from: ['NEW', 'PREPARING'], to: null, event: 'order.modified' },
  },
  refuse: (order: OrderFacts, action) =>
    invalidTransition(
      action === 'customerCancel'
        ? `The shop has accepted this order (${order.status}); ask the shop to cancel it.`
        : `Cannot ${action} an order that is ${order.status}.`,
    ),
});

/** Each action's row; its event is one of the catalogue's order events. */
export const orderActions = orderMachine.actions satisfies Record<string, { event: EventNameOf<'order'> | null }>;

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

export type OrderDecision = Decision<OrderStatus, ApiError>;

function invalidTransition(message: string): ApiError {
  return new ApiError('ORDER_INVALID_TRANSITION', message);
}

function somethingLeftToRefund(order: OrderFacts): ApiError | undefined {
  if (!order.paid) return invalidTransition('Only a paid order can be refunded.');
  const left = order.amount_paid - order.total_amount_refunded;
  return left > 0 ? undefined : invalidTransition('Nothing is left to refund on this order.');
}

/**
 * Whether `action` may happen to `order`, and the status it leads to. Every route, page and
 * button asks here.
 */
export function decideOrder(order: OrderFacts, action: OrderAction): OrderDecision {
  return orderMachine.decide(order, action);
}

export function isOrderActionAllowed(order: OrderFacts, action: OrderAction): boolean {
  return orderMachine.isAllowed(order, action);
}

/** The status `action` leads to, or ORDER_INVALID_TRANSITION with the guard's reason. */
export function assertOrderAction(order: OrderFacts, action: OrderAction): OrderStatus {
  return orderMachine.assert(order, action);
}
