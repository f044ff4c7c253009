import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { storefrontApiRoutes } from './api-routes.js';
import { storefrontPageRoutes } from './page-routes.js';

/** The storefront: its customer JSON API and its hosted pages, which call that API. */
export const storefrontRoutes: FastifyPluginAsyncTypebox = async (app) => {
  // Customer answers (an order, a receipt) are never stored by a browser or a proxy.
  app.addHook('onSend', async (_request, reply, payload) => {
    if (!reply.hasHeader('Cache-Control')) reply.header('Cache-Control', 'no-store');
    return payload;
  });
  await app.register(storefrontApiRoutes);
  await app.register(storefrontPageRoutes);
};
