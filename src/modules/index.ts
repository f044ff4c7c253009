import type { FastifyPluginAsync } from 'fastify';
import { intentRoutes } from './intents/routes.js';
import { orderRoutes } from './orders/routes.js';
import { mediaRoutes, productRoutes } from './products/routes.js';
import { webhookRoutes } from './webhooks/routes.js';

/** Every feature module of the Developer API, mounted under /api/v1/dev. */
export const developerModules: FastifyPluginAsync[] = [intentRoutes, webhookRoutes, productRoutes, orderRoutes];

/** Routes outside the API base: uploaded media (and, later, the hosted pages). */
export const rootModules: FastifyPluginAsync[] = [mediaRoutes];
