import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { ApiError } from '../../http/errors.js';
import { hitCustomerLimit, pageWithinLimit } from '../../http/rate-limit.js';
import { customerIdempotency, respondInTransaction } from '../../http/idempotency.js';
import { Envelope, literalUnion, Nullable, Timestamp } from '../../http/schemas.js';
import { E164_PATTERN } from '../../lib/phone.js';
import { lockPayer } from '../payments/payers.js';
import { payBaseUrl } from '../intents/routes.js';
import { RequestedItems } from '../orders/routes.js';
import * as orders from '../orders/service.js';
import { ORDER_STATUSES } from '../orders/state.js';
import { authenticateWallet } from '../wallets/service.js';
import { negotiateLang } from '../../lib/i18n.js';
import { CUSTOMER_CANCEL_REASON, orderPage, storefrontCsp, storefrontPage } from './pages.js';
import { catalogView, customerOrderView, priceCart, resolveShop, type StoreMode } from './service.js';

/** Per minute: what one address may ask of the storefront API, and how often one wallet may try a PIN. */
export const STOREFRONT_PER_IP_PER_MINUTE = 120;
export const STOREFRONT_PER_WALLET_PER_MINUTE = 20;

const tags = ['Storefront'];
const ShopParams = Type.Object({ shopId: Type.String({ minLength: 1, maxLength: 64 }) });
const OrderParams = Type.Object({ orderRef: Type.String({ minLength: 1, maxLength: 64 }) });
const Mode = Type.Optional(
  Type.Union([Type.Literal('test'), Type.Literal('live')], {
    description: "which of the business's shops: test is the sandbox storefront",
  }),
);
const ModeQuery = Type.Object({ mode: Mode }, { additionalProperties: false });
const Pin = Type.String({ pattern: '^[0-9]{4,6}$', description: 'the wallet PIN' });

