import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { ApiError } from '../../http/errors.js';
import { pageWithinLimit } from '../../http/rate-limit.js';
import { negotiateLang } from '../../lib/i18n.js';
import * as orders from '../orders/service.js';
import { storefrontLimits } from './limits.js';
import { sendCustomerPage } from '../../http/views.js';
import { orderPage, storefrontAssets, storefrontPage } from './pages.js';
import { Mode, OrderParams, ShopParams } from './schemas.js';
import { catalogView, customerOrderView, resolveShop, type StoreMode } from './service.js';
import { getBusinessContact } from '../businesses/service.js';

/** The hosted storefront pages: a shop's catalog (/s/{shopId}) and a customer's order (/o/{orderRef}). */
export const storefrontPageRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db, rateLimiter } = app.services;
  const { byIp } = storefrontLimits(rateLimiter);

  await app.register(storefrontAssets.routes);

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
        return sendCustomerPage(
          reply,
          storefrontPage({ choice, path: request.url }, 429, null, { mode: 'live', search, rateLimited: true }),
        );
      }
      const view = await resolveShop(db, request.params.shopId, request.query.mode as StoreMode | undefined)
        .then((shop) => catalogView(db, shop, { search: search || undefined }))
        .catch(notFound);
      return sendCustomerPage(
        reply,
        storefrontPage({ choice, path: request.url }, view ? 200 : 404, view, {
          mode: view?.sandbox ? 'test' : 'live',
          search,
        }),
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
        return sendCustomerPage(reply, orderPage({ choice, path: request.url }, 429, null, true));
      }
      const order = await orders.getOrder(db, { customerRef: request.params.orderRef }).catch(notFound);
      const view = order
        ? customerOrderView(order, (await orders.shopNames(db, [order.shop_id])).get(order.shop_id) ?? '')
        : null;
      const contact = order ? await getBusinessContact(db, order.business_id) : null;
      return sendCustomerPage(reply, orderPage({ choice, path: request.url }, view ? 200 : 404, view, false, contact));
    },
  );
};
