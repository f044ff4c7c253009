import { Type } from 'typebox';
import { Nullable, Timestamp } from '../../http/schemas.js';
import { Centimes } from '../events/envelopes.js';

/** The data of order events (api.md 2.5 and 6.4): camelCase, in the store envelope. */
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

/** When each order event is sent, for the webhooks' documentation, in the catalogue's order. */
export const orderEventPayloads = {
  'order.new': { when: 'A customer placed an order.', data: OrderNewData },
  'order.accepted': { when: 'The merchant accepted the order.', data: OrderStatusData },
  'order.ready': { when: 'The order is ready.', data: OrderStatusData },
  'order.delivered': { when: 'The delivery was confirmed.', data: OrderStatusData },
  'order.cancelled': { when: 'The order was cancelled.', data: OrderCancelledData },
  'order.refunded': { when: 'The order was refunded.', data: OrderRefundedData },
  'order.modification_declined': {
    when: 'The customer declined a proposed modification: the order is unchanged.',
    data: OrderModificationDeclinedData,
  },
  'order.modified': { when: 'The customer accepted a proposed modification.', data: OrderModifiedData },
} as const;

type OrderEventPayloads = { [N in keyof typeof orderEventPayloads]: (typeof orderEventPayloads)[N]['data'] };

declare module '../events/catalog.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- merged into the registry: its members are inherited
  interface EventPayloads extends OrderEventPayloads {}
}
