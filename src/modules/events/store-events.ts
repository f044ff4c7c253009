import type { Environment } from '../../db/schema.js';
import type { EventNameOf, OutboxEventName } from './catalog.js';
import { newEventId, type EventRecord } from './outbox.js';

/** What a store event may be called: the catalogue's order and product events, and the webhook notices. */
export type StoreEventName = Exclude<OutboxEventName, EventNameOf<'payment'>>;

/**
 * A store event (orders, products): `{ id, event, timestamp, sandbox, data }` with camelCase data
 * (api.md 6.2, decisions "Events and deliveries"). The body text is built once, here.
 */
export function storeEvent(
  event: StoreEventName,
  scope: { businessId: string; environment: Environment },
  subject: string,
  data: Record<string, unknown>,
  createdAt = new Date(),
): EventRecord {
  const id = newEventId();
  return {
    id,
    businessId: scope.businessId,
    environment: scope.environment,
    event,
    subject,
    body: JSON.stringify({
      id,
      event,
      timestamp: createdAt.toISOString(),
      sandbox: scope.environment === 'test',
      data,
    }),
    createdAt,
  };
}
