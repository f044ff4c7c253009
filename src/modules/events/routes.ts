import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { setTimeout as sleep } from 'node:timers/promises';
import { requireAuth } from '../../http/context.js';
import { ApiError } from '../../http/errors.js';
import { Envelope, Paginated, pageWindow } from '../../http/schemas.js';
import { EventParams, EventResource, EventsQuery } from './schemas.js';
import type { ScopedCaller } from '../../http/context.js';
import { getEvent, listEvents } from './service.js';

const tags = ['Events'];
/** How often a long-polling request looks for a new event. */
const LONG_POLL_CHECK_MS = 200;

function caller(request: FastifyRequest): ScopedCaller {
  const auth = requireAuth(request.auth);
  return { businessId: auth.businessId, environment: auth.environment, scopes: auth.scopes };
}

/** The Events API: what webhooks deliver, readable and pollable (`commerce listen` follows it). */
export const eventRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app.services;
  const read = { auth: 'secret', scope: 'webhooks:read' } as const;
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });

  app.get(
    '/events',
    {
      config: { ...read, errorCodes: ['EVENT_NOT_FOUND'] },
      schema: {
        operationId: 'listEvents',
        summary: 'List events',
        description:
          "The events of the key's business and environment, of the types its scopes may read. Newest first with `page`; or, with `after=evt_...`, the events that follow it oldest first (for polling consumers: pass the last id seen). Both follow one order, the order in which the events were committed: the pages read newest first are that order reversed, whatever the events' `createdAt` (events written together share one). Filters by `type` (a name or a `prefix.*`) and `object` (an intent, order or payout reference, a product id). Events are kept at least 30 days.",
        tags,
        querystring: EventsQuery,
        response: { 200: Envelope(Paginated(EventResource)) },
      },
    },
    async (request) => {
      const { page, limit, offset } = pageWindow(request.query);
      const { type, object, after } = request.query;
      if (after !== undefined && page !== 1) {
        throw new ApiError('VALIDATION_ERROR', 'query.page cannot be used with query.after: pass the last id seen.', [
          { field: 'query.page', message: 'must be 1 with after' },
        ]);
      }
      if (request.query.wait !== undefined && after === undefined) {
        throw new ApiError('VALIDATION_ERROR', 'query.wait needs query.after: the id of the last event seen.', [
          { field: 'query.wait', message: 'needs after' },
        ]);
      }
      const readPage = () =>
        listEvents(
          db,
          caller(request),
          { ...(type ? { type } : {}), ...(object ? { object } : {}), ...(after ? { after } : {}) },
          { limit, offset },
        );
      let result = await readPage();
      // Long polling: a consumer that is caught up waits here for the next event instead of asking
      // again and again; the read is repeated until one follows, the wait ends, the client leaves
      // or the server stops.
      const deadline = Date.now() + (request.query.wait ?? 0) * 1000;
      while (result.items.length === 0 && Date.now() < deadline && !closing && !request.raw.socket.destroyed) {
        await sleep(LONG_POLL_CHECK_MS);
        result = await readPage();
      }
      return {
        success: true as const,
        data: { ...result, page, limit, hasMore: offset + result.items.length < result.total },
      };
    },
  );

  app.get(
    '/events/:id',
    {
      config: { ...read, errorCodes: ['EVENT_NOT_FOUND', 'SANDBOX_MISMATCH'] },
      schema: {
        operationId: 'retrieveEvent',
        summary: 'Retrieve an event',
        description:
          'One event with its payload exactly as delivered to webhook endpoints. An event of the other environment answers SANDBOX_MISMATCH.',
        tags,
        params: EventParams,
        response: { 200: Envelope(EventResource) },
      },
    },
    async (request) => ({ success: true as const, data: await getEvent(db, caller(request), request.params.id) }),
  );
};
