import type { FastifyPluginAsync } from 'fastify';
import { intentRoutes } from './intents/routes.js';
import { webhookRoutes } from './webhooks/routes.js';

/** Every feature module of the Developer API, mounted under /api/v1/dev. */
export const developerModules: FastifyPluginAsync[] = [intentRoutes, webhookRoutes];
