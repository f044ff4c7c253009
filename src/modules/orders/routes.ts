import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Executor } from '../../db/transaction.js';
import { requireAuth } from '../../http/context.js';
import { respondInTransaction } from '../../http/idempotency.js';
import {
  DateFilter,
  Envelope,
  Paginated,
  Pagination,
  pageWindow,
  parseDateFilter,
  Timestamp,
  Nullable,
} from '../../http/schemas.js';
import { E164_PATTERN } from '../../lib/phone.js';
import * as orders from './service.js';

const tags = ['Orders'];
const Status = Type.Union([
  Type.Literal('NEW'),
  Type.Literal('PREPARING'),
  Type.Literal('READY'),
  Type.Literal('PICKED_UP'),
  Type.Literal('DELIVERED'),
  Type.Literal('CANCELLED'),
  Type.Literal('REFUNDED'),
]);
const RequestedItems = Type.Array(
  Type.Object(
    {
      productId: Type.String({ minLength: 1, maxLength: 256, description: 'product id or externalId' }),
      quantity: Type.Integer({ minimum: 1, maximum: 1000 }),
      variantId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
      optionIds: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 50 })),
    },
    { additionalProperties: false },
  ),
  { minItems: 1, maxItems: 100 },
);
const Item = Type.Object({
  productId: Type.String(),
  name: Type.String(),
  quantity: Type.Integer(),
  price: Type.Integer({ description: 'the product price at order time, centimes' }),
  variant: Type.Optional(Type.Object({ _id: Type.String(), label: Type.String(), priceAdjustment: Type.Integer() })),
  options: Type.Optional(
    Type.Array(Type.Object({ _id: Type.String(), name: Type.String(), priceAdjustment: Type.Integer() })),
  ),
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
    totalAmountRefunded: Type.Integer(),
    refunds: Type.Array(Type.Object({ id: Type.String(), amount: Type.Integer(), createdAt: Timestamp })),
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
  const { db } = app.services;
  // Orders carry customers' names and phones: secret keys only, reads included.
  const read = { auth: 'secret', scope: 'store.orders:read' } as const;
  const write = { auth: 'secret', scope: 'store.orders:write' } as const;
  // Inside a transaction, read with its executor: PGlite runs one transaction at a time.
  const view = async (order: orders.OrderRow, executor: Executor = db) =>
    orders.orderView(order, (await orders.shopNames(executor, [order.shop_id])).get(order.shop_id) ?? '');

  app.post(
    '/store/orders/simulate',
    {
      config: { ...write, sandboxOnly: true },
      schema: {
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
      respondInTransaction(request, reply, 201, async (trx) => {
        const order = await orders.simulateOrder(trx, caller(request), request.body);
        return orders.orderView(order, (await orders.shopNames(trx, [order.shop_id])).get(order.shop_id) ?? '');
      }),
  );

  app.get(
    '/store/orders',
    {
      config: read,
      schema: {
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
      return {
        success: true as const,
        data: {
          items: result.items.map((order) => orders.orderView(order, names.get(order.shop_id) ?? '')),
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
    { config: read, schema: { tags, params: Params, response: { 200: Envelope(Order) } } },
    async (request) => ({
      success: true as const,
      data: await view(await orders.getOrder(db, caller(request), request.params.referenceNumber)),
    }),
  );

  for (const action of ['accept', 'ready', 'pickup', 'deliver'] as const) {
    app.post(
      `/store/orders/:referenceNumber/${action}`,
      { config: write, schema: { tags, params: Params, body: NoBody, response: { 200: Envelope(Order) } } },
      async (request, reply) =>
        respondInTransaction(request, reply, 200, async (trx) =>
          view(await orders.transitionOrder(trx, caller(request), request.params.referenceNumber, action), trx),
        ),
    );
  }

  app.post(
    '/store/orders/:referenceNumber/cancel',
    {
      config: write,
      schema: {
        tags,
        params: Params,
        body: Type.Object({ reason: Type.String({ minLength: 1, maxLength: 500 }) }, { additionalProperties: false }),
        response: { 200: Envelope(Order) },
      },
    },
    async (request, reply) =>
      respondInTransaction(request, reply, 200, async (trx) =>
        view(
          await orders.transitionOrder(
            trx,
            caller(request),
            request.params.referenceNumber,
            'cancel',
            request.body.reason,
          ),
          trx,
        ),
      ),
  );

  app.post(
    '/store/orders/:referenceNumber/refund',
    {
      config: write,
      schema: {
        tags,
        params: Params,
        body: Type.Object({ amount: Type.Optional(Type.Integer()) }, { additionalProperties: false }),
        response: { 200: Envelope(Order) },
      },
    },
    async (request, reply) =>
      respondInTransaction(request, reply, 200, async (trx) =>
        view(await orders.refundOrder(trx, caller(request), request.params.referenceNumber, request.body), trx),
      ),
  );

  app.post(
    '/store/orders/:referenceNumber/propose-modification',
    {
      config: write,
      schema: {
        tags,
        params: Params,
        body: Type.Object({ items: RequestedItems }, { additionalProperties: false }),
        response: { 200: Envelope(Order) },
      },
    },
    async (request, reply) =>
      respondInTransaction(request, reply, 200, async (trx) =>
        view(
          await orders.proposeModification(trx, caller(request), request.params.referenceNumber, request.body.items),
          trx,
        ),
      ),
  );

  app.post(
    '/store/orders/:referenceNumber/modification/accept',
    {
      config: { ...write, sandboxOnly: true },
      schema: { tags, params: Params, body: NoBody, response: { 200: Envelope(Order) } },
    },
    async (request, reply) =>
      respondInTransaction(request, reply, 200, async (trx) =>
        view(await orders.acceptModification(trx, caller(request), request.params.referenceNumber), trx),
      ),
  );
};
