import type { Scope } from '../keys/scopes.js';

/**
 * Every event an endpoint can subscribe to (api.md 6.4), with the scope a key needs to subscribe
 * to it (decisions "Events and deliveries"). `ping` is not subscribable: it goes to one endpoint
 * when asked for.
 */
export const eventCatalog = {
  'payment.created': 'intents:read',
  'payment.confirmed': 'intents:read',
  'payment.cancelled': 'intents:read',
  'payment.expired': 'intents:read',
  'payment.refunded': 'intents:read',
  'payment.failed': 'intents:read',
  'order.new': 'store.orders:read',
  'order.accepted': 'store.orders:read',
  'order.ready': 'store.orders:read',
  'order.delivered': 'store.orders:read',
  'order.cancelled': 'store.orders:read',
  'order.refunded': 'store.orders:read',
  'order.modified': 'store.orders:read',
  // Not in api.md 6.4: the customer said no to a proposed modification (decisions: issue 11).
  'order.modification_declined': 'store.orders:read',
  'product.stock_low': 'store.products:read',
  'product.stock_out': 'store.products:read',
} as const satisfies Record<string, Scope>;

export type EventName = keyof typeof eventCatalog;

export function isEventName(name: string): name is EventName {
  return Object.hasOwn(eventCatalog, name);
}
