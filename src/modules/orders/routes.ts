import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Executor } from '../../db/transaction.js';
import { requireAuth } from '../../http/context.js';
import { API_WRITE, write } from '../../http/idempotency/plugin.js';
import { recordRefund } from '../audit/acts.js';
import {
  DateFilter,
  Envelope,
  literalUnion,
  Paginated,
  Pagination,
  pageOf,
  pageWindow,
  parseDateFilter,
  Timestamp,
  Nullable,
} from '../../http/schemas.js';
import { E164_PATTERN } from '../../lib/phone.js';
import { payBaseUrl } from '../intents/routes.js';
import { ListPaymentsQuery, Payment } from '../payments/schemas.js';
import { orderActionDocs, orderDocs } from './docs.js';
import * as orders from './service.js';
import { FORWARD_ACTIONS, ORDER_STATUSES } from './state.js';

const tags = ['Orders'];
const Status = literalUnion(ORDER_STATUSES);
export const RequestedItems = Type.Array(
  Type.Object(
    {
      productId: Type.String({ minLength: 1, maxLength: 256, description: 'product id or externalId' }),
      quantity: Type.Integer({ minimum: 1, maximum: 1000 }),
      variantId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
      optionIds: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 50 })),
      price: Type.Optional(
        Type.Integer({
          minimum: 0,
          maximum: 100_000_000,
          description: 'unit price in centimes, for an isFlexiblePrice product only; at least its catalog price',
        }),
      ),
    },
    { additionalProperties: false },
  ),
  { minItems: 1, maxItems: 100 },
);
export const Item = Type.Object({
  productId: Type.String(),
  name: Type.String(),
  quantity: Type.Integer(),
  price: Type.Integer({ description: 'the product price at order time, centimes' }),
  variant: Type.Optional(Type.Object({ _id: Type.String(), label: Type.String(), priceAdjustment: Type.Integer() })),
  options: Type.Optional(
    Type.Array(Type.Object({ _id: Type.String(), name: Type.String(), priceAdjustment: Type.Integer() })),
  ),
});
const Adjustment = Type.Object({
  id: Type.String(),
  amount: Type.Integer({ description: 'centimes: positive charged to the wallet, negative refunded to it' }),
  createdAt: Timestamp,
  ledgerTransactionId: Type.String(),
});
export const OrderPaymentSchema = Type.Object(
  {
    id: Type.String({ description: 'the payment record, prefix OP-' }),
    amountPaid: Type.Integer({ description: 'paid for the goods, net of accepted modifications, centimes' }),
    payerFee: Type.Integer({ description: 'charged to the customer on top, centimes' }),
    method: Type.Literal('WALLET'),
    payerPhone: Type.String(),
    paidAt: Timestamp,
    ledgerTransactionId: Type.String(),
    adjustments: Type.Array(Adjustment),
  },
  { title: 'OrderPayment' },
);
export const OrderRefundSchema = Type.Object({
  id: Type.String(),
  amount: Type.Integer(),
  reason: Nullable(Type.String()),
  createdAt: Timestamp,
  ledgerTransactionId: Nullable(Type.String()),
});
const OrderCommission = Type.Object(
  {
    provider_ttc: Type.Integer({ description: 'the provider fee the merchant pays, net of returns' }),
    payer_ttc: Type.Integer({ description: 'the payer fee (never returned)' }),
    tof: Type.Integer(),
    tte: Type.Integer(),
    total_revenue: Type.Integer(),
    revenue_model: Type.Union([Type.Literal('COMMISSION'), Type.Literal('MARGIN')], {
      description: 'MARGIN: the provider fee is the margin rate on price less cost basis, for products that have one',
    }),
  },
  { title: 'OrderCommission', description: 'What the platform holds of the fees of the order, in centimes' },
);
/** What the order's payment gave one seller of its lines' products (decision 081), as an intent's split shows it. */
const OrderSplitShare = Type.Object({
  seller: Type.String(),
  gross: Type.Integer({ description: "the seller's lines less its commissionBps, in centimes" }),
  fee: Type.Integer({ description: 'its part of the provider fee: 0, the business bears it' }),
  net: Type.Integer({ description: 'what its balance received' }),
});

