import { Type, type TSchema } from 'typebox';
import { literalUnion, Nullable, Pagination, Timestamp } from '../../http/schemas.js';
import type { PaymentEventName } from '../intents/events.js';
import { INTENT_STATUSES } from '../intents/state.js';
import { Commission } from '../payments/schemas.js';
import type { PayoutEventName } from '../payouts/events.js';
import { PAYOUT_FAILURE_CODES, PAYOUT_STATUSES } from '../payouts/state.js';
import { EVENT_NAMES, WEBHOOK_NOTICES, type OutboxEventName } from './catalog.js';
import type { StoreEventName } from './store-events.js';

/**
 * The payloads of every event, as delivered (api.md 6.2 and 6.4, decisions "Events and
 * deliveries"): the OpenAPI `webhooks` section, the Events API and the SDK's event types come
 * from these. `sequence` counts the events of one object (intent, order, payout, product, endpoint) from 1.
 */
const Sequence = Type.Integer({
  minimum: 1,
  description:
    'Increases by one for each event of the same object (data.reference_number / referenceNumber / productId): a receiver that already handled a higher sequence of that object can drop this event as stale.',
});
const Centimes = Type.Integer({ description: 'integer centimes' });

export const PaymentEventData = Type.Object(
  {
    reference_number: Type.String(),
    short_code: Type.String(),
    amount: Nullable(Centimes),
    currency: Type.Literal('MRU'),
    status: literalUnion(INTENT_STATUSES),
    paid_at: Nullable(Timestamp),
    payer_phone: Nullable(Type.String({ description: 'masked: +222******78' })),
    metadata: Type.Record(Type.String(), Type.String()),
    commission: Commission,
    refund_id: Type.Optional(Type.String({ description: 'payment.refunded only' })),
    amount_refunded: Type.Optional(Type.Integer({ description: 'payment.refunded only: this refund' })),
    total_amount_refunded: Type.Optional(Type.Integer({ description: 'payment.refunded only: every refund' })),
  },
  { title: 'PaymentEventData' },
);

const OrderStatus = Type.String({ description: 'order status of api.md 3.3' });

const OrderNewData = Type.Object(
  {
    referenceNumber: Type.String(),
    shopId: Type.String(),
    shopName: Type.String(),
    status: OrderStatus,
    items: Type.Array(
      Type.Object({
        productId: Type.String(),
        name: Type.String(),
        quantity: Type.Integer(),
        price: Centimes,
        variant: Type.Optional(Type.Object({ label: Type.String(), priceAdjustment: Centimes })),
        options: Type.Optional(Type.Array(Type.Object({ name: Type.String(), priceAdjustment: Centimes }))),
      }),
    ),
    totalAmount: Centimes,
    customerPhone: Nullable(Type.String()),
    customerName: Type.String(),
    createdAt: Timestamp,
  },
  { title: 'OrderNewData' },
);

const OrderStatusData = Type.Object(
  { referenceNumber: Type.String(), status: OrderStatus, previousStatus: OrderStatus },
  { title: 'OrderStatusData' },
);

const OrderCancelledData = Type.Object(
  {
    referenceNumber: Type.String(),
    status: Type.Literal('CANCELLED'),
    previousStatus: OrderStatus,
    cancellationReason: Type.String(),
    amountRefunded: Type.Integer({ description: 'centimes given back to the customer by this cancel (0 if unpaid)' }),
  },
  { title: 'OrderCancelledData' },
);

const OrderModificationDeclinedData = Type.Object(
  {
    referenceNumber: Type.String(),
    totalAmount: Type.Integer({ description: 'centimes: the order total, unchanged' }),
    proposedTotalAmount: Centimes,
    proposedItems: Type.Array(Type.Object({ productId: Type.String(), name: Type.String(), quantity: Type.Integer() })),
  },
  { title: 'OrderModificationDeclinedData' },
);

const OrderRefundedData = Type.Object(
  {
    referenceNumber: Type.String(),
    status: Type.Literal('REFUNDED'),
    amountRefunded: Centimes,
    totalAmountRefunded: Centimes,
    totalAmount: Centimes,
  },
  { title: 'OrderRefundedData' },
);

const OrderModifiedData = Type.Object(
  {
    referenceNumber: Type.String(),
    previousTotalAmount: Centimes,
    newTotalAmount: Centimes,
    modifiedItems: Type.Array(Type.Object({ productId: Type.String(), name: Type.String(), quantity: Type.Integer() })),
  },
  { title: 'OrderModifiedData' },
);

const stockFields = {
  productId: Type.String(),
  externalId: Nullable(Type.String()),
  name: Type.String(),
  shopId: Type.String(),
  variantId: Type.Optional(Type.String({ description: 'when the stock of one variant crossed' })),
  variantLabel: Type.Optional(Type.String()),
};
const StockLowData = Type.Object(
  { ...stockFields, quantity: Type.Integer(), lowStockThreshold: Type.Integer() },
  { title: 'StockLowData' },
);
const StockOutData = Type.Object({ ...stockFields, quantity: Type.Literal(0) }, { title: 'StockOutData' });

const PingData = Type.Object({ endpointId: Type.String(), message: Type.String() }, { title: 'PingData' });
const EndpointDisabledData = Type.Object(
  {
    endpointId: Type.String(),
    url: Type.String(),
    disabled: Type.Boolean({ description: 'false: a warning before the endpoint is disabled at disableAt' }),
    reason: Type.Literal('FAILING'),
    failingSince: Nullable(Timestamp),
    disableAt: Timestamp,
  },
  { title: 'EndpointDisabledData' },
);

