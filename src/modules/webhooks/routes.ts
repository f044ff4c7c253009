import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { requireAuth, type ScopedCaller } from '../../http/context.js';
import { ApiError } from '../../http/errors.js';
import { API_WRITE, write } from '../../http/idempotency/plugin.js';
import { Envelope, Paginated, pageWindow, parseDateFilter } from '../../http/schemas.js';
import { WEBHOOK_RECOVER_BATCH } from '../../config.js';
import { getDelivery, listDeliveries, recoverDeliveries, retryDelivery } from './deliveries.js';
import * as endpoints from './endpoints.js';
import { endpointDetails } from '../audit/acts.js';
import { recordAct } from '../audit/record.js';
import { checkEndpointScopes } from './scopes.js';
import {
  CreateEndpointBody,
  Deleted,
  DeliveriesQuery,
  Delivery,
  DeliveryDetail,
  Endpoint,
  EndpointParams,
  EndpointStats,
  ListQuery,
  NoBody,
  RecoverBody,
  Recovered,
  UpdateEndpointBody,
} from './schemas.js';
import { endpointStats } from './stats.js';

const tags = ['Webhooks'];
const ENDPOINT_CODES = ['ENDPOINT_NOT_FOUND', 'SANDBOX_MISMATCH'] as const;

/** A body date in the form of the date filters: a plain day is its start (`from`) or its end (`to`). */
function bodyDate(value: string, field: string, bound: 'from' | 'to'): Date {
  const dateOnly = value.length === 10;
  const date = new Date(dateOnly ? `${value}T${bound === 'from' ? '00:00:00.000' : '23:59:59.999'}Z` : value);
  if (Number.isNaN(date.getTime()) || date.toISOString().slice(0, 10) !== value.slice(0, 10)) {
    throw new ApiError('VALIDATION_ERROR', `body.${field} is not a valid date.`, [
      { field: `body.${field}`, message: 'is not a valid date' },
    ]);
  }
  return date;
}

function caller(request: FastifyRequest): ScopedCaller {
  const auth = requireAuth(request.auth);
  return { businessId: auth.businessId, environment: auth.environment, scopes: auth.scopes };
}

