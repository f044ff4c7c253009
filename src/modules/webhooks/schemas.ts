import { Type } from 'typebox';
import { DateFilter, Pagination, Timestamp, Nullable } from '../../http/schemas.js';

const Url = Type.String({ minLength: 1, maxLength: 2048, description: 'https URL of a public host' });
const EventNames = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
  minItems: 1,
  maxItems: 50,
  uniqueItems: true,
  description: 'Event names of api.md 6.4',
});
const DeliveryStatus = Type.Union([Type.Literal('PENDING'), Type.Literal('SUCCEEDED'), Type.Literal('DEAD')]);

export const EndpointParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });

export const CreateEndpointBody = Type.Object({ url: Url, events: EventNames }, { additionalProperties: false });

export const UpdateEndpointBody = Type.Object(
  { url: Type.Optional(Url), events: Type.Optional(EventNames), active: Type.Optional(Type.Boolean()) },
  { additionalProperties: false, minProperties: 1 },
);

export const ListQuery = Type.Object({ ...Pagination }, { additionalProperties: false });

export const DeliveriesQuery = Type.Object(
  {
    status: Type.Optional(DeliveryStatus),
    event: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    endpointId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    from: Type.Optional(DateFilter),
    to: Type.Optional(DateFilter),
    ...Pagination,
  },
  { additionalProperties: false },
);

export const NoBody = Type.Object({}, { additionalProperties: false });

export const Endpoint = Type.Object(
  {
    id: Type.String(),
    url: Type.String(),
    events: Type.Array(Type.String()),
    active: Type.Boolean(),
    sandbox: Type.Boolean(),
    secret: Type.Optional(Type.String({ description: '64 hex characters; only in the create and rotate answers' })),
    previousSecretExpiresAt: Nullable(Timestamp),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'WebhookEndpoint' },
);

export const Delivery = Type.Object(
  {
    id: Type.String(),
    eventId: Type.String(),
    event: Type.String(),
    endpointId: Type.String(),
    url: Type.String(),
    status: DeliveryStatus,
    attemptCount: Type.Integer({ description: 'attempts in the current schedule (8 at most)' }),
    nextAttemptAt: Nullable(Timestamp),
    lastStatusCode: Nullable(Type.Integer()),
    lastError: Nullable(Type.String()),
    sandbox: Type.Boolean(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    completedAt: Nullable(Timestamp),
  },
  { title: 'WebhookDelivery' },
);

export const DeliveryDetail = Type.Object(
  {
    ...Delivery.properties,
    attempts: Type.Array(
      Type.Object({
        attempt: Type.Integer(),
        at: Timestamp,
        statusCode: Nullable(Type.Integer()),
        durationMs: Nullable(Type.Integer()),
        error: Nullable(Type.String()),
        responseBodySnippet: Nullable(Type.String({ description: 'first 1 KB of the answer' })),
      }),
    ),
    payload: Type.Unknown({ description: 'the event exactly as delivered' }),
  },
  { title: 'WebhookDeliveryDetail' },
);

export const Deleted = Type.Object({ deleted: Type.Literal(true) });
