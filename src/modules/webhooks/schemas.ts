import { Type } from 'typebox';
import { DateFilter, literalUnion, Pagination, Timestamp, Nullable } from '../../http/schemas.js';
import { EVENT_NAMES } from '../events/catalog.js';
import { DEAD_REASONS, DELIVERY_STATUSES } from './delivery-state.js';
import { errorClasses } from './sender.js';
import { outcomes } from './stats.js';

const Url = Type.String({ minLength: 1, maxLength: 2048, description: 'https URL of a public host' });
const EventNames = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
  minItems: 1,
  maxItems: 50,
  uniqueItems: true,
  description: `Event names of api.md 6.4: ${EVENT_NAMES.join(', ')}`,
});
const DeliveryStatus = literalUnion(DELIVERY_STATUSES, {
  description:
    'PENDING: no attempt yet; FAILED: the last attempt failed and the next is scheduled (nextAttemptAt); ' +
    'SUCCEEDED; DEAD: no attempt will follow (deadReason says why; retry or recover brings it back)',
});
const DeadReason = literalUnion(DEAD_REASONS, {
  description:
    'MAX_ATTEMPTS: its 8 attempts failed; ENDPOINT_DISABLED: its endpoint was disabled (by hand or for failing) ' +
    'while it waited; ENDPOINT_DELETED: its endpoint was deleted while it waited',
});
const SignatureScheme = Type.Union([Type.Literal('commerce'), Type.Literal('standard')], {
  description:
    'commerce (default): X-Commerce-Signature of api.md 6.3, 64-hex secret; standard: Standard Webhooks ' +
    'headers webhook-id, webhook-timestamp, webhook-signature, whsec_ secret. Set at creation.',
});
const MaxPerSecond = Type.Integer({
  minimum: 1,
  maximum: 1000,
  description: 'at most this many attempts start per second, over every worker; null or absent: no limit',
});
const ErrorClass = Type.Enum(errorClasses);
const HeaderMap = Type.Record(Type.String(), Type.String());

export const EndpointParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });

export const CreateEndpointBody = Type.Object(
  {
    url: Url,
    events: EventNames,
    signatureScheme: Type.Optional(SignatureScheme),
    maxPerSecond: Type.Optional(Nullable(MaxPerSecond)),
  },
  { additionalProperties: false },
);

export const UpdateEndpointBody = Type.Object(
  {
    url: Type.Optional(Url),
    events: Type.Optional(EventNames),
    active: Type.Optional(
      Type.Boolean({ description: 'true re-enables a disabled endpoint: new events only (recover the rest)' }),
    ),
    maxPerSecond: Type.Optional(Nullable(MaxPerSecond)),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const RecoverBody = Type.Object(
  {
    since: DateFilter,
    until: Type.Optional(DateFilter),
  },
  { additionalProperties: false },
);

export const Recovered = Type.Object(
  {
    endpointId: Type.String(),
    since: Timestamp,
    until: Timestamp,
    recovered: Type.Integer({ description: 'DEAD deliveries queued again (PENDING) by this call' }),
    remaining: Type.Integer({ description: 'DEAD deliveries left in the window: call again for them' }),
  },
  { title: 'WebhookRecovery' },
);

const WindowStats = Type.Object({
  attempts: Type.Integer(),
  succeeded: Type.Integer(),
  failed: Type.Integer(),
  successRate: Nullable(Type.Number({ minimum: 0, maximum: 1 })),
  latencyMs: Nullable(
    Type.Object(
      { p50: Type.Integer(), p95: Type.Integer() },
      { description: 'estimated from latency buckets (within one bucket width)' },
    ),
  ),
  byOutcome: Type.Object(Object.fromEntries(outcomes.map((name) => [name, Type.Integer()]))),
});

export const EndpointStats = Type.Object(
  {
    endpointId: Type.String(),
    backlog: Type.Integer({ description: 'deliveries waiting for an attempt' }),
    failingSince: Nullable(Timestamp),
    lastError: Nullable(
      Type.Object({
        at: Timestamp,
        errorClass: Type.String(),
        message: Type.String(),
        statusCode: Nullable(Type.Integer()),
      }),
    ),
    last24h: WindowStats,
    last7d: WindowStats,
  },
  { title: 'WebhookEndpointStats' },
);

export const ListQuery = Type.Object({ ...Pagination }, { additionalProperties: false });

export const DeliveriesQuery = Type.Object(
  {
    status: Type.Optional(DeliveryStatus),
    event: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    endpointId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    eventId: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, description: 'the envelope id (evt_...) a receiver saw' }),
    ),
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
    signatureScheme: SignatureScheme,
    maxPerSecond: Nullable(MaxPerSecond),
    failingSince: Nullable(Timestamp),
    disabledAt: Nullable(Timestamp),
    disabledReason: Nullable(
      Type.Union([Type.Literal('FAILING'), Type.Literal('MANUAL')], {
        description: 'FAILING: every attempt failed for the configured period (5 days by default)',
      }),
    ),
    secret: Type.Optional(
      Type.String({
        description:
          '64 hex characters (commerce) or whsec_ + base64 (standard); only in the create and rotate answers',
      }),
    ),
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
    deadReason: Nullable(DeadReason),
    attemptCount: Type.Integer({ description: 'attempts in the current schedule (8 at most)' }),
    nextAttemptAt: Nullable(
      Type.String({ format: 'date-time', description: 'when the next attempt is due: set while PENDING or FAILED' }),
    ),
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
        errorClass: Nullable(ErrorClass),
        responseBodySnippet: Nullable(Type.String({ description: 'first 1 KB of the answer' })),
        request: Nullable(Type.Object({ headers: HeaderMap }, { description: 'what was sent (the body is payload)' })),
        response: Nullable(
          Type.Object({
            statusCode: Type.Integer(),
            headers: HeaderMap,
            body: Type.String({ description: 'first 4 KB of the answer' }),
          }),
        ),
      }),
    ),
    payload: Type.Unknown({ description: 'the event exactly as delivered' }),
  },
  { title: 'WebhookDeliveryDetail' },
);

export const Deleted = Type.Object({ deleted: Type.Literal(true) });
