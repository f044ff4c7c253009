import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { ApiError } from '../../http/errors.js';
import { CUSTOMER_LINK_WRITE, CUSTOMER_WRITE, write } from '../../http/idempotency/plugin.js';
import { Envelope } from '../../http/schemas.js';
import { readWalletPhoneOfBody } from '../../http/validation.js';
import { lockPayer } from '../payments/payers.js';
import { SANDBOX_DEFAULT_PAYER, SANDBOX_WALLET_PIN } from '../sandbox/sandbox.js';
import { payBaseUrl } from '../intents/routes.js';
import { CART_REFUSALS } from '../orders/docs.js';
import { RequestedItems } from '../orders/routes.js';
import * as orders from '../orders/service.js';
import { authenticateWallet } from '../wallets/service.js';
import { CUSTOMER_CANCEL_REASON } from './pages.js';
import { storefrontLimits } from './limits.js';
import {
  Catalog,
  CustomerOrder,
  Mode,
  ModeQuery,
  OrderParams,
  Pin,
  Quote,
  ShopParams,
  tags,
  WalletPhone,
} from './schemas.js';
import { catalogView, customerOrderView, priceCart, resolveShop, type StoreMode } from './service.js';

/**
 * The storefront's public JSON API: no API key (customers identify with their wallet phone and
 * PIN, and reach their order by its unguessable link), rate limited per address and per wallet
 * like `/checkout/...`. The hosted storefront page calls it; a merchant's own front end may too.
 * Its answers are never stored by a browser or a proxy (the module's `Cache-Control`).
 */
export const storefrontApiRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db, rateLimiter, config } = app.services;
  const limits = { maxAmount: config.intentMaxAmount };

  const { byIp, byWallet } = storefrontLimits(rateLimiter);

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
      config: { errorCodes: ['SHOP_NOT_FOUND', 'RATE_LIMITED'] },
      schema: {
        operationId: 'storefrontCatalog',
        summary: "A shop's catalog: its ACTIVE products",
        description:
          "The shop's ACTIVE products with prices, variants, options and stock flags (`?search=`, `?page=`); `?mode=test` reads the shop's sandbox twin and lists the test wallets. Rate limited per address.",
        tags,
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
      config: {
        errorCodes: [...CART_REFUSALS, 'RATE_LIMITED'],
        openapi: { requestExample: { items: [{ productId: 'prod_...', quantity: 2 }] } },
      },
      schema: {
        operationId: 'storefrontQuote',
        summary: 'Price a cart as an order of it would be priced now (nothing is taken)',
        description:
          'Prices every line on the server (catalog price + variant + options, times quantity; a flexible-price product takes the typed price, at least its catalog price) and adds the payer fee. Nothing is taken.',
        tags,
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
      config: {
        write: CUSTOMER_WRITE,
        errorCodes: [
          ...CART_REFUSALS,
          'INVALID_PIN',
          'WALLET_LOCKED',
          'WALLET_NOT_FOUND',
          'INSUFFICIENT_BALANCE',
          'IDEMPOTENCY_KEY_REUSED',
          'IDEMPOTENCY_KEY_IN_PROGRESS',
          'RATE_LIMITED',
        ],
        openapi: {
          requestExample: {
            items: [{ productId: 'prod_...', quantity: 1 }],
            customerName: 'Mariem',
            phone: SANDBOX_DEFAULT_PAYER,
            pin: SANDBOX_WALLET_PIN,
          },
        },
      },
      preValidation: readWalletPhoneOfBody,
      schema: {
        operationId: 'storefrontPlaceOrder',
        summary: 'Place and pay an order with a wallet (phone + PIN)',
        description:
          "One transaction: prices the cart, takes the stock, debits the customer's wallet (amount + payer fee) after its PIN, credits the merchant and sends `order.new`. Anything refused takes nothing. An optional `X-Idempotency-Key` (scoped to the wallet) makes a retried or double-submitted order answer the first one. The answer's `orderUrl` is the customer's link to the order.",
        tags,
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
            phone: WalletPhone,
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
      return write(
        request,
        reply,
        201,
        async (trx, input) => {
          const payer = await lockPayer(trx, shop.environment, wallet.phone);
          if (!payer) throw new ApiError('WALLET_NOT_FOUND');
          const order = await orders.placeOrder(trx, shop, input, payer, limits);
          return customerView(request, order, shop.name);
        },
        { scope: { businessId: shop.businessId, environment: shop.environment, who: wallet.phone } },
      );
    },
  );

  app.get(
    '/storefront/orders/:orderRef',
    {
      config: { errorCodes: ['ORDER_NOT_FOUND', 'RATE_LIMITED'] },
      schema: {
        operationId: 'storefrontGetOrder',
        summary: "The customer's order, by its link",
        description:
          'The order behind the customer link (`orderRef`, unguessable): status, lines, total, payment and refunds.',
        tags,
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
      config: {
        write: CUSTOMER_LINK_WRITE,
        errorCodes: ['ORDER_NOT_FOUND', 'ORDER_INVALID_TRANSITION', 'INSUFFICIENT_FUNDS', 'RATE_LIMITED'],
      },
      schema: {
        operationId: 'storefrontCancelOrder',
        summary: 'The customer cancels a NEW order: refunded in full, stock returned',
        description:
          'While the order is NEW: cancelled, refunded in full to the wallet, stock returned. Sends `order.cancelled`. A merchant balance that cannot cover the refund leaves the order as it was (INSUFFICIENT_FUNDS).',
        tags,
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
      return write(request, reply, 200, async (trx) =>
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
      config: {
        write: CUSTOMER_LINK_WRITE,
        errorCodes: [
          'ORDER_NOT_FOUND',
          'ORDER_INVALID_TRANSITION',
          'PRODUCT_NOT_FOUND',
          'VARIANT_NOT_FOUND',
          'INSUFFICIENT_STOCK',
          'INVALID_PIN',
          'WALLET_LOCKED',
          'WALLET_NOT_FOUND',
          'INSUFFICIENT_BALANCE',
          'INSUFFICIENT_FUNDS',
          'RATE_LIMITED',
        ],
      },
      schema: {
        operationId: 'storefrontAcceptModification',
        summary: "Accept the shop's proposed modification: the difference is charged or refunded",
        description:
          'Takes the wallet PIN: the difference is charged (or refunded) and the order takes the proposed lines. Sends `order.modified`. A wallet that cannot pay the difference (INSUFFICIENT_BALANCE), or a merchant balance that cannot refund it (INSUFFICIENT_FUNDS), leaves the order as it was.',
        tags,
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
      return write(request, reply, 200, async (trx) =>
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
      config: {
        write: CUSTOMER_LINK_WRITE,
        errorCodes: ['ORDER_NOT_FOUND', 'ORDER_INVALID_TRANSITION', 'RATE_LIMITED'],
      },
      schema: {
        operationId: 'storefrontDeclineModification',
        summary: "Decline the shop's proposed modification: the order stays as it was",
        description: 'The order stays as it was; sends `order.modification_declined`.',
        tags,
        params: OrderParams,
        body: Type.Object({}, { additionalProperties: false }),
        response: { 200: Envelope(CustomerOrder) },
      },
    },
    async (request, reply) => {
      await byIp(request, reply);
      return write(request, reply, 200, async (trx) =>
        changedCustomerView(request, await orders.declineModification(trx, { customerRef: request.params.orderRef })),
      );
    },
  );
};
