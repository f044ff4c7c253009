import { Type, type TSchema } from 'typebox';
import { Timestamp } from '../../http/schemas.js';
import type { OutboxEventName } from './catalog.js';

/**
 * The two envelopes events are delivered in (api.md 6.2, decisions "Events and deliveries"), as
 * schemas: money events (payments, payment links and requests, payouts, sellers) carry `created_at` and snake_case data, store events
 * (orders, products, the webhook notices) `timestamp` and camelCase data. `sequence` counts the
 * events of one object (intent, order, payout, seller, product, endpoint) from 1.
 */
const Sequence = Type.Integer({
  minimum: 1,
  description:
    'Increases by one for each event of the same object (data.reference_number / referenceNumber / productId): a receiver that already handled a higher sequence of that object can drop this event as stale.',
});

export const Centimes = Type.Integer({ description: 'integer centimes' });

/** The families whose events are money: they use the money envelope. */
const MONEY_FAMILIES = ['payment', 'payment_link', 'payment_request', 'payout', 'seller'] as const;

export function isMoneyEvent(event: OutboxEventName): boolean {
  return MONEY_FAMILIES.some((family) => event.startsWith(`${family}.`));
}

/** The envelope of one event around its data schema, as a receiver gets it. */
export function envelopeSchema(event: OutboxEventName, data: TSchema) {
  return Type.Object({
    id: Type.String({ description: 'evt_...: deduplicate by it' }),
    event: Type.Literal(event),
    ...(isMoneyEvent(event) ? { created_at: Timestamp } : { timestamp: Timestamp }),
    sandbox: Type.Boolean(),
    data,
    sequence: Sequence,
  });
}
