import type { Scope } from '../keys/scopes.js';

/**
 * Every event an endpoint can subscribe to (api.md 6.4), with the scope a key needs to subscribe
 * to it (decisions "Events and deliveries"): the one place event names are written. Emitters,
 * subscriptions, the Events API, the dashboard and the OpenAPI document derive from it.
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
  'payout.created': 'payouts:read',
  'payout.paid': 'payouts:read',
  'payout.failed': 'payouts:read',
  'payout.cancelled': 'payouts:read',
  // Not in api.md 6.4: a payment link took the last payment its limit allows (issue 50).
  'payment_link.completed': 'intents:read',
  // Not in api.md 6.4: a request pushed to a payer's wallet, and how it ended (issue 51).
  'payment_request.created': 'intents:read',
  'payment_request.approved': 'intents:read',
  'payment_request.declined': 'intents:read',
  'payment_request.expired': 'intents:read',
  'payment_request.cancelled': 'intents:read',
  'payment_request.failed': 'intents:read',
  // Not in api.md 6.4: a marketplace's sellers (issue 52).
  'seller.created': 'sellers:read',
  'seller.updated': 'sellers:read',
  // Not in api.md 6.4: a business's keys rolled, revoked, about to expire (issue 53, decision 084).
  'api_key.rolled': 'api_keys:write',
  'api_key.revoked': 'api_keys:write',
  'api_key.expiring': 'api_keys:write',
} as const satisfies Record<string, Scope>;

export type EventName = keyof typeof eventCatalog;

/** The subscribable names, in the catalogue's order. */
export const EVENT_NAMES = Object.keys(eventCatalog) as readonly EventName[];

export function isEventName(name: string): name is EventName {
  return Object.hasOwn(eventCatalog, name);
}

/**
 * Events about the webhook setup itself, which no endpoint subscribes to: `ping` goes to the
 * endpoint it tests, `endpoint.disabled` to every active endpoint of the business. Any key that
 * may read webhooks reads them in the Events API.
 */
export const WEBHOOK_NOTICES = ['ping', 'endpoint.disabled'] as const;

export type WebhookNotice = (typeof WEBHOOK_NOTICES)[number];

/** Every name the outbox writes. */
export type OutboxEventName = EventName | WebhookNotice;

/** Subscribable names of one family (`payment`, `order`, `product`, `payout`). */
export type EventNameOf<Family extends string> = Extract<EventName, `${Family}.${string}`>;

/**
 * The data schema of every event, by name: a registry each module fills for its own events
 * (`declare module '../events/catalog.js'` in its event-payloads.ts), so that the events floor
 * types payloads without importing the modules above it. A name no module registers has no data
 * type, and an event of it does not compile.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by declaration merging
export interface EventPayloads {}
