import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { requireAuth } from '../../http/context.js';
import { API_WRITE, CommittedRefusal, write } from '../../http/idempotency/plugin.js';
import { Envelope, Paginated, pageOf, pageWindow, parseDateFilter } from '../../http/schemas.js';
import { ListPaymentsQuery, Payment } from '../payments/schemas.js';
import {
  CreateIntentBody,
  CreatedIntent,
  Intent,
  ListIntentsQuery,
  NoBody,
  ReferenceParams,
  RefundBody,
  SimulateBody,
} from './schemas.js';
import * as intents from './service.js';

/** `{pay_url}`: the PAY_URL setting, else PUBLIC_URL, else the origin the request came to. */
export function payBaseUrl(request: FastifyRequest): string {
  const { config } = request.server.services;
  return config.payUrl ?? config.publicUrl ?? `${request.protocol}://${request.host}`;
}

const tags = ['Payment intents'];

export const intentRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { database, db, config } = app.services;

  app.post(
    '/intents',
    {
      config: { auth: 'secret', scope: 'intents:write', write: API_WRITE },
      schema: { tags, body: CreateIntentBody, response: { 201: Envelope(CreatedIntent) } },
    },
    async (request, reply) =>
      write(request, reply, 201, async (trx) =>
        intents.intentView(
          await intents.createIntent(trx, requireAuth(request.auth), request.body, {
            maxAmount: config.intentMaxAmount,
            codeSpace: config.paymentCodeSpace,
          }),
          payBaseUrl(request),
        ),
      ),
  );

  app.get(
    '/intents/:referenceNumber',
    {
      config: { auth: 'publishable', scope: 'intents:read' },
      schema: { tags, params: ReferenceParams, response: { 200: Envelope(Intent) } },
    },
    async (request) => {
      const intent = await intents.getIntentView(database, requireAuth(request.auth), request.params.referenceNumber);
      return { success: true as const, data: intents.intentView(intent, payBaseUrl(request)) };
    },
  );

  app.get(
    '/intents',
    {
      config: { auth: 'publishable', scope: 'intents:read' },
      schema: { tags, querystring: ListIntentsQuery, response: { 200: Envelope(Paginated(Intent)) } },
    },
    async (request) => {
      const { page, limit, offset } = pageWindow(request.query);
      const from = parseDateFilter(request.query.from, 'from');
      const to = parseDateFilter(request.query.to, 'to');
      const result = await intents.listIntents(database, requireAuth(request.auth), {
        status: request.query.status,
        from,
        to,
        limit,
        offset,
      });
      const payBase = payBaseUrl(request);
      return {
        success: true as const,
        data: {
          items: result.items.map((intent) => intents.intentView(intent, payBase)),
          page,
          limit,
          total: result.total,
          hasMore: offset + result.items.length < result.total,
        },
      };
    },
  );

  app.get(
    '/intents/:referenceNumber/payments',
    {
      config: { auth: 'secret', scope: 'intents:read' },
      schema: {
        tags,
        params: ReferenceParams,
        querystring: ListPaymentsQuery,
        response: { 200: Envelope(Paginated(Payment)) },
      },
    },
    async (request) => {
      const window = pageWindow(request.query);
      const result = await intents.listIntentPayments(
        db,
        requireAuth(request.auth),
        request.params.referenceNumber,
        window,
      );
      return { success: true as const, data: pageOf(window, result) };
    },
  );

  app.post(
    '/intents/:referenceNumber/cancel',
    {
      config: { auth: 'secret', scope: 'intents:write', write: API_WRITE },
      schema: { tags, params: ReferenceParams, body: NoBody, response: { 200: Envelope(Intent) } },
    },
    async (request, reply) =>
      write(request, reply, 200, async (trx) =>
        intents.intentView(
          await intents.cancelIntent(trx, requireAuth(request.auth), request.params.referenceNumber),
          payBaseUrl(request),
        ),
      ),
  );

  app.post(
    '/intents/:referenceNumber/refund',
    {
      config: { auth: 'secret', scope: 'intents:write', write: API_WRITE },
      schema: { tags, params: ReferenceParams, body: RefundBody, response: { 200: Envelope(Intent) } },
    },
    async (request, reply) =>
      write(request, reply, 200, async (trx) =>
        intents.intentView(
          await intents.refundIntent(trx, requireAuth(request.auth), request.params.referenceNumber, request.body),
          payBaseUrl(request),
        ),
      ),
  );

  app.post(
    '/intents/:referenceNumber/simulate',
    {
      config: { auth: 'secret', scope: 'intents:write', sandboxOnly: true, write: API_WRITE },
      schema: { tags, params: ReferenceParams, body: SimulateBody, response: { 200: Envelope(Intent) } },
    },
    async (request, reply) =>
      write(request, reply, 200, async (trx) => {
        const simulated = await intents.simulatePayment(
          trx,
          requireAuth(request.auth),
          request.params.referenceNumber,
          request.body,
          config.intentMaxAmount,
        );
        return simulated instanceof CommittedRefusal ? simulated : intents.intentView(simulated, payBaseUrl(request));
      }),
  );

  app.post(
    '/intents/:referenceNumber/simulate-expiry',
    {
      config: { auth: 'secret', scope: 'intents:write', sandboxOnly: true, write: API_WRITE },
      schema: { tags, params: ReferenceParams, body: NoBody, response: { 200: Envelope(Intent) } },
    },
    async (request, reply) =>
      write(request, reply, 200, async (trx) =>
        intents.intentView(
          await intents.simulateExpiry(trx, requireAuth(request.auth), request.params.referenceNumber),
          payBaseUrl(request),
        ),
      ),
  );
};
