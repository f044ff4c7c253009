import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Transaction } from 'kysely';
import { Type } from 'typebox';
import type { DB } from '../../../../db/schema.js';
import { ApiError, invalid } from '../../../../http/errors.js';
import { literalUnion, parseDateFilter } from '../../../../http/schemas.js';
import { EVENT_NAMES } from '../../../events/catalog.js';
import { validAllowlistEntry } from '../../../keys/allowlist.js';
import { allScopes } from '../../../keys/scopes.js';
import { issueKey, listKeys, rotateKey, setKeyStatus } from '../../../businesses/keys.js';
import { getDelivery, listDeliveries, retryDelivery } from '../../../webhooks/deliveries.js';
import { isFailing, withHealth } from '../../delivery-health.js';
import * as endpoints from '../../../webhooks/endpoints.js';
import { at, callerOf, DASHBOARD, requireSession, sendPage } from '../../context.js';
import type { DashboardSession } from '../../sessions.js';
import { dashboardWrite, Token, Flash } from '../../write.js';
import { FORM_WRITE } from '../../../../http/idempotency/plugin.js';
import { DELIVERY_STATUSES } from '../../../webhooks/delivery-state.js';

const PAGE_SIZE = 25;

const FlashQuery = Type.Object(Flash, { additionalProperties: false });
const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
const TokenForm = Type.Object(Token, { additionalProperties: false });
/** A checkbox group arrives as one string or an array of them. */
const Many = (maxLength: number) =>
  Type.Optional(Type.Union([Type.String({ maxLength }), Type.Array(Type.String({ maxLength }), { maxItems: 50 })]));
const KeyForm = Type.Object(
  {
    ...Token,
    kind: Type.Union([Type.Literal('secret'), Type.Literal('publishable')]),
    scopes: Many(40),
    ipAllowlist: Type.Optional(Type.String({ maxLength: 4000 })),
  },
  { additionalProperties: false },
);
const EndpointForm = Type.Object(
  { ...Token, url: Type.String({ minLength: 1, maxLength: 2048 }), events: Many(60) },
  { additionalProperties: false },
);
const EventsForm = Type.Object({ ...Token, events: Many(60) }, { additionalProperties: false });
const DeliveriesQuery = Type.Object(
  {
    ...Flash,
    from: Type.Optional(Type.String({ maxLength: 40 })),
    to: Type.Optional(Type.String({ maxLength: 40 })),
    status: Type.Optional(literalUnion(['', ...DELIVERY_STATUSES])),
    event: Type.Optional(Type.String({ maxLength: 60 })),
    endpoint: Type.Optional(Type.String({ maxLength: 64 })),
    page: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
  },
  { additionalProperties: false },
);
const EventsQuery = Type.Object(
  {
    event: Type.Optional(Type.String({ maxLength: 60 })),
    before: Type.Optional(Type.Integer({ minimum: 1 })),
  },
  { additionalProperties: false },
);

function many(value: string | string[] | undefined): string[] {
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}

/** A key of the session's business and mode, or KEY not found (another business's key does not exist here). */
async function ownKey(trx: Transaction<DB>, session: DashboardSession, id: string) {
  const key = await trx
    .selectFrom('api_keys')
    .select(['id', 'status'])
    .where('id', '=', id)
    .where('business_id', '=', session.businessId)
    .where('environment', '=', session.environment)
    .executeTakeFirst();
  if (!key) throw new ApiError('NOT_FOUND', 'No such API key.');
  return key;
}

const KEYS = `${DASHBOARD}/developers/keys`;
const WEBHOOKS = `${DASHBOARD}/developers/webhooks`;
const DELIVERIES = `${DASHBOARD}/developers/deliveries`;

