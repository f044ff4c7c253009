import { Type } from 'typebox';
import { Nullable, Pagination, Timestamp } from '../../http/schemas.js';
import { EVENT_NAMES, WEBHOOK_NOTICES } from './catalog.js';

/** An event as the Events API answers it. */
export const EventResource = Type.Object(
  {
    id: Type.String(),
    type: Type.String({ description: 'the event name' }),
    object: Type.String({
      description: 'what it is about: an intent, order or payout reference, a product or endpoint id',
    }),
    sequence: Nullable(
      Type.Integer({ description: "the payload's sequence; null for events written before it existed" }),
    ),
    sandbox: Type.Boolean(),
    createdAt: Timestamp,
    payload: Type.Unknown({ description: 'the event exactly as delivered to webhook endpoints' }),
  },
  { title: 'Event' },
);

export const EventParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });

export const EventsQuery = Type.Object(
  {
    type: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 100,
        description: `an event name (${[...EVENT_NAMES, ...WEBHOOK_NOTICES].join(', ')}), or a prefix ending in \`.*\` (payment.*)`,
      }),
    ),
    object: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    after: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: 'an event id: the events that follow it, oldest first (`page` must then be 1)',
      }),
    ),
    wait: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 30,
        description:
          'with `after`: when no event follows yet, hold the request up to this many seconds and answer as soon as one does (long polling)',
      }),
    ),
    ...Pagination,
  },
  { additionalProperties: false },
);
