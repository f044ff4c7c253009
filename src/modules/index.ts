import type { FastifyPluginAsync } from 'fastify';

/** Every feature module of the Developer API, mounted under /api/v1/dev. */
export const developerModules: FastifyPluginAsync[] = [];
