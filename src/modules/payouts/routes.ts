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
import {
  PAYOUT_BATCH,
  PAYOUT_BATCH_EXAMPLE,
  PAYOUT_RECONCILIATION,
  PAYOUT_SANDBOX,
  PAYOUT_SELLER,
  PAYOUT_SENDING,
} from './docs.js';
import { recordPayout, recordPayoutBatch } from '../audit/acts.js';
import * as payouts from './service.js';
import { batchView, payoutView } from './views.js';

const tags = ['Payouts'];
const PAYOUT_CODES = ['PAYOUT_NOT_FOUND', 'SANDBOX_MISMATCH'] as const;
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
      config: {
        auth: 'secret',
        scope: 'payouts:write',
        write: API_WRITE,
        errorCodes: [
          'AMOUNT_OUT_OF_RANGE',
          'METADATA_TOO_MANY_KEYS',
          'METADATA_VALUE_TOO_LONG',
          'INSUFFICIENT_FUNDS',
          'TOO_MANY_PENDING_PAYOUTS',
          'SELLER_NOT_FOUND',
          'SANDBOX_MISMATCH',
        ],
        openapi: {
          requestExample: {
            amount: 250000,
            destination: { type: 'WALLET', phone: '+22220000001' },
            description: 'Weekly payout',
            metadata: { week: '48' },
          },
        },
      },
      schema: {
        operationId: 'createPayout',
        summary: 'Create a payout',
        description: `Sends \`amount\` centimes from the merchant balance to a wallet. The payout fee is taken on top of the amount: the payout shows it as \`fee\`, and \`totalDebited\` (amount + fee) is what the balance gives, reserved at once (balance transactions \`payout\` and \`payout_fee\`). A balance that cannot cover amount + fee answers 402 INSUFFICIENT_FUNDS and reserves nothing. The payout starts PENDING and sends \`payout.created\`.\n\n${PAYOUT_SELLER}\n\n${PAYOUT_SENDING}\n\n${PAYOUT_SANDBOX}\n\n${PAYOUT_RECONCILIATION}`,
        tags,
        body: CreatePayoutBody,
        response: { 201: Envelope(Payout) },
      },
    },
    async (request, reply) =>
      write(request, reply, 201, async (trx) => {
        const payout = await payouts.createPayout(trx, requireAuth(request.auth), request.body, limits);
        await recordPayout(trx, request, 'payout.created', payout);
        return payoutView(payout);
      }),
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
        config: {
          auth: 'secret',
          scope: 'payouts:write',
          write: API_WRITE,
          errorCodes: ['INSUFFICIENT_FUNDS', 'TOO_MANY_PENDING_PAYOUTS'],
          openapi: { requestExample: PAYOUT_BATCH_EXAMPLE },
        },
        bodyLimit: BATCH_BODY_LIMIT_BYTES,
        attachValidation: true,
        schema: {
          ...(deprecated
            ? {
                operationId: 'createPayoutBatchDeprecated',
                summary: 'Create a batch of payouts (deprecated path)',
                description: `Deprecated: the path batches were first created at, kept as an alias of \`POST /payouts/batches\`, which answers exactly the same. New code uses \`POST /payouts/batches\`.\n\n${PAYOUT_BATCH}`,
              }
            : { operationId: 'createPayoutBatch', summary: 'Create a batch of payouts', description: PAYOUT_BATCH }),
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
          await recordPayoutBatch(trx, request, created.batch.id, created.payouts);
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
      config: { auth: 'secret', scope: 'payouts:read', errorCodes: ['PAYOUT_BATCH_NOT_FOUND', 'SANDBOX_MISMATCH'] },
      schema: {
        operationId: 'retrievePayoutBatch',
        summary: 'Retrieve a payout batch',
        description:
          'A batch by its `pob_` id: item count, total amount and total fee, and how many of its payouts are in each status (`counts`). Its payouts: `GET /payouts?batch=pob_...`. A batch of the other environment answers SANDBOX_MISMATCH.',
        tags,
        params: BatchParams,
        response: { 200: Envelope(PayoutBatch) },
      },
    },
    async (request) => {
      const found = await payouts.getPayoutBatch(db, requireAuth(request.auth), request.params.id);
      return { success: true as const, data: batchView(found.batch, found.counts) };
    },
  );

  app.get(
    '/payouts',
    {
      config: { auth: 'secret', scope: 'payouts:read', errorCodes: ['SELLER_NOT_FOUND', 'SANDBOX_MISMATCH'] },
      schema: {
        operationId: 'listPayouts',
        summary: 'List payouts',
        description:
          "The payouts of the key's environment, newest first, paginated. Filters: `status`, `batch` (a `pob_` id: that batch's payouts in the order of its items), `seller` (an `SL-` id: the payouts paid from that seller's balance; a malformed id is 400 VALIDATION_ERROR, another business's or none 404 SELLER_NOT_FOUND, the other environment's 403 SANDBOX_MISMATCH), `from`, `to` (creation date).",
        tags,
        querystring: ListPayoutsQuery,
        response: { 200: Envelope(Paginated(Payout)) },
      },
    },
    async (request) => {
      const window = pageWindow(request.query);
      const result = await payouts.listPayouts(db, requireAuth(request.auth), {
        status: request.query.status,
        batch: request.query.batch,
        seller: request.query.seller,
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
      config: { auth: 'secret', scope: 'payouts:read', errorCodes: PAYOUT_CODES },
      schema: {
        operationId: 'retrievePayout',
        summary: 'Retrieve a payout',
        description:
          'One payout by its `PO-` reference: status, `amount`, `fee` and `totalDebited`, destination, and once it is done `paidAt`, or `failedAt` with `failureCode` and `failureMessage`, or `cancelledAt`. A reference of the other environment answers SANDBOX_MISMATCH.',
        tags,
        params: ReferenceParams,
        response: { 200: Envelope(Payout) },
      },
    },
    async (request) => ({
      success: true as const,
      data: payoutView(await payouts.getPayout(db, requireAuth(request.auth), request.params.referenceNumber)),
    }),
  );

  app.get(
    '/payouts/:referenceNumber/transactions',
    {
      config: { auth: 'secret', scope: 'payouts:read', errorCodes: PAYOUT_CODES },
      schema: {
        operationId: 'listPayoutTransactions',
        summary: "List a payout's settled transactions",
        description: `The balance transactions this payout settles, newest first, paginated, in the shape of \`GET /balance/transactions\`.\n\n${PAYOUT_RECONCILIATION}`,
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
      config: {
        auth: 'secret',
        scope: 'payouts:write',
        write: API_WRITE,
        errorCodes: [...PAYOUT_CODES, 'PAYOUT_NOT_PENDING'],
      },
      schema: {
        operationId: 'cancelPayout',
        summary: 'Cancel a payout',
        description:
          'Cancels a PENDING payout: CANCELLED, its amount and fee back in the balance (`payout_reversal`), and `payout.cancelled`. A single payout releases the transactions it settled to the next payout. A payout already PAID, FAILED or CANCELLED (the worker may have sent it a moment before) answers PAYOUT_NOT_PENDING. No body.',
        tags,
        params: ReferenceParams,
        body: NoBody,
        response: { 200: Envelope(Payout) },
      },
    },
    async (request, reply) =>
      write(request, reply, 200, async (trx) => {
        const payout = await payouts.cancelPayout(trx, requireAuth(request.auth), request.params.referenceNumber);
        await recordPayout(trx, request, 'payout.cancelled', payout);
        return payoutView(payout);
      }),
  );
};
