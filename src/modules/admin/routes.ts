import { timingSafeEqual } from 'node:crypto';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ApiError } from '../../http/errors.js';
import { Envelope } from '../../http/schemas.js';
import { createBusiness, setFeePlan, setGlobalApiEnabled, updateBusiness } from '../businesses/service.js';
import { issueKey, listKeys, rotateKey, setKeyStatus } from '../keys/service.js';
import { validAllowlistEntry } from '../keys/allowlist.js';
import { allScopes } from '../keys/scopes.js';
import { userAdminRoutes } from './user-routes.js';
import { walletAdminRoutes } from './wallet-routes.js';

const Environment = Type.Union([Type.Literal('test'), Type.Literal('live')]);
const KeyKind = Type.Union([Type.Literal('secret'), Type.Literal('publishable')]);
const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });

const KeyView = Type.Object({
  id: Type.String(),
  businessId: Type.String(),
  kind: KeyKind,
  environment: Environment,
  scopes: Type.Array(Type.String()),
  ipAllowlist: Type.Array(Type.String()),
  status: Type.String(),
  hint: Type.String(),
  createdAt: Type.String(),
  key: Type.Optional(Type.String()),
});
const BusinessView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  liveApproved: Type.Boolean(),
  apiEnabled: Type.Boolean(),
});
const FeePlan = Type.Object({
  businessId: Type.String(),
  providerBps: Type.Integer(),
  payerFee: Type.Integer(),
  tofBps: Type.Integer(),
  tteBps: Type.Integer(),
});
const Bps = Type.Integer({ minimum: 0, maximum: 10000 });

function sameToken(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * The operator API: everything the admin CLI does. Guarded by the admin token only; it is not
 * part of the Developer API and not in its OpenAPI document.
 */
export const adminRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db, invalidation } = app.services;

  app.addHook('onRequest', async (request) => {
    const header = request.headers.authorization ?? '';
    const token = header.startsWith('Bearer ') ? header.slice(7) : '';
    if (!token || !sameToken(token, app.services.adminToken)) throw new ApiError('ADMIN_UNAUTHORIZED');
  });
  await app.register(walletAdminRoutes);
  await app.register(userAdminRoutes);

  app.post(
    '/businesses',
    {
      schema: {
        body: Type.Object(
          {
            name: Type.String({ minLength: 1, maxLength: 200 }),
            approveLive: Type.Optional(Type.Boolean()),
            withShop: Type.Optional(Type.Boolean()),
          },
          { additionalProperties: false },
        ),
      },
    },
    async (request, reply) => {
      const created = await createBusiness(db, request.body);
      return reply.code(201).send({ success: true, data: created });
    },
  );

  app.post(
    '/businesses/:id/approve-live',
    { schema: { params: IdParams, response: { 200: Envelope(BusinessView) } } },
    async (request) => {
      const business = await updateBusiness(db, request.params.id, { live_approved: true });
      await invalidation.publish();
      return { success: true as const, data: business };
    },
  );

  app.put(
    '/businesses/:id/fees',
    {
      schema: {
        params: IdParams,
        body: Type.Object(
          {
            providerBps: Type.Optional(Bps),
            payerFee: Type.Optional(Type.Integer({ minimum: 0, maximum: 100_000_000 })),
            tofBps: Type.Optional(Bps),
            tteBps: Type.Optional(Bps),
          },
          { additionalProperties: false },
        ),
        response: { 200: Envelope(FeePlan) },
      },
    },
    async (request) => {
      const { providerBps, payerFee, tofBps, tteBps } = request.body;
      const plan = await setFeePlan(db, request.params.id, {
        ...(providerBps !== undefined ? { provider_bps: providerBps } : {}),
        ...(payerFee !== undefined ? { payer_fee: payerFee } : {}),
        ...(tofBps !== undefined ? { tof_bps: tofBps } : {}),
        ...(tteBps !== undefined ? { tte_bps: tteBps } : {}),
      });
      return { success: true as const, data: plan };
    },
  );

  app.post(
    '/keys',
    {
      schema: {
        body: Type.Object(
          {
            businessId: Type.String({ minLength: 1 }),
            kind: KeyKind,
            environment: Environment,
            scopes: Type.Optional(
              Type.Array(Type.Union(allScopes.map((scope) => Type.Literal(scope))), { uniqueItems: true }),
            ),
            ipAllowlist: Type.Optional(Type.Array(Type.String({ minLength: 2, maxLength: 64 }), { maxItems: 100 })),
          },
          { additionalProperties: false },
        ),
        response: { 201: Envelope(KeyView) },
      },
    },
    async (request, reply) => {
      const { businessId, ipAllowlist } = request.body;
      const bad = (ipAllowlist ?? []).filter((entry) => !validAllowlistEntry(entry));
      if (bad.length > 0) {
        throw new ApiError(
          'VALIDATION_ERROR',
          `Not an IP address or CIDR range: ${bad.join(', ')}`,
          bad.map(() => ({ field: 'body.ipAllowlist', message: 'must be an IP address or CIDR range' })),
        );
      }
      const business = await db.selectFrom('businesses').select('id').where('id', '=', businessId).executeTakeFirst();
      if (!business) throw new ApiError('NOT_FOUND', `No business ${businessId}.`);
      const key = await issueKey(db, request.body);
      return reply.code(201).send({ success: true as const, data: key });
    },
  );

  app.get(
    '/keys',
    {
      schema: {
        querystring: Type.Object({ businessId: Type.String({ minLength: 1 }) }, { additionalProperties: false }),
        response: { 200: Envelope(Type.Object({ items: Type.Array(KeyView) })) },
      },
    },
    async (request) => ({ success: true as const, data: { items: await listKeys(db, request.query.businessId) } }),
  );

  for (const action of ['suspend', 'revoke'] as const) {
    app.post(
      `/keys/:id/${action}`,
      { schema: { params: IdParams, response: { 200: Envelope(KeyView) } } },
      async (request) => {
        const key = await setKeyStatus(db, request.params.id, action === 'suspend' ? 'suspended' : 'revoked');
        await invalidation.publish();
        return { success: true as const, data: key };
      },
    );
  }

  app.post(
    '/keys/:id/rotate',
    { schema: { params: IdParams, response: { 201: Envelope(KeyView) } } },
    async (request, reply) => {
      const key = await rotateKey(db, request.params.id);
      await invalidation.publish();
      return reply.code(201).send({ success: true as const, data: key });
    },
  );

  for (const action of ['enable', 'disable'] as const) {
    app.post(
      `/api/${action}`,
      {
        schema: {
          body: Type.Object(
            { businessId: Type.Optional(Type.String({ minLength: 1 })) },
            { additionalProperties: false },
          ),
          response: { 200: Envelope(Type.Object({ scope: Type.String(), apiEnabled: Type.Boolean() })) },
        },
      },
      async (request) => {
        const enabled = action === 'enable';
        const businessId = request.body.businessId;
        if (businessId) await updateBusiness(db, businessId, { api_enabled: enabled });
        else await setGlobalApiEnabled(db, enabled);
        await invalidation.publish();
        return { success: true as const, data: { scope: businessId ?? 'global', apiEnabled: enabled } };
      },
    );
  }
};