export const developerPages: FastifyPluginAsyncTypebox = async (app) => {
  const { db, config, invalidation } = app.services;
  const owner = { dashboard: 'developers.manage', write: FORM_WRITE } as const;
  const view = { dashboard: 'developers.manage' } as const;
  const publish = () => invalidation.publish();

  app.get(at(KEYS), { config: view, schema: { hide: true, querystring: FlashQuery } }, async (request, reply) => {
    const session = requireSession(request);
    const keys = (await listKeys(db, session.businessId)).filter(
      (key) => key.environment === session.environment && key.status !== 'rotated',
    );
    return sendPage(request, reply, 'keys', { keys: keys.reverse(), scopes: allScopes });
  });

  app.post(at(KEYS), { config: owner, schema: { hide: true, body: KeyForm } }, async (request, reply) =>
    dashboardWrite(request, reply, KEYS, async (trx, session) => {
      const scopes = many(request.body.scopes);
      const unknown = scopes.filter((scope) => !(allScopes as readonly string[]).includes(scope));
      if (scopes.length === 0 || unknown.length > 0) throw invalid('scopes', 'must name at least one known scope');
      const ipAllowlist = (request.body.ipAllowlist ?? '')
        .split(/[\s,]+/)
        .map((entry) => entry.trim())
        .filter(Boolean);
      if (ipAllowlist.length > 100 || !ipAllowlist.every(validAllowlistEntry)) {
        throw invalid('ipAllowlist', 'must be IP addresses or CIDR ranges');
      }
      const key = await issueKey(trx, {
        businessId: session.businessId,
        kind: request.body.kind,
        environment: session.environment,
        scopes: [...new Set(scopes)],
        ipAllowlist,
      });
      return { redirect: KEYS, page: { template: 'key-created', data: { key } } };
    }),
  );

  app.post(
    at(`${KEYS}/:id/roll`),
    { config: owner, schema: { hide: true, params: IdParams, body: TokenForm } },
    async (request, reply) =>
      dashboardWrite(request, reply, KEYS, async (trx, session) => {
        await ownKey(trx, session, request.params.id);
        const key = await rotateKey(trx, request.params.id);
        return { redirect: KEYS, page: { template: 'key-created', data: { key } }, afterCommit: publish };
      }),
  );

  app.post(
    at(`${KEYS}/:id/revoke`),
    { config: owner, schema: { hide: true, params: IdParams, body: TokenForm } },
    async (request, reply) =>
      dashboardWrite(request, reply, KEYS, async (trx, session) => {
        await ownKey(trx, session, request.params.id);
        await setKeyStatus(trx, request.params.id, 'revoked');
        return { redirect: KEYS, afterCommit: publish };
      }),
  );

  app.get(at(WEBHOOKS), { config: view, schema: { hide: true, querystring: FlashQuery } }, async (request, reply) => {
    const session = requireSession(request);
    const list = await endpoints.listEndpoints(db, callerOf(session), { limit: endpoints.MAX_ENDPOINTS, offset: 0 });
    return sendPage(request, reply, 'webhooks', { endpoints: list.items, eventNames: EVENT_NAMES });
  });

  app.post(at(WEBHOOKS), { config: owner, schema: { hide: true, body: EndpointForm } }, async (request, reply) => {
    const session = requireSession(request);
    const caller = callerOf(session);
    let checked: { url: string; events: string[] };
    try {
      // DNS is asked before the transaction opens, as the API does.
      checked = {
        events: endpoints.checkEvents(many(request.body.events), caller.scopes),
        url: await endpoints.checkWebhookUrl(
          request.body.url,
          endpoints.allowsPrivate(session.environment, config.webhookAllowPrivate),
        ),
      };
    } catch (error) {
      if (error instanceof ApiError) return reply.redirect(`${WEBHOOKS}?error=${error.code}`, 303);
      throw error;
    }
    return dashboardWrite(request, reply, WEBHOOKS, async (trx) => {
      const endpoint = await endpoints.createEndpoint(trx, caller, checked);
      return { redirect: WEBHOOKS, page: { template: 'endpoint-created', data: { endpoint } } };
    });
  });

  const endpointPath = (id: string) => `${WEBHOOKS}/${encodeURIComponent(id)}`;

  app.get(
    at(`${WEBHOOKS}/:id`),
    { config: view, schema: { hide: true, params: IdParams, querystring: FlashQuery } },
    async (request, reply) => {
      const session = requireSession(request);
      const caller = callerOf(session);
      const endpoint = endpoints.endpointView(await endpoints.findEndpoint(db, caller, request.params.id));
      const recent = await listDeliveries(db, caller, { endpointId: endpoint.id }, { limit: 10, offset: 0 });
      return sendPage(request, reply, 'endpoint', {
        endpoint,
        eventNames: EVENT_NAMES,
        deliveries: withHealth(recent.items),
      });
    },
  );

  app.post(
    at(`${WEBHOOKS}/:id`),
    { config: owner, schema: { hide: true, params: IdParams, body: EventsForm } },
    async (request, reply) => {
      const back = endpointPath(request.params.id);
      return dashboardWrite(request, reply, back, async (trx, _session, caller) => {
        const events = endpoints.checkEvents(many(request.body.events), caller.scopes);
        if (events.length === 0) throw invalid('events', 'must name at least one event');
        await endpoints.updateEndpoint(trx, caller, request.params.id, { events: [...new Set(events)] });
        return { redirect: back };
      });
    },
  );

  for (const [action, active] of [
    ['disable', false],
    ['enable', true],
  ] as const) {
    app.post(
      at(`${WEBHOOKS}/:id/${action}`),
      { config: owner, schema: { hide: true, params: IdParams, body: TokenForm } },
      async (request, reply) => {
        const back = endpointPath(request.params.id);
        return dashboardWrite(request, reply, back, async (trx, _session, caller) => {
          await endpoints.updateEndpoint(trx, caller, request.params.id, { active });
          return { redirect: back };
        });
      },
    );
  }

  app.post(
    at(`${WEBHOOKS}/:id/rotate`),
    { config: owner, schema: { hide: true, params: IdParams, body: TokenForm } },
    async (request, reply) => {
      const back = endpointPath(request.params.id);
      return dashboardWrite(request, reply, back, async (trx, _session, caller) => {
        const endpoint = await endpoints.rotateSecret(trx, caller, request.params.id);
        return { redirect: back, page: { template: 'endpoint-created', data: { endpoint, rotated: true } } };
      });
    },
  );

  app.post(
    at(`${WEBHOOKS}/:id/ping`),
    { config: owner, schema: { hide: true, params: IdParams, body: TokenForm } },
    async (request, reply) =>
      dashboardWrite(request, reply, endpointPath(request.params.id), async (trx, _session, caller) => {
        const deliveryId = await endpoints.sendPing(trx, caller, request.params.id);
        return { redirect: `${DELIVERIES}/${encodeURIComponent(deliveryId)}` };
      }),
  );

  app.get(
    at(DELIVERIES),
    { config: view, schema: { hide: true, querystring: DeliveriesQuery } },
    async (request, reply) => {
      const session = requireSession(request);
      const caller = callerOf(session);
      const { status, event, endpoint } = request.query;
      // An empty date field of the filter form means no bound; anything else is read as the API reads it.
      const fromText = request.query.from || undefined;
      const toText = request.query.to || undefined;
      const from = parseDateFilter(fromText, 'from');
      const to = parseDateFilter(toText, 'to');
      const page = request.query.page ?? 1;
      const [result, endpointList] = await Promise.all([
        listDeliveries(
          db,
          caller,
          {
            ...(status ? { status } : {}),
            ...(event ? { event } : {}),
            ...(endpoint ? { endpointId: endpoint } : {}),
            ...(from ? { from } : {}),
            ...(to ? { to } : {}),
          },
          { limit: PAGE_SIZE, offset: (page - 1) * PAGE_SIZE },
        ),
        endpoints.listEndpoints(db, caller, { limit: endpoints.MAX_ENDPOINTS, offset: 0 }),
      ]);
      const filters = new URLSearchParams();
      for (const [name, value] of Object.entries({ status, event, endpoint, from: fromText, to: toText }))
        if (value) filters.set(name, value);
      return sendPage(request, reply, 'deliveries', {
        deliveries: withHealth(result.items),
        total: result.total,
        page,
        pages: Math.max(1, Math.ceil(result.total / PAGE_SIZE)),
        filters: {
          status: status ?? '',
          event: event ?? '',
          endpoint: endpoint ?? '',
          from: fromText ?? '',
          to: toText ?? '',
        },
        filterQuery: filters.toString(),
        statuses: DELIVERY_STATUSES,
        eventNames: EVENT_NAMES,
        endpoints: endpointList.items,
      });
    },
  );

  app.get(
    at(`${DELIVERIES}/:id`),
    { config: view, schema: { hide: true, params: IdParams, querystring: FlashQuery } },
    async (request, reply) => {
      const delivery = await getDelivery(db, callerOf(requireSession(request)), request.params.id);
      return sendPage(request, reply, 'delivery', {
        delivery,
        failing: isFailing(delivery),
        payload: JSON.stringify(delivery.payload, null, 2),
      });
    },
  );

  app.post(
    at(`${DELIVERIES}/:id/retry`),
    { config: owner, schema: { hide: true, params: IdParams, body: TokenForm } },
    async (request, reply) => {
      const back = `${DELIVERIES}/${encodeURIComponent(request.params.id)}`;
      return dashboardWrite(request, reply, back, async (trx, _session, caller) => {
        await retryDelivery(trx, caller, request.params.id);
        return { redirect: back };
      });
    },
  );

  app.get(
    at(`${DASHBOARD}/developers/events`),
    { config: view, schema: { hide: true, querystring: EventsQuery } },
    async (request, reply) => {
      const session = requireSession(request);
      // Newest first by insertion, a page at a time from a cursor (the last `seq` shown): the log
      // grows with every write, and neither counting it nor skipping an offset stays cheap.
      let query = db
        .selectFrom('events')
        .select(['id', 'event', 'subject', 'created_at', 'body', 'seq'])
        .where('business_id', '=', session.businessId)
        .where('environment', '=', session.environment);
      if (request.query.event) query = query.where('event', '=', request.query.event);
      if (request.query.before !== undefined) query = query.where('seq', '<', request.query.before);
      const rows = await query
        .orderBy('seq', 'desc')
        .limit(PAGE_SIZE + 1)
        .execute();
      const events = rows.slice(0, PAGE_SIZE);
      return sendPage(request, reply, 'events', {
        events,
        older: rows.length > PAGE_SIZE ? events[events.length - 1]!.seq : null,
        newest: request.query.before !== undefined,
        event: request.query.event ?? '',
        eventNames: EVENT_NAMES,
      });
    },
  );
};
