import type { TSchema } from 'typebox';
import type { EventPayloads, OutboxEventName } from './events/catalog.js';
import { apiKeyEventPayloads } from './api-keys/event-payloads.js';
import { envelopeSchema } from './events/envelopes.js';
import { paymentEventPayloads } from './intents/event-payloads.js';
import { paymentLinkEventPayloads } from './links/event-payloads.js';
import { paymentRequestEventPayloads } from './requests/event-payloads.js';
import { orderEventPayloads } from './orders/event-payloads.js';
import { payoutEventPayloads } from './payouts/event-payloads.js';
import { productEventPayloads } from './products/event-payloads.js';
import { sellerEventPayloads } from './sellers/event-payloads.js';
import { webhookNoticePayloads } from './webhooks/event-payloads.js';

/**
 * Every event a receiver can get, as delivered (api.md 6.2 and 6.4, decisions "Events and
 * deliveries"): the OpenAPI `webhooks` section, the Events API and the SDK's event types come
 * from these. Each module declares its own events' data; this floor, above them all, gathers them
 * in the order the document lists them.
 */
const gathered = {
  ...paymentEventPayloads,
  ...paymentLinkEventPayloads,
  ...paymentRequestEventPayloads,
  ...payoutEventPayloads,
  ...sellerEventPayloads,
  ...orderEventPayloads,
  ...productEventPayloads,
  ...apiKeyEventPayloads,
  ...webhookNoticePayloads,
} satisfies Record<OutboxEventName, { when: string; data: TSchema }>;

// Every name the outbox writes has its data registered, and no other name does.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const registryCoversTheCatalogue: Same<keyof EventPayloads, OutboxEventName> = true;
void registryCoversTheCatalogue;

export const eventPayloads = {} as Record<OutboxEventName, { when: string; schema: TSchema }>;
for (const event of Object.keys(gathered) as OutboxEventName[]) {
  const { when, data } = gathered[event];
  eventPayloads[event] = { when, schema: envelopeSchema(event, data) };
}