const Order = Type.Object(
  {
    referenceNumber: Type.String(),
    shopId: Type.String(),
    shopName: Type.String(),
    status: Status,
    items: Type.Array(Item),
    totalAmount: Type.Integer(),
    currency: Type.Literal('MRU'),
    customerName: Type.String(),
    customerPhone: Type.String(),
    paid: Type.Boolean(),
    payment: Nullable(OrderPaymentSchema),
    commission: Nullable(OrderCommission),
    splits: Type.Optional(
      Type.Array(OrderSplitShare, {
        description: "Only on an order whose lines' products belong to sellers: each seller's gross, fee and net",
      }),
    ),
    totalAmountRefunded: Type.Integer(),
    refunds: Type.Array(OrderRefundSchema),
    customerUrl: Type.String({ description: "the customer's order page, an unguessable link" }),
    cancellationReason: Nullable(Type.String()),
    history: Type.Array(Type.Object({ status: Status, previousStatus: Nullable(Status), at: Timestamp })),
    proposedModification: Nullable(
      Type.Object({ items: Type.Array(Item), totalAmount: Type.Integer(), proposedAt: Timestamp }),
    ),
    sandbox: Type.Boolean(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'Order' },
);
const Params = Type.Object({ referenceNumber: Type.String({ minLength: 1, maxLength: 64 }) });
const NoBody = Type.Object({}, { additionalProperties: false });

function caller(request: FastifyRequest): orders.Caller {
  const auth = requireAuth(request.auth);
  return { businessId: auth.businessId, environment: auth.environment };
}

export const orderRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db, config } = app.services;
  // Orders carry customers' names and phones: secret keys only, reads included.
  const read = { auth: 'secret', scope: 'store.orders:read' } as const;
  const writeRoute = { auth: 'secret', scope: 'store.orders:write', write: API_WRITE } as const;
  // Inside a transaction, read with its executor: PGlite runs one transaction at a time. A caller
  // that read the shop already gives its name.
  const view = async (request: FastifyRequest, order: orders.OrderRow, from: Executor | string = db) =>
    orders.orderView(
      order,
      typeof from === 'string' ? from : ((await orders.shopNames(from, [order.shop_id])).get(order.shop_id) ?? ''),
      payBaseUrl(request),
    );
  /** The answer for an order a write changed: its shop's name came back with it. */
  const changedView = (request: FastifyRequest, order: orders.ChangedOrder) =>
    orders.orderView(order, order.shop_name, payBaseUrl(request));
  const at = (request: FastifyRequest & { params: { referenceNumber: string } }) => ({
    caller: caller(request),
    referenceNumber: request.params.referenceNumber,
  });

  app.post(
    '/store/orders/simulate',
    {
      config: { ...writeRoute, sandboxOnly: true, ...orderDocs.simulateOrder.config },
      schema: {
        ...orderDocs.simulateOrder.schema,
        tags,
        body: Type.Object(
          {
            items: RequestedItems,
            customerName: Type.String({ minLength: 1, maxLength: 200 }),
            customerPhone: Type.Optional(Type.String({ pattern: E164_PATTERN, description: 'E.164' })),
          },
          { additionalProperties: false },
        ),
        response: { 201: Envelope(Order) },
      },
    },
    async (request, reply) =>
      write(request, reply, 201, async (trx) => {
        const placed = await orders.simulateOrder(trx, caller(request), request.body, {
          maxAmount: config.intentMaxAmount,
        });
        return view(request, placed.order, placed.shop.name);
      }),
  );

  app.get(
    '/store/orders',
    {
      config: read,
      schema: {
        ...orderDocs.listOrders.schema,
        tags,
        querystring: Type.Object(
          {
            status: Type.Optional(Status),
            from: Type.Optional(DateFilter),
            to: Type.Optional(DateFilter),
            ...Pagination,
          },
          { additionalProperties: false },
        ),
        response: { 200: Envelope(Paginated(Order)) },
      },
    },
    async (request) => {
      const { page, limit, offset } = pageWindow(request.query);
      const from = parseDateFilter(request.query.from, 'from');
      const to = parseDateFilter(request.query.to, 'to');
      const result = await orders.listOrders(db, caller(request), {
        status: request.query.status,
        from,
        to,
        limit,
        offset,
      });
      const names = await orders.shopNames(
        db,
        result.items.map((order) => order.shop_id),
      );
      const payBase = payBaseUrl(request);
      return {
        success: true as const,
        data: {
          items: result.items.map((order) => orders.orderView(order, names.get(order.shop_id) ?? '', payBase)),
          page,
          limit,
          total: result.total,
          hasMore: offset + result.items.length < result.total,
        },
      };
    },
  );

  app.get(
    '/store/orders/:referenceNumber',
    {
      config: { ...read, ...orderDocs.retrieveOrder.config },
      schema: { ...orderDocs.retrieveOrder.schema, tags, params: Params, response: { 200: Envelope(Order) } },
    },
    async (request) => ({
      success: true as const,
      data: await view(request, await orders.getOrder(db, at(request))),
    }),
  );

  app.get(
    '/store/orders/:referenceNumber/payments',
    {
      config: { ...read, ...orderDocs.listOrderPayments.config },
      schema: {
        ...orderDocs.listOrderPayments.schema,
        tags,
        params: Params,
        querystring: ListPaymentsQuery,
        response: { 200: Envelope(Paginated(Payment)) },
      },
    },
    async (request) => {
      const window = pageWindow(request.query);
      return { success: true as const, data: pageOf(window, await orders.listOrderPayments(db, at(request), window)) };
    },
  );

  for (const action of FORWARD_ACTIONS) {
    const docs = orderActionDocs(action);
    app.post(
      `/store/orders/:referenceNumber/${action}`,
      {
        config: { ...writeRoute, ...docs.config },
        schema: {
          ...docs.schema,
          tags,
          params: Params,
          body: NoBody,
          response: { 200: Envelope(Order) },
        },
      },
      async (request, reply) =>
        write(request, reply, 200, async (trx) =>
          changedView(request, await orders.transitionOrder(trx, at(request), action)),
        ),
    );
  }

  app.post(
    '/store/orders/:referenceNumber/cancel',
    {
      config: { ...writeRoute, ...orderDocs.cancelOrder.config },
      schema: {
        ...orderDocs.cancelOrder.schema,
        tags,
        params: Params,
        body: Type.Object({ reason: Type.String({ minLength: 1, maxLength: 500 }) }, { additionalProperties: false }),
        response: { 200: Envelope(Order) },
      },
    },
    async (request, reply) =>
      write(request, reply, 200, async (trx) =>
        changedView(request, await orders.transitionOrder(trx, at(request), 'cancel', request.body.reason)),
      ),
  );

  app.post(
    '/store/orders/:referenceNumber/refund',
    {
      config: { ...writeRoute, ...orderDocs.refundOrder.config },
      schema: {
        ...orderDocs.refundOrder.schema,
        tags,
        params: Params,
        body: Type.Object(
          {
            amount: Type.Optional(Type.Integer({ description: 'centimes; default: everything left to refund' })),
            reason: Type.Optional(Type.String({ maxLength: 500 })),
          },
          { additionalProperties: false },
        ),
        response: { 200: Envelope(Order) },
      },
    },
    async (request, reply) =>
      write(request, reply, 200, async (trx) => {
        const refunded = await orders.refundOrder(trx, at(request), request.body);
        await recordRefund(trx, request, { kind: 'order', id: refunded.reference_number }, refunded.refunds);
        return changedView(request, refunded);
      }),
  );

  app.post(
    '/store/orders/:referenceNumber/propose-modification',
    {
      config: { ...writeRoute, ...orderDocs.proposeOrderModification.config },
      schema: {
        ...orderDocs.proposeOrderModification.schema,
        tags,
        params: Params,
        body: Type.Object({ items: RequestedItems }, { additionalProperties: false }),
        response: { 200: Envelope(Order) },
      },
    },
    async (request, reply) =>
      write(request, reply, 200, async (trx) =>
        changedView(
          request,
          await orders.proposeModification(trx, at(request), request.body.items, {
            maxAmount: config.intentMaxAmount,
          }),
        ),
      ),
  );

  app.post(
    '/store/orders/:referenceNumber/modification/accept',
    {
      config: { ...writeRoute, sandboxOnly: true, ...orderDocs.acceptOrderModification.config },
      schema: {
        ...orderDocs.acceptOrderModification.schema,
        tags,
        params: Params,
        body: NoBody,
        response: { 200: Envelope(Order) },
      },
    },
    async (request, reply) =>
      write(request, reply, 200, async (trx) =>
        changedView(request, await orders.acceptModification(trx, at(request))),
      ),
  );

  app.post(
    '/store/orders/:referenceNumber/modification/decline',
    {
      config: { ...writeRoute, sandboxOnly: true, ...orderDocs.declineOrderModification.config },
      schema: {
        ...orderDocs.declineOrderModification.schema,
        tags,
        params: Params,
        body: NoBody,
        response: { 200: Envelope(Order) },
      },
    },
    async (request, reply) =>
      write(request, reply, 200, async (trx) =>
        changedView(request, await orders.declineModification(trx, at(request))),
      ),
  );
};