export const webhookRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db, config } = app.services;
  const allowPrivate = (request: FastifyRequest) =>
    endpoints.allowsPrivate(requireAuth(request.auth).environment, config.webhookAllowPrivate);
  const read = { auth: 'secret', scope: 'webhooks:read' } as const;
  const writeRoute = { auth: 'secret', scope: 'webhooks:write', write: API_WRITE } as const;

  app.post(
    '/webhooks/endpoints',
    {
      config: {
        ...writeRoute,
        errorCodes: ['MAX_ENDPOINTS_REACHED', 'EVENTS_NOT_PERMITTED', 'INVALID_WEBHOOK_EVENT', 'INVALID_WEBHOOK_URL'],
        openapi: {
          requestExample: {
            url: 'https://shop.example.com/hooks/commerce',
            events: ['payment.confirmed', 'order.new'],
          },
        },
      },
      schema: {
        operationId: 'createWebhookEndpoint',
        summary: 'Create a webhook endpoint',
        description:
          'Subscribes a public https URL to events. The answer carries the signing `secret`, shown once. At most 5 endpoints.',
        tags,
        body: CreateEndpointBody,
        response: { 201: Envelope(Endpoint) },
      },
    },
    async (request, reply) => {
      const events = endpoints.checkEvents(request.body.events, caller(request).scopes);
      // DNS is asked before the transaction opens: no network call inside one.
      const url = await endpoints.checkWebhookUrl(request.body.url, allowPrivate(request));
      const { signatureScheme, maxPerSecond } = request.body;
      return write(request, reply, 201, async (trx) => {
        const created = await endpoints.createEndpoint(trx, caller(request), {
          url,
          events,
          ...(signatureScheme !== undefined ? { signatureScheme } : {}),
          ...(maxPerSecond !== undefined ? { maxPerSecond } : {}),
        });
        const target = { kind: 'webhook_endpoint', id: created.id };
        await recordAct(trx, request, {
          action: 'webhook_endpoint.created',
          target,
          details: endpointDetails({ url, events }),
        });
        return created;
      });
    },
  );

  const listDocs = {
    '/webhooks/endpoints': {
      operationId: 'listWebhookEndpoints',
      summary: 'List webhook endpoints',
      description: "The endpoints of the key's environment, without their secrets.",
    },
    '/webhooks': {
      operationId: 'listWebhooks',
      summary: 'List webhook endpoints (alias)',
      description: 'The same list as `GET /webhooks/endpoints`.',
    },
  };
  for (const path of ['/webhooks', '/webhooks/endpoints'] as const) {
    app.get(
      path,
      {
        config: read,
        schema: { ...listDocs[path], tags, querystring: ListQuery, response: { 200: Envelope(Paginated(Endpoint)) } },
      },
      async (request) => {
        const { page, limit, offset } = pageWindow(request.query);
        const result = await endpoints.listEndpoints(db, caller(request), { limit, offset });
        return {
          success: true as const,
          data: { ...result, page, limit, hasMore: offset + result.items.length < result.total },
        };
      },
    );
  }

  app.get(
    '/webhooks/endpoints/:id',
    {
      config: { ...read, errorCodes: ENDPOINT_CODES },
      schema: {
        operationId: 'retrieveWebhookEndpoint',
        summary: 'Retrieve a webhook endpoint',
        description: 'One endpoint, without its secret.',
        tags,
        params: EndpointParams,
        response: { 200: Envelope(Endpoint) },
      },
    },
    async (request) => ({
      success: true as const,
      data: endpoints.endpointView(await endpoints.findEndpoint(db, caller(request), request.params.id)),
    }),
  );

  app.patch(
    '/webhooks/endpoints/:id',
    {
      config: {
        ...writeRoute,
        errorCodes: [...ENDPOINT_CODES, 'EVENTS_NOT_PERMITTED', 'INVALID_WEBHOOK_EVENT', 'INVALID_WEBHOOK_URL'],
        openapi: { requestExample: { active: true } },
      },
      schema: {
        operationId: 'updateWebhookEndpoint',
        summary: 'Update a webhook endpoint',
        description:
          'Changes the URL, the events, the rate or `active`. Disabling it (`active: false`) ends its waiting deliveries DEAD with `deadReason` ENDPOINT_DISABLED; re-enabling it sends new events only (recover the rest). A key whose scopes do not allow every event the endpoint is subscribed to (or every event asked for) cannot change it: EVENTS_NOT_PERMITTED.',
        tags,
        params: EndpointParams,
        body: UpdateEndpointBody,
        response: { 200: Envelope(Endpoint) },
      },
    },
    async (request, reply) => {
      const who = caller(request);
      // Refused before DNS is asked; checked again under the lock.
      checkEndpointScopes(await endpoints.findEndpoint(db, who, request.params.id), who, 'change');
      const { url, events, active, maxPerSecond } = request.body;
      const checked = {
        ...(events !== undefined ? { events: endpoints.checkEvents(events, who.scopes) } : {}),
        ...(url !== undefined ? { url: await endpoints.checkWebhookUrl(url, allowPrivate(request)) } : {}),
        ...(active !== undefined ? { active } : {}),
        ...(maxPerSecond !== undefined ? { maxPerSecond } : {}),
      };
      return write(request, reply, 200, async (trx) => {
        const updated = await endpoints.updateEndpoint(trx, who, request.params.id, checked);
        const target = { kind: 'webhook_endpoint', id: updated.id };
        await recordAct(trx, request, {
          action: 'webhook_endpoint.updated',
          target,
          details: { changed: Object.keys(checked) },
        });
        return updated;
      });
    },
  );

  app.delete(
    '/webhooks/endpoints/:id',
    {
      config: { ...writeRoute, errorCodes: [...ENDPOINT_CODES, 'EVENTS_NOT_PERMITTED'] },
      schema: {
        operationId: 'deleteWebhookEndpoint',
        summary: 'Delete a webhook endpoint',
        description:
          'Stops its deliveries: the waiting ones end DEAD with `deadReason` ENDPOINT_DELETED. Its delivery log stays readable. EVENTS_NOT_PERMITTED if the scopes of the key do not allow every event the endpoint is subscribed to.',
        tags,
        params: EndpointParams,
        response: { 200: Envelope(Deleted) },
      },
    },
    async (request, reply) =>
      write(request, reply, 200, async (trx) => {
        const deleted = await endpoints.deleteEndpoint(trx, caller(request), request.params.id);
        const target = { kind: 'webhook_endpoint', id: request.params.id };
        await recordAct(trx, request, { action: 'webhook_endpoint.deleted', target });
        return deleted;
      }),
  );

  app.post(
    '/webhooks/endpoints/:id/rotate-secret',
    {
      config: { ...writeRoute, errorCodes: [...ENDPOINT_CODES, 'EVENTS_NOT_PERMITTED'] },
      schema: {
        operationId: 'rotateWebhookEndpointSecret',
        summary: 'Rotate an endpoint secret',
        description:
          'Issues a new secret (in the answer). The old one keeps signing alongside for 24 hours: deliveries then carry both signatures. EVENTS_NOT_PERMITTED if the scopes of the key do not allow every event the endpoint is subscribed to.',
        tags,
        params: EndpointParams,
        body: NoBody,
        response: { 200: Envelope(Endpoint) },
      },
    },
    async (request, reply) =>
      write(request, reply, 200, async (trx) => {
        const rotated = await endpoints.rotateSecret(trx, caller(request), request.params.id);
        const target = { kind: 'webhook_endpoint', id: rotated.id };
        await recordAct(trx, request, { action: 'webhook_endpoint.secret_rotated', target });
        return rotated;
      }),
  );

  app.post(
    '/webhooks/endpoints/:id/test',
    {
      config: { ...writeRoute, errorCodes: [...ENDPOINT_CODES, 'ENDPOINT_INACTIVE'] },
      schema: {
        operationId: 'testWebhookEndpoint',
        summary: 'Send a test event',
        description:
          'Sends a `ping` event to this endpoint only and answers its delivery (PENDING: no attempt yet). A disabled endpoint answers ENDPOINT_INACTIVE and gets nothing.',
        tags,
        params: EndpointParams,
        body: NoBody,
        response: { 200: Envelope(DeliveryDetail) },
      },
    },
    async (request, reply) =>
      write(request, reply, 200, async (trx) => {
        const deliveryId = await endpoints.sendPing(trx, caller(request), request.params.id);
        return getDelivery(trx, caller(request), deliveryId);
      }),
  );

  app.post(
    '/webhooks/endpoints/:id/recover',
    {
      config: {
        ...writeRoute,
        errorCodes: [...ENDPOINT_CODES, 'ENDPOINT_INACTIVE', 'EVENTS_NOT_PERMITTED'],
        openapi: { requestExample: { since: '2026-01-01' } },
      },
      schema: {
        operationId: 'recoverWebhookEndpoint',
        summary: 'Recover failed deliveries',
        description: `Queues again, each on a fresh 8-attempt schedule (PENDING), the DEAD deliveries of the endpoint created in a window, whatever their \`deadReason\` (at most ${WEBHOOK_RECOVER_BATCH.toLocaleString('en')} per call; \`remaining\` says how many are left). A disabled endpoint answers ENDPOINT_INACTIVE: re-enable it first. EVENTS_NOT_PERMITTED if the scopes of the key do not allow every event the endpoint is subscribed to.`,
        tags,
        params: EndpointParams,
        body: RecoverBody,
        response: { 200: Envelope(Recovered) },
      },
    },
    async (request, reply) => {
      const since = bodyDate(request.body.since, 'since', 'from');
      const until = request.body.until === undefined ? new Date() : bodyDate(request.body.until, 'until', 'to');
      if (until < since) {
        throw new ApiError('VALIDATION_ERROR', 'body.until is before body.since.', [
          { field: 'body.until', message: 'is before since' },
        ]);
      }
      return write(request, reply, 200, async (trx) => {
        const endpoint = await endpoints.lockEndpoint(
          trx,
          caller(request),
          request.params.id,
          'recover the deliveries of',
        );
        if (!endpoint.active) {
          throw new ApiError(
            'ENDPOINT_INACTIVE',
            'This webhook endpoint is disabled: re-enable it (PATCH active: true) before recovering its deliveries.',
          );
        }
        const result = await recoverDeliveries(trx, endpoint, { since, until }, config.webhookRecoverBatch);
        return { endpointId: endpoint.id, since: since.toISOString(), until: until.toISOString(), ...result };
      });
    },
  );

  app.get(
    '/webhooks/endpoints/:id/stats',
    {
      config: { ...read, errorCodes: ENDPOINT_CODES },
      schema: {
        operationId: 'retrieveWebhookEndpointStats',
        summary: 'Endpoint delivery statistics',
        description: 'Backlog, last error, success rate and latency over the last 24 hours and 7 days.',
        tags,
        params: EndpointParams,
        response: { 200: Envelope(EndpointStats) },
      },
    },
    async (request) => {
      const endpoint = await endpoints.findEndpoint(db, caller(request), request.params.id);
      return { success: true as const, data: await endpointStats(db, endpoint) };
    },
  );

  app.get(
    '/webhooks/events',
    {
      config: read,
      schema: {
        operationId: 'listWebhookDeliveries',
        summary: 'List deliveries',
        description:
          'The delivery log, newest first. A delivery is PENDING (no attempt yet), FAILED (its last attempt failed and the next is scheduled: `nextAttemptAt`), SUCCEEDED, or DEAD (no attempt will follow; `deadReason` MAX_ATTEMPTS, ENDPOINT_DISABLED or ENDPOINT_DELETED). Filters by status, event name, endpoint, event id (`eventId`: the envelope `id` a receiver saw) and date. Only the deliveries of events the scopes of the key may read are listed (as in `GET /events`); webhook notices (ping, endpoint.disabled) are always.',
        tags,
        querystring: DeliveriesQuery,
        response: { 200: Envelope(Paginated(Delivery)) },
      },
    },
    async (request) => {
      const { page, limit, offset } = pageWindow(request.query);
      const { status, event, endpointId, eventId } = request.query;
      const from = parseDateFilter(request.query.from, 'from');
      const to = parseDateFilter(request.query.to, 'to');
      const result = await listDeliveries(
        db,
        caller(request),
        {
          ...(status ? { status } : {}),
          ...(event ? { event } : {}),
          ...(endpointId ? { endpointId } : {}),
          ...(eventId ? { eventId } : {}),
          ...(from ? { from } : {}),
          ...(to ? { to } : {}),
        },
        { limit, offset },
      );
      return {
        success: true as const,
        data: { ...result, page, limit, hasMore: offset + result.items.length < result.total },
      };
    },
  );

  app.get(
    '/webhooks/events/:id',
    {
      config: { ...read, errorCodes: ['DELIVERY_NOT_FOUND', 'SANDBOX_MISMATCH', 'ENDPOINT_NOT_FOUND'] },
      schema: {
        operationId: 'retrieveWebhookDelivery',
        summary: 'Retrieve a delivery',
        description:
          'One delivery with every attempt (request headers, answer) and the payload as delivered. A delivery of an event the scopes of the key may not read answers DELIVERY_NOT_FOUND, as `GET /events/{id}` does.',
        tags,
        params: EndpointParams,
        response: { 200: Envelope(DeliveryDetail) },
      },
    },
    async (request) => ({ success: true as const, data: await getDelivery(db, caller(request), request.params.id) }),
  );

  app.post(
    '/webhooks/events/:id/retry',
    {
      config: {
        ...writeRoute,
        errorCodes: [
          'DELIVERY_NOT_FOUND',
          'SANDBOX_MISMATCH',
          'ENDPOINT_NOT_FOUND',
          'ENDPOINT_INACTIVE',
          'EVENTS_NOT_PERMITTED',
        ],
      },
      schema: {
        operationId: 'retryWebhookDelivery',
        summary: 'Retry a delivery',
        description:
          'Attempts the delivery again now, in any state: a PENDING or FAILED one keeps its schedule, a SUCCEEDED or DEAD one starts a fresh 8-attempt schedule (PENDING). Its endpoint must be active (ENDPOINT_INACTIVE otherwise). A delivery of an event the key may not read answers DELIVERY_NOT_FOUND; one of an endpoint subscribed to events its scopes do not allow, EVENTS_NOT_PERMITTED.',
        tags,
        params: EndpointParams,
        body: NoBody,
        response: { 200: Envelope(DeliveryDetail) },
      },
    },
    async (request, reply) =>
      write(request, reply, 200, (trx) => retryDelivery(trx, caller(request), request.params.id)),
  );
};