const Line = Type.Object({
  productId: Type.String(),
  name: Type.String(),
  quantity: Type.Integer(),
  price: Type.Integer({ description: 'unit price, centimes' }),
  variant: Type.Optional(Type.Object({ _id: Type.String(), label: Type.String(), priceAdjustment: Type.Integer() })),
  options: Type.Optional(
    Type.Array(Type.Object({ _id: Type.String(), name: Type.String(), priceAdjustment: Type.Integer() })),
  ),
  lineTotal: Type.Integer({ description: '(price + variant + options) × quantity, centimes' }),
});
const CatalogProduct = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: Nullable(Type.String()),
  price: Type.Integer(),
  isFlexiblePrice: Type.Boolean(),
  inStock: Type.Boolean(),
  images: Type.Array(Type.Object({ url: Type.String() })),
  variants: Type.Array(
    Type.Object({
      _id: Type.String(),
      type: Type.String(),
      label: Type.String(),
      priceAdjustment: Type.Integer(),
      inStock: Type.Boolean(),
    }),
  ),
  options: Type.Array(Type.Object({ _id: Type.String(), name: Type.String(), priceAdjustment: Type.Integer() })),
});
const Catalog = Type.Object(
  {
    shopId: Type.String(),
    shopName: Type.String(),
    currency: Type.Literal('MRU'),
    payerFee: Type.Integer({ description: 'added to every order, centimes' }),
    sandbox: Type.Boolean(),
    search: Nullable(Type.String()),
    items: Type.Array(CatalogProduct),
    page: Type.Integer(),
    limit: Type.Integer(),
    total: Type.Integer(),
    hasMore: Type.Boolean(),
    testWallets: Type.Array(
      Type.Object({ phone: Type.String(), pin: Type.String(), note: Type.String(), locked: Type.Boolean() }),
    ),
  },
  { title: 'StorefrontCatalog' },
);
const Quote = Type.Object(
  {
    items: Type.Array(Line),
    totalAmount: Type.Integer(),
    payerFee: Type.Integer(),
    totalToPay: Type.Integer({ description: 'what the wallet is charged: total + payer fee' }),
    currency: Type.Literal('MRU'),
    sandbox: Type.Boolean(),
  },
  { title: 'StorefrontQuote' },
);
const Status = literalUnion(ORDER_STATUSES);
const CustomerOrder = Type.Object(
  {
    orderRef: Type.String({ description: 'the unguessable reference of the customer link /o/{orderRef}' }),
    orderUrl: Type.String(),
    referenceNumber: Type.String(),
    shopId: Type.String(),
    shopName: Type.String(),
    status: Status,
    items: Type.Array(Line),
    totalAmount: Type.Integer(),
    currency: Type.Literal('MRU'),
    customerName: Type.String(),
    customerPhone: Type.String({ description: 'masked' }),
    paid: Type.Boolean(),
    amountPaid: Type.Integer(),
    payerFee: Type.Integer(),
    totalAmountRefunded: Type.Integer(),
    refunds: Type.Array(Type.Object({ amount: Type.Integer(), createdAt: Timestamp })),
    refundable: Type.Integer(),
    cancellationReason: Nullable(Type.String()),
    proposedModification: Nullable(
      Type.Object({
        items: Type.Array(Line),
        totalAmount: Type.Integer(),
        difference: Type.Integer({
          description: 'new total - current total: charged if positive, refunded if negative',
        }),
        proposedAt: Timestamp,
      }),
    ),
    canCancel: Type.Boolean(),
    sandbox: Type.Boolean(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'CustomerOrder' },
);

/**
 * The storefront's public JSON API: no API key (customers identify with their wallet phone and
 * PIN, and reach their order by its unguessable link), rate limited per address and per wallet
 * like `/checkout/...`. The hosted storefront page calls it; a merchant's own front end may too.
 */
export const storefrontApiRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db, rateLimiter, config } = app.services;
  const limits = { maxAmount: config.intentMaxAmount };

  const limit = (reply: FastifyReply, key: string, perMinute: number) =>
    hitCustomerLimit(rateLimiter, reply, key, perMinute);
  const byIp = (request: FastifyRequest, reply: FastifyReply) =>
    limit(reply, `storefront-ip:${request.ip}`, STOREFRONT_PER_IP_PER_MINUTE);
  // One count per wallet across the checkout and the storefront: two channels never double the PIN guesses.
  const byWallet = (reply: FastifyReply, phone: string) =>
    limit(reply, `checkout-wallet:${phone}`, STOREFRONT_PER_WALLET_PER_MINUTE);

  app.addHook('onSend', async (_request, reply, payload) => {
    if (!reply.hasHeader('Cache-Control')) reply.header('Cache-Control', 'no-store');
    return payload;
  });

  /** The customer's view of an order, with its shop's name (a changed order brings its own). */
  const customerView = (request: FastifyRequest, order: orders.OrderRow, shopName: string) => ({
    ...customerOrderView(order, shopName),
    orderUrl: orders.customerUrl(order, payBaseUrl(request)),
  });
  const changedCustomerView = (request: FastifyRequest, order: orders.ChangedOrder) =>
    customerView(request, order, order.shop_name);

  app.get(
    '/storefront/shops/:shopId',
    {
      schema: {
        tags,
        summary: "A shop's catalog: its ACTIVE products",
        params: ShopParams,
        querystring: Type.Object(
          {
            mode: Mode,
            search: Type.Optional(Type.String({ maxLength: 200 })),
            page: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000 })),
          },
          { additionalProperties: false },
        ),
        response: { 200: Envelope(Catalog) },
      },
    },
    async (request, reply) => {
      await byIp(request, reply);
      const shop = await resolveShop(db, request.params.shopId, request.query.mode as StoreMode | undefined);
      return { success: true as const, data: await catalogView(db, shop, request.query) };
    },
  );

  app.post(
    '/storefront/shops/:shopId/quote',
    {
      schema: {
        tags,
        summary: 'Price a cart as an order of it would be priced now (nothing is taken)',
        params: ShopParams,
        querystring: ModeQuery,
        body: Type.Object({ items: RequestedItems }, { additionalProperties: false }),
        response: { 200: Envelope(Quote) },
      },
    },
    async (request, reply) => {
      await byIp(request, reply);
      const shop = await resolveShop(db, request.params.shopId, request.query.mode);
      return { success: true as const, data: await priceCart(db, shop, request.body.items, limits.maxAmount) };
    },
  );

  app.post(
    '/storefront/shops/:shopId/orders',
    {
      schema: {
        tags,
        summary: 'Place and pay an order with a wallet (phone + PIN)',
        params: ShopParams,
        querystring: ModeQuery,
        headers: Type.Object({
          'x-idempotency-key': Type.Optional(
            Type.String({
              minLength: 1,
              maxLength: 255,
              description: 'optional: the same key again (same wallet and cart) answers the first order',
            }),
          ),
        }),
        body: Type.Object(
          {
            items: RequestedItems,
            customerName: Type.String({ minLength: 1, maxLength: 200 }),
            phone: Type.String({ pattern: E164_PATTERN, description: 'the wallet phone, E.164' }),
            pin: Pin,
          },
          { additionalProperties: false },
        ),
        response: { 201: Envelope(CustomerOrder) },
      },
    },
    async (request, reply) => {
      await byIp(request, reply);
      await byWallet(reply, request.body.phone);
      const shop = await resolveShop(db, request.params.shopId, request.query.mode);
      // The PIN first, outside any transaction: its hash is slow, and a wrong one locks nothing.
      const wallet = await authenticateWallet(db, shop.environment, request.body.phone, request.body.pin);
      // A double click or a retried request with the page's key answers the first order again.
      const { pin: _pin, ...covered } = request.body;
      const idempotency = customerIdempotency(
        request,
        { businessId: shop.businessId, environment: shop.environment, who: wallet.phone },
        covered,
      );
      return respondInTransaction(
        request,
        reply,
        201,
        async (trx) => {
          const payer = await lockPayer(trx, shop.environment, wallet.phone);
          if (!payer) throw new ApiError('WALLET_NOT_FOUND');
          const order = await orders.placeOrder(trx, shop, request.body, payer, limits);
          return customerView(request, order, shop.name);
        },
        { idempotency },
      );
    },
  );

  app.get(
    '/storefront/orders/:orderRef',
    {
      schema: {
        tags,
        summary: "The customer's order, by its link",
        params: OrderParams,
        response: { 200: Envelope(CustomerOrder) },
      },
    },
    async (request, reply) => {
      await byIp(request, reply);
      const order = await orders.getOrder(db, { customerRef: request.params.orderRef });
      const shopName = (await orders.shopNames(db, [order.shop_id])).get(order.shop_id) ?? '';
      return { success: true as const, data: customerView(request, order, shopName) };
    },
  );

  app.post(
    '/storefront/orders/:orderRef/cancel',
    {
      schema: {
        tags,
        summary: 'The customer cancels a NEW order: refunded in full, stock returned',
        params: OrderParams,
        body: Type.Object(
          { reason: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })) },
          {
            additionalProperties: false,
          },
        ),
        response: { 200: Envelope(CustomerOrder) },
      },
    },
    async (request, reply) => {
      await byIp(request, reply);
      return respondInTransaction(request, reply, 200, async (trx) =>
        changedCustomerView(
          request,
          await orders.transitionOrder(
            trx,
            { customerRef: request.params.orderRef },
            'cancel',
            request.body.reason ?? CUSTOMER_CANCEL_REASON,
          ),
        ),
      );
    },
  );

  app.post(
    '/storefront/orders/:orderRef/modification/accept',
    {
      schema: {
        tags,
        summary: "Accept the shop's proposed modification: the difference is charged or refunded",
        params: OrderParams,
        body: Type.Object(
          {
            pin: Pin,
            proposedAt: Type.String({
              minLength: 1,
              maxLength: 64,
              description: "the proposal's `proposedAt` as shown: a proposal replaced since is refused",
            }),
          },
          { additionalProperties: false },
        ),
        response: { 200: Envelope(CustomerOrder) },
      },
    },
    async (request, reply) => {
      await byIp(request, reply);
      const found = await orders.getOrder(db, { customerRef: request.params.orderRef });
      await byWallet(reply, found.customer_phone);
      // Accepting may charge the wallet more: it takes the PIN, as paying does.
      await authenticateWallet(db, found.environment, found.customer_phone, request.body.pin);
      return respondInTransaction(request, reply, 200, async (trx) =>
        changedCustomerView(
          request,
          await orders.acceptModification(
            trx,
            { customerRef: request.params.orderRef },
            { proposedAt: request.body.proposedAt },
          ),
        ),
      );
    },
  );

  app.post(
    '/storefront/orders/:orderRef/modification/decline',
    {
      schema: {
        tags,
        summary: "Decline the shop's proposed modification: the order stays as it was",
        params: OrderParams,
        body: Type.Object({}, { additionalProperties: false }),
        response: { 200: Envelope(CustomerOrder) },
      },
    },
    async (request, reply) => {
      await byIp(request, reply);
      return respondInTransaction(request, reply, 200, async (trx) =>
        changedCustomerView(request, await orders.declineModification(trx, { customerRef: request.params.orderRef })),
      );
    },
  );

  /** An HTML page with a fresh script nonce and the headers every customer page carries. */
  function sendPage(reply: FastifyReply, status: number, render: (nonce: string) => string): FastifyReply {
    const nonce = randomBytes(16).toString('base64');
    return reply
      .code(status)
      .type('text/html; charset=utf-8')
      .header('Cache-Control', 'no-store')
      .header('Content-Security-Policy', storefrontCsp(nonce))
      .header('X-Content-Type-Options', 'nosniff')
      .header('Referrer-Policy', 'no-referrer')
      .header('X-Frame-Options', 'DENY')
      .header('Vary', 'Accept-Language')
      .send(render(nonce));
  }
  const pageLimit = (request: FastifyRequest, reply: FastifyReply) =>
    pageWithinLimit(reply, () => byIp(request, reply));
  const notFound = (error: unknown) => {
    if (error instanceof ApiError && (error.code === 'SHOP_NOT_FOUND' || error.code === 'ORDER_NOT_FOUND')) return null;
    throw error;
  };

  app.get(
    '/s/:shopId',
    {
      schema: {
        hide: true,
        params: ShopParams,
        querystring: Type.Object({
          lang: Type.Optional(Type.String({ maxLength: 8 })),
          mode: Mode,
          search: Type.Optional(Type.String({ maxLength: 200 })),
        }),
      },
    },
    async (request, reply) => {
      const choice = negotiateLang(request.query.lang, request.headers['accept-language']);
      const search = request.query.search?.trim() ?? '';
      if (!(await pageLimit(request, reply))) {
        return sendPage(reply, 429, (nonce) =>
          storefrontPage({ choice, path: request.url, nonce }, null, { mode: 'live', search, rateLimited: true }),
        );
      }
      const view = await resolveShop(db, request.params.shopId, request.query.mode as StoreMode | undefined)
        .then((shop) => catalogView(db, shop, { search: search || undefined }))
        .catch(notFound);
      return sendPage(reply, view ? 200 : 404, (nonce) =>
        storefrontPage({ choice, path: request.url, nonce }, view, { mode: view?.sandbox ? 'test' : 'live', search }),
      );
    },
  );

  app.get(
    '/o/:orderRef',
    {
      schema: {
        hide: true,
        params: OrderParams,
        querystring: Type.Object({ lang: Type.Optional(Type.String({ maxLength: 8 })) }),
      },
    },
    async (request, reply) => {
      const choice = negotiateLang(request.query.lang, request.headers['accept-language']);
      if (!(await pageLimit(request, reply))) {
        return sendPage(reply, 429, (nonce) => orderPage({ choice, path: request.url, nonce }, null, true));
      }
      const order = await orders.getOrder(db, { customerRef: request.params.orderRef }).catch(notFound);
      const view = order
        ? customerOrderView(order, (await orders.shopNames(db, [order.shop_id])).get(order.shop_id) ?? '')
        : null;
      return sendPage(reply, view ? 200 : 404, (nonce) => orderPage({ choice, path: request.url, nonce }, view));
    },
  );
};
