import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ApiError, invalid } from '../../http/errors.js';
import { OPERATOR_WRITE, write } from '../../http/idempotency/plugin.js';
import { Envelope, Paginated, Pagination, pageWindow } from '../../http/schemas.js';
import {
  approveLive,
  createBusiness,
  getBusiness,
  listBusinesses,
  setGlobalApiEnabled,
  updateBusiness,
} from '../businesses/service.js';
import { setFeePlan } from '../payments/fee-plans.js';
import { changeKeyStatus, listKeys, type IssuedKey } from '../businesses/keys.js';
import { createKey, revokeKeyAct, rollKeyAct } from '../api-keys/acts.js';
import { MAX_ROLL_OVERLAP_SECONDS } from '../api-keys/schemas.js';
import { actorOf, recordAct, recordAudit } from '../audit/record.js';
import { validAllowlistEntry } from '../keys/allowlist.js';
import { allScopes } from '../keys/scopes.js';
import { userAdminRoutes } from './user-routes.js';
import { partitionAdminRoutes } from './partition-routes.js';
import { walletAdminRoutes } from './wallet-routes.js';

const Environment = Type.Union([Type.Literal('test'), Type.Literal('live')]);
const KeyKind = Type.Union([Type.Literal('secret'), Type.Literal('publishable')]);
const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });

const Maybe = Type.Union([Type.String(), Type.Null()]);
const KeyView = Type.Object({
  id: Type.String(),
  businessId: Type.String(),
  name: Maybe,
  kind: KeyKind,
  environment: Environment,
  scopes: Type.Array(Type.String()),
  ipAllowlist: Type.Array(Type.String()),
  status: Type.String(),
  hint: Type.String(),
  createdAt: Type.String(),
  lastUsedAt: Maybe,
  lastUsedIp: Maybe,
  expiresAt: Maybe,
  replacedBy: Maybe,
  key: Type.Optional(Type.String()),
});
const VerifiedName = Type.String({
  minLength: 1,
  maxLength: 200,
  description: "the merchant's name as payers see it in live mode, verified by the operator",
});
const BusinessView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  verifiedName: Type.Union([Type.String(), Type.Null()], {
    description: 'the name payers see in live mode, as the operator verified it; null until approved live',
  }),
  liveApproved: Type.Boolean(),
  apiEnabled: Type.Boolean(),
});
const ListedBusiness = Type.Object({
  ...BusinessView.properties,
  liveRequestedAt: Type.Union([Type.String(), Type.Null()], {
    description: 'when the business asked for live access from its dashboard; null: never',
  }),
  createdAt: Type.String(),
});
const FeePlan = Type.Object({
  businessId: Type.String(),
  providerBps: Type.Integer(),
  payerFee: Type.Integer(),
  tofBps: Type.Integer(),
  tteBps: Type.Integer(),
  revenueModel: Type.Union([Type.Literal('COMMISSION'), Type.Literal('MARGIN')]),
  marginBps: Type.Integer(),
  payoutFeeFlat: Type.Integer({ description: 'centimes charged on every payout, tax included' }),
  payoutFeeBps: Type.Integer({ description: 'rate on the payout amount, added to the flat part' }),
});
const Bps = Type.Integer({ minimum: 0, maximum: 10000 });
const RevenueModel = Type.Union([Type.Literal('COMMISSION'), Type.Literal('MARGIN')], {
  description: 'COMMISSION: providerBps on the amount; MARGIN: marginBps on price less cost basis',
});

/** An API key's text is shown once, to the request that made it: a replay answers without it. */
const withoutKeyText = ({ key: _key, ...view }: IssuedKey) => view;

/**
 * The operator API: everything the admin CLI does. Guarded by the admin token only (the auth
 * hook's `admin` mode); it is not part of the Developer API and not in its OpenAPI document. Its
 * writes go through the one write path and take an `X-Idempotency-Key` when given one.
 */
/** An operator's act on a business: the business it is recorded for, and its target. */
function operatorOn(businessId: string) {
  return { businessId, target: { kind: 'business', id: businessId } };
}

