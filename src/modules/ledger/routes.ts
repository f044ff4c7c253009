import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requireAuth } from '../../http/context.js';
import { Envelope } from '../../http/schemas.js';
import { accountBalance } from './ledger.js';

/** `GET /dev/balance`: the merchant's available balance in the key's environment. */
export const balanceRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app.services;
  app.get(
    '/balance',
    {
      config: { auth: 'secret', scope: 'intents:read' },
      schema: {
        tags: ['Balance'],
        response: {
          200: Envelope(
            Type.Object({
              available: Type.Integer({ description: 'centimes' }),
              currency: Type.Literal('MRU'),
              sandbox: Type.Boolean(),
            }),
          ),
        },
      },
    },
    async (request) => {
      const auth = requireAuth(request.auth);
      const available = await accountBalance(db, auth.environment, { kind: 'merchant', ownerId: auth.businessId });
      return { success: true as const, data: { available, currency: 'MRU' as const, sandbox: auth.sandbox } };
    },
  );
};
