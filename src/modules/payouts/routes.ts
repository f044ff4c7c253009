import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requireAuth } from '../../http/context.js';
import { toApiError } from '../../http/error-handler.js';
import { API_WRITE, write } from '../../http/idempotency/plugin.js';
import { Envelope, Paginated, Pagination, pageWindow, parseDateFilter } from '../../http/schemas.js';
import { balanceTransactionView } from '../payments/balance-transactions.js';
import { BalanceTransaction } from '../payments/balance-routes.js';
import {
  BATCH_BODY_LIMIT_BYTES,
  BatchParams,
  CreateBatchBody,
  CreatedBatch,
  CreatePayoutBody,
  ListPayoutsQuery,
  Payout,
  PayoutBatch,
  ReferenceParams,
} from './schemas.js';
import * as payouts from './service.js';
import { batchView, payoutView } from './views.js';

const tags = ['Payouts'];
const NoBody = Type.Object({}, { additionalProperties: false });

const page = <T>(items: T[], window: { page: number; limit: number; offset: number }, total: number) => ({
  items,
  page: window.page,
  limit: window.limit,
  total,
  hasMore: window.offset + items.length < total,
});

/** Payouts to wallets, single and in batches (issue 35), with the transactions each settles. */
export const payoutRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db, config } = app.services;
  const limits = { maxAmount: config.intentMaxAmount, maxPendingSandbox: config.sandboxPendingPayoutsMax };

  app.post(
    '/payouts',
    {
      config: { auth: 'secret', scope: 'payouts:write', write: API_WRITE },
      schema: { tags, body: CreatePayoutBody, response: { 201: Envelope(Payout) } },
    },
    async (request, reply) =>
      write(request, reply, 201, async (trx) =>
        payoutView(await payouts.createPayout(trx, requireAuth(request.auth), request.body, limits)),
      ),
  );

  /**
   * A batch's route: its schema's refusals reach the handler (`attachValidation`), so that one
   * answer names every bad item, the schema's problems and the limits' together. The alias
   * `/payouts/batch` is the path batches were created at first, kept for the clients that use it.
   */
  const createBatch = (deprecated: boolean) =>
    app.post(
      deprecated ? '/payouts/batch' : '/payouts/batches',
      {
        config: { auth: 'secret', scope: 'payouts:write', write: API_WRITE },
        bodyLimit: BATCH_BODY_LIMIT_BYTES,
        attachValidation: true,
        schema: {
          tags,
          body: CreateBatchBody,
          response: { 201: Envelope(CreatedBatch) },
          ...(deprecated ? { deprecated: true } : {}),
        },
      },
      async (request, reply) => {
        const schemaError = request.validationError ? toApiError(request.validationError, request) : undefined;
        payouts.checkBatchRequest(request.body, schemaError, limits.maxAmount);
        return write(request, reply, 201, async (trx) => {
          const created = await payouts.createPayoutBatch(trx, requireAuth(request.auth), request.body.items, limits);
          return {
            ...batchView(created.batch, { PENDING: created.payouts.length }),
            payouts: created.payouts.map(payoutView),
          };
        });
      },
    );
  createBatch(false);
  createBatch(true);

  app.get(
    '/payouts/batches/:id',
    {
      config: { auth: 'secret', scope: 'payouts:read' },
      schema: { tags, params: BatchParams, response: { 200: Envelope(PayoutBatch) } },
    },
    async (request) => {
      const found = await payouts.getPayoutBatch(db, requireAuth(request.auth), request.params.id);
      return { success: true as const, data: batchView(found.batch, found.counts) };
    },
  );

  app.get(
    '/payouts',
    {
      config: { auth: 'secret', scope: 'payouts:read' },
      schema: { tags, querystring: ListPayoutsQuery, response: { 200: Envelope(Paginated(Payout)) } },
    },
    async (request) => {
      const window = pageWindow(request.query);
      const result = await payouts.listPayouts(db, requireAuth(request.auth), {
        status: request.query.status,
        batch: request.query.batch,
        from: parseDateFilter(request.query.from, 'from'),
        to: parseDateFilter(request.query.to, 'to'),
        limit: window.limit,
        offset: window.offset,
      });
      return { success: true as const, data: page(result.items.map(payoutView), window, result.total) };
    },
  );

  app.get(
    '/payouts/:referenceNumber',
    {
      config: { auth: 'secret', scope: 'payouts:read' },
      schema: { tags, params: ReferenceParams, response: { 200: Envelope(Payout) } },
    },
    async (request) => ({
      success: true as const,
      data: payoutView(await payouts.getPayout(db, requireAuth(request.auth), request.params.referenceNumber)),
    }),
  );

  app.get(
    '/payouts/:referenceNumber/transactions',
    {
      config: { auth: 'secret', scope: 'payouts:read' },
      schema: {
        tags,
        params: ReferenceParams,
        querystring: Type.Object({ ...Pagination }, { additionalProperties: false }),
        response: { 200: Envelope(Paginated(BalanceTransaction)) },
      },
    },
    async (request) => {
      const window = pageWindow(request.query);
      const result = await payouts.payoutTransactions(
        db,
        requireAuth(request.auth),
        request.params.referenceNumber,
        window,
      );
      return { success: true as const, data: page(result.items.map(balanceTransactionView), window, result.total) };
    },
  );

  app.post(
    '/payouts/:referenceNumber/cancel',
    {
      config: { auth: 'secret', scope: 'payouts:write', write: API_WRITE },
      schema: { tags, params: ReferenceParams, body: NoBody, response: { 200: Envelope(Payout) } },
    },
    async (request, reply) =>
      write(request, reply, 200, async (trx) =>
        payoutView(await payouts.cancelPayout(trx, requireAuth(request.auth), request.params.referenceNumber)),
      ),
  );
};
