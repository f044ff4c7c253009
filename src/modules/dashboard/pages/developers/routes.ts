import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ApiError, invalid } from '../../../../http/errors.js';
import { literalUnion, parseDateFilter } from '../../../../http/schemas.js';
import { EVENT_NAMES } from '../../../events/catalog.js';
import { getDelivery, listDeliveries, retryDelivery } from '../../../webhooks/deliveries.js';
import { isFailing, withHealth } from '../../delivery-health.js';
import * as endpoints from '../../../webhooks/endpoints.js';
import { at, callerOf, DASHBOARD, requireSession, sendPage } from '../../context.js';
import { endpointDetails } from '../../../audit/acts.js';
import { recordAct } from '../../../audit/record.js';
import { dashboardWrite, Token, Flash } from '../../write.js';
import { FORM_WRITE } from '../../../../http/idempotency/plugin.js';
import { DELIVERY_STATUSES } from '../../../webhooks/delivery-state.js';
import { keyPages, many } from './keys.js';
import { pageQuery } from '../../page-query.js';

const PAGE_SIZE = 25;

const FlashQuery = pageQuery(Flash);
const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
const TokenForm = Type.Object(Token, { additionalProperties: false });
/** A checkbox group arrives as one string or an array of them. */
const Many = (maxLength: number) =>
  Type.Optional(Type.Union([Type.String({ maxLength }), Type.Array(Type.String({ maxLength }), { maxItems: 50 })]));
const EndpointForm = Type.Object(
  { ...Token, url: Type.String({ minLength: 1, maxLength: 2048 }), events: Many(60) },
  { additionalProperties: false },
);
const EventsForm = Type.Object({ ...Token, events: Many(60) }, { additionalProperties: false });
const DeliveriesQuery = pageQuery({
  ...Flash,
  from: Type.Optional(Type.String({ maxLength: 40 })),
  to: Type.Optional(Type.String({ maxLength: 40 })),
  status: Type.Optional(literalUnion(['', ...DELIVERY_STATUSES])),
  event: Type.Optional(Type.String({ maxLength: 60 })),
  endpoint: Type.Optional(Type.String({ maxLength: 64 })),
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
});
const EventsQuery = pageQuery({
  event: Type.Optional(Type.String({ maxLength: 60 })),
  before: Type.Optional(Type.Integer({ minimum: 1 })),
});

const WEBHOOKS = `${DASHBOARD}/developers/webhooks`;
const DELIVERIES = `${DASHBOARD}/developers/deliveries`;

export const developerPages: FastifyPluginAsyncTypebox = async (app) => {
  await app.register(keyPages);
  const { db, config } = app.services;
  const manage = { dashboard: 'developers.manage', write: FORM_WRITE } as const;
  const view = { dashboard: 'developers.manage' } as const;

  app.get(at(WEBHOOKS), { config: view, schema: { hide: true, querystring: FlashQuery } }, async (request, reply) => {
    const session = requireSession(request);
    const list = await endpoints.listEndpoints(db, callerOf(session), { limit: endpoints.MAX_ENDPOINTS, offset: 0 });
    return sendPage(request, reply, 'webhooks', { endpoints: list.items, eventNames: EVENT_NAMES });
  });

  app.post(at(WEBHOOKS), { config: manage, schema: { hide: true, body: EndpointForm } }, async (request, reply) => {
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
      const target = { kind: 'webhook_endpoint', id: endpoint.id };
      await recordAct(trx, request, { action: 'webhook_endpoint.created', target, details: endpointDetails(checked) });
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
    { config: manage, schema: { hide: true, params: IdParams, body: EventsForm } },
    async (request, reply) => {
      const back = endpointPath(request.params.id);
      return dashboardWrite(request, reply, back, async (trx, _session, caller) => {
        const events = endpoints.checkEvents(many(request.body.events), caller.scopes);
        if (events.length === 0) throw invalid('events', 'must name at least one event');
        await endpoints.updateEndpoint(trx, caller, request.params.id, { events: [...new Set(events)] });
        const target = { kind: 'webhook_endpoint', id: request.params.id };
        await recordAct(trx, request, { action: 'webhook_endpoint.updated', target, details: { changed: ['events'] } });
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
      { config: manage, schema: { hide: true, params: IdParams, body: TokenForm } },
      async (request, reply) => {
        const back = endpointPath(request.params.id);
        return dashboardWrite(request, reply, back, async (trx, _session, caller) => {
          await endpoints.updateEndpoint(trx, caller, request.params.id, { active });
          const target = { kind: 'webhook_endpoint', id: request.params.id };
          await recordAct(trx, request, { action: 'webhook_endpoint.updated', target, details: { active } });
          return { redirect: back };
        });
      },
    );
  }

  app.post(
    at(`${WEBHOOKS}/:id/rotate`),
    { config: manage, schema: { hide: true, params: IdParams, body: TokenForm } },
    async (request, reply) => {
      const back = endpointPath(request.params.id);
      return dashboardWrite(request, reply, back, async (trx, _session, caller) => {
        const endpoint = await endpoints.rotateSecret(trx, caller, request.params.id);
        const target = { kind: 'webhook_endpoint', id: endpoint.id };
        await recordAct(trx, request, { action: 'webhook_endpoint.secret_rotated', target });
        return { redirect: back, page: { template: 'endpoint-created', data: { endpoint, rotated: true } } };
      });
    },
  );

  app.post(
    at(`${WEBHOOKS}/:id/ping`),
    { config: manage, schema: { hide: true, params: IdParams, body: TokenForm } },
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
    { config: manage, schema: { hide: true, params: IdParams, body: TokenForm } },
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
