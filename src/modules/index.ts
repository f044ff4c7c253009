import type { FastifyPluginAsync } from 'fastify';
import { auditLogRoutes } from './audit/routes.js';
import { apiKeyRoutes } from './api-keys/routes.js';
import { checkoutRoutes } from './checkout/routes.js';
import { dashboardRoutes } from './dashboard/plugin.js';
import { eventRoutes } from './events/routes.js';
import { intentRoutes } from './intents/routes.js';
import { linkPageRoutes } from './links/page-routes.js';
import { linkPayerRoutes } from './links/payer-routes.js';
import { paymentLinkRoutes } from './links/routes.js';
import { paymentRequestRoutes } from './requests/routes.js';
import { balanceRoutes } from './payments/balance-routes.js';
import { paymentRoutes } from './payments/routes.js';
import { statementRoutes } from './payments/statement-routes.js';
import { orderRoutes } from './orders/routes.js';
import { payoutRoutes } from './payouts/routes.js';
import { mediaRoutes, productRoutes } from './products/routes.js';
import { visibleSeller } from './sellers/lookup.js';
import { sellerRoutes } from './sellers/routes.js';
import { storefrontRoutes } from './storefront/routes.js';
import { webhookRoutes } from './webhooks/routes.js';
import { walletAppRoutes } from './walletapp/routes.js';

/**
 * The sellers module's lookup for the balance and statement routes' `?seller=`: payments sits
 * below sellers (test/platform/import-cycles.test.ts), so it is handed the one lookup here.
 */
const sellerLookup = { sellerLookup: visibleSeller };
const balanceWithSellers: FastifyPluginAsync = async (app) => {
  await app.register(balanceRoutes, sellerLookup);
};
const statementsWithSellers: FastifyPluginAsync = async (app) => {
  await app.register(statementRoutes, sellerLookup);
};

/** Every feature module of the Developer API, mounted under /api/v1/dev. */
export const developerModules: FastifyPluginAsync[] = [
  intentRoutes,
  paymentLinkRoutes,
  paymentRequestRoutes,
  webhookRoutes,
  productRoutes,
  orderRoutes,
  balanceWithSellers,
  statementsWithSellers,
  payoutRoutes,
  sellerRoutes,
  eventRoutes,
  paymentRoutes,
  auditLogRoutes,
  apiKeyRoutes,
];

/** Routes outside the API base: uploaded media, the hosted checkout and storefront pages and their APIs, the merchant dashboard, the wallet app. */
export const rootModules: FastifyPluginAsync[] = [
  mediaRoutes,
  checkoutRoutes,
  linkPayerRoutes,
  linkPageRoutes,
  storefrontRoutes,
  dashboardRoutes,
  walletAppRoutes,
];