export const adminRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db, invalidation } = app.services;
  const afterCommit = () => invalidation.publish();

  // Every operator route is behind the admin token, and every write takes the operator's key.
  app.addHook('onRoute', (route) => {
    const writes = [route.method].flat().some((method) => method !== 'GET' && method !== 'HEAD');
    route.config = {
      ...route.config,
      auth: 'admin',
      ...(writes ? { write: route.config?.write ?? OPERATOR_WRITE } : {}),
    };
  });
  await app.register(walletAdminRoutes);
  await app.register(userAdminRoutes);
  await app.register(partitionAdminRoutes);

  app.post(
    '/businesses',
    {
      schema: {
        body: Type.Object(
          {
            name: Type.String({ minLength: 1, maxLength: 200 }),
            approveLive: Type.Optional(Type.Boolean()),
            verifiedName: Type.Optional(VerifiedName),
            withShop: Type.Optional(Type.Boolean()),
            liveKeys: Type.Optional(
              Type.Boolean({
                description:
                  'live keys too (default: approveLive, as the CLI; a business approved later gets them from approve-live)',
              }),
            ),
          },
          { additionalProperties: false },
        ),
      },
    },
    async (request, reply) =>
      write(
        request,
        reply,
        201,
        (trx) => {
          if (request.body.verifiedName !== undefined && request.body.approveLive !== true) {
            throw invalid('body.verifiedName', 'is verified with live approval: send approveLive too');
          }
          return createBusiness(trx, request.body);
        },
        {
          kept: (created) => ({ ...created, keys: created.keys.map(withoutKeyText) }),
        },
      ),
  );

  app.get(
    '/businesses',
    {
      schema: {
        querystring: Type.Object(Pagination, { additionalProperties: false }),
        response: { 200: Envelope(Paginated(ListedBusiness)) },
      },
    },
    async (request) => {
      const { page, limit, offset } = pageWindow(request.query);
      const result = await listBusinesses(db, { limit, offset });
      return {
        success: true as const,
        data: { ...result, page, limit, hasMore: offset + result.items.length < result.total },
      };
    },
  );

  app.get(
    '/businesses/:id',
    { schema: { params: IdParams, response: { 200: Envelope(ListedBusiness) } } },
    async (request) => ({ success: true as const, data: await getBusiness(db, request.params.id) }),
  );

  app.post(
    '/businesses/:id/approve-live',
    {
      schema: {
        params: IdParams,
        body: Type.Object(
          {
            verifiedName: Type.Optional(
              Type.String({
                ...VerifiedName,
                description:
                  'the name payers see in live mode; default: the one verified before, else the business name now. Approving again with it is how the operator changes it',
              }),
            ),
          },
          { additionalProperties: false },
        ),
        response: { 200: Envelope(Type.Object({ ...BusinessView.properties, keys: Type.Array(KeyView) })) },
      },
    },
    async (request, reply) =>
      write(
        request,
        reply,
        200,
        async (trx) => {
          const approved = await approveLive(trx, request.params.id, request.body);
          await recordAct(trx, request, {
            action: 'business.live_approved',
            ...operatorOn(approved.id),
            details: { verifiedName: approved.verifiedName },
          });
          return approved;
        },
        {
          kept: (approved) => ({ ...approved, keys: approved.keys.map(withoutKeyText) }),
          afterCommit,
        },
      ),
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
            revenueModel: Type.Optional(RevenueModel),
            marginBps: Type.Optional(Bps),
            payoutFeeFlat: Type.Optional(Type.Integer({ minimum: 0, maximum: 100_000_000 })),
            payoutFeeBps: Type.Optional(Bps),
          },
          { additionalProperties: false },
        ),
        response: { 200: Envelope(FeePlan) },
      },
    },
    async (request, reply) => {
      const { providerBps, payerFee, tofBps, tteBps, revenueModel, marginBps, payoutFeeFlat, payoutFeeBps } =
        request.body;
      return write(request, reply, 200, async (trx) => {
        const plan = await setFeePlan(trx, request.params.id, {
          ...(providerBps !== undefined ? { provider_bps: providerBps } : {}),
          ...(payerFee !== undefined ? { payer_fee: payerFee } : {}),
          ...(tofBps !== undefined ? { tof_bps: tofBps } : {}),
          ...(tteBps !== undefined ? { tte_bps: tteBps } : {}),
          ...(revenueModel !== undefined ? { revenue_model: revenueModel } : {}),
          ...(marginBps !== undefined ? { margin_bps: marginBps } : {}),
          ...(payoutFeeFlat !== undefined ? { payout_fee_flat: payoutFeeFlat } : {}),
          ...(payoutFeeBps !== undefined ? { payout_fee_bps: payoutFeeBps } : {}),
        });
        const details = { changed: Object.keys(request.body), ...request.body };
        await recordAct(trx, request, { action: 'business.fees_changed', ...operatorOn(request.params.id), details });
        return plan;
      });
    },
  );

  app.post(
    '/keys',
    {
      schema: {
        body: Type.Object(
          {
            businessId: Type.String({ minLength: 1 }),
            name: Type.Optional(Type.String({ minLength: 1, maxLength: 100, pattern: '\\S' })),
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
      return write(
        request,
        reply,
        201,
        async (trx) => {
          const business = await trx
            .selectFrom('businesses')
            .select('id')
            .where('id', '=', businessId)
            .executeTakeFirst();
          if (!business) throw new ApiError('NOT_FOUND', `No business ${businessId}.`);
          return createKey(trx, { actor: actorOf(request) }, { ...request.body, name: request.body.name?.trim() });
        },
        { kept: withoutKeyText },
      );
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

  app.post(
    '/keys/:id/suspend',
    { schema: { params: IdParams, response: { 200: Envelope(KeyView) } } },
    async (request, reply) =>
      write(
        request,
        reply,
        200,
        async (trx) => {
          const { key, changed } = await changeKeyStatus(trx, request.params.id, 'suspended');
          if (changed) {
            await recordAudit(trx, {
              businessId: key.businessId,
              environment: key.environment,
              action: 'api_key.suspended',
              actor: actorOf(request),
              target: { kind: 'api_key', id: key.id },
              details: { hint: key.hint },
            });
          }
          return key;
        },
        { afterCommit },
      ),
  );

  app.post(
    '/keys/:id/revoke',
    { schema: { params: IdParams, response: { 200: Envelope(KeyView) } } },
    async (request, reply) =>
      write(request, reply, 200, (trx) => revokeKeyAct(trx, { actor: actorOf(request) }, null, request.params.id), {
        afterCommit,
      }),
  );

  // `rotate` is the CLI's older word for a roll; without `expiresIn` the old key stops at once.
  for (const action of ['rotate', 'roll'] as const) {
    app.post(
      `/keys/:id/${action}`,
      {
        schema: {
          params: IdParams,
          body: Type.Optional(
            Type.Object(
              { expiresIn: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_ROLL_OVERLAP_SECONDS })) },
              { additionalProperties: false },
            ),
          ),
          response: { 201: Envelope(KeyView) },
        },
      },
      async (request, reply) =>
        write(
          request,
          reply,
          201,
          (trx) => rollKeyAct(trx, { actor: actorOf(request) }, null, request.params.id, request.body?.expiresIn ?? 0),
          { kept: withoutKeyText, afterCommit },
        ),
    );
  }

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
      async (request, reply) => {
        const enabled = action === 'enable';
        const businessId = request.body.businessId;
        return write(
          request,
          reply,
          200,
          async (trx) => {
            if (businessId) {
              await updateBusiness(trx, businessId, { api_enabled: enabled });
              const act = enabled ? 'business.reinstated' : 'business.suspended';
              await recordAct(trx, request, {
                action: act,
                ...operatorOn(businessId),
                details: { apiEnabled: enabled },
              });
            } else await setGlobalApiEnabled(trx, enabled);
            return { scope: businessId ?? 'global', apiEnabled: enabled };
          },
          { afterCommit },
        );
      },
    );
  }
};