const PayoutEventData = Type.Object(
  {
    reference_number: Type.String({ description: 'PO-...' }),
    batch_id: Nullable(Type.String()),
    amount: Centimes,
    fee: Centimes,
    currency: Type.Literal('MRU'),
    status: literalUnion(PAYOUT_STATUSES),
    destination: Type.Object({
      type: Type.Literal('WALLET'),
      phone: Type.String({ description: 'masked: +222******78' }),
    }),
    description: Type.String(),
    metadata: Type.Record(Type.String(), Type.String()),
    failure_code: Nullable(literalUnion(PAYOUT_FAILURE_CODES)),
    failure_message: Nullable(Type.String()),
    created_at: Timestamp,
  },
  { title: 'PayoutEventData' },
);

/** The envelope of money events (payments and payouts): `created_at`, snake_case data. */
function moneyEnvelope(event: PaymentEventName | PayoutEventName, data: TSchema) {
  return Type.Object({
    id: Type.String({ description: 'evt_...: deduplicate by it' }),
    event: Type.Literal(event),
    created_at: Timestamp,
    sandbox: Type.Boolean(),
    data,
    sequence: Sequence,
  });
}

const payoutEnvelope = (event: PayoutEventName) => moneyEnvelope(event, PayoutEventData);
const paymentEnvelope = (event: PaymentEventName) => moneyEnvelope(event, PaymentEventData);

function storeEnvelope(event: StoreEventName, data: TSchema) {
  return Type.Object({
    id: Type.String({ description: 'evt_...: deduplicate by it' }),
    event: Type.Literal(event),
    timestamp: Timestamp,
    sandbox: Type.Boolean(),
    data,
    sequence: Sequence,
  });
}

/** Every event a receiver can get: the catalogue plus `ping` and `endpoint.disabled`. */
export const eventPayloads: Record<OutboxEventName, { when: string; schema: TSchema }> = {
  'payment.created': { when: 'An intent was created (status PENDING).', schema: paymentEnvelope('payment.created') },
  'payment.confirmed': {
    when: 'The payer confirmed with the wallet PIN (status PAID, commission filled).',
    schema: paymentEnvelope('payment.confirmed'),
  },
  'payment.cancelled': {
    when: 'The intent was cancelled (status CANCELLED).',
    schema: paymentEnvelope('payment.cancelled'),
  },
  'payment.expired': {
    when: 'The intent expired 24 hours after creation, unpaid (status CANCELLED).',
    schema: paymentEnvelope('payment.expired'),
  },
  'payment.refunded': {
    when: 'A refund (full or partial) was made (status REFUNDED).',
    schema: paymentEnvelope('payment.refunded'),
  },
  'payment.failed': { when: 'A payment attempt failed for good.', schema: paymentEnvelope('payment.failed') },
  'payout.created': {
    when: 'A payout was created and its amount and fee reserved (status PENDING).',
    schema: payoutEnvelope('payout.created'),
  },
  'payout.paid': { when: 'The payout reached its wallet (status PAID).', schema: payoutEnvelope('payout.paid') },
  'payout.failed': {
    when: 'The payout could not be paid (status FAILED, failure_code set); its amount and fee are back in the balance.',
    schema: payoutEnvelope('payout.failed'),
  },
  'payout.cancelled': {
    when: 'The merchant cancelled the payout while PENDING; its amount and fee are back in the balance.',
    schema: payoutEnvelope('payout.cancelled'),
  },
  'order.new': { when: 'A customer placed an order.', schema: storeEnvelope('order.new', OrderNewData) },
  'order.accepted': {
    when: 'The merchant accepted the order.',
    schema: storeEnvelope('order.accepted', OrderStatusData),
  },
  'order.ready': { when: 'The order is ready.', schema: storeEnvelope('order.ready', OrderStatusData) },
  'order.delivered': { when: 'The delivery was confirmed.', schema: storeEnvelope('order.delivered', OrderStatusData) },
  'order.cancelled': { when: 'The order was cancelled.', schema: storeEnvelope('order.cancelled', OrderCancelledData) },
  'order.refunded': { when: 'The order was refunded.', schema: storeEnvelope('order.refunded', OrderRefundedData) },
  'order.modification_declined': {
    when: 'The customer declined a proposed modification: the order is unchanged.',
    schema: storeEnvelope('order.modification_declined', OrderModificationDeclinedData),
  },
  'order.modified': {
    when: 'The customer accepted a proposed modification.',
    schema: storeEnvelope('order.modified', OrderModifiedData),
  },
  'product.stock_low': {
    when: 'Stock fell below the low-stock threshold.',
    schema: storeEnvelope('product.stock_low', StockLowData),
  },
  'product.stock_out': { when: 'Stock reached zero.', schema: storeEnvelope('product.stock_out', StockOutData) },
  ping: { when: 'POST /webhooks/endpoints/{id}/test (that endpoint only).', schema: storeEnvelope('ping', PingData) },
  'endpoint.disabled': {
    when: 'An endpoint has failed for days: a warning, then its disabling (every endpoint of the business gets it).',
    schema: storeEnvelope('endpoint.disabled', EndpointDisabledData),
  },
};

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
