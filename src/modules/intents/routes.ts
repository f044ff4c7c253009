import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { requireAuth } from '../../http/context.js';
import { ApiError } from '../../http/errors.js';
import { API_WRITE, CommittedRefusal, write } from '../../http/idempotency/plugin.js';
import { Envelope, Paginated, pageOf, pageWindow, parseDateFilter } from '../../http/schemas.js';
import { ListPaymentsQuery, PAYMENT_ATTEMPTS, Payment } from '../payments/schemas.js';
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
import { recordRefund } from '../audit/acts.js';
import * as intents from './service.js';

/** `{pay_url}`: the PAY_URL setting, else PUBLIC_URL, else the origin the request came to. */
export function payBaseUrl(request: FastifyRequest): string {
  const { config } = request.server.services;
  return config.payUrl ?? config.publicUrl ?? `${request.protocol}://${request.host}`;
}

const tags = ['Payment intents'];
const INTENT_CODES = ['INTENT_NOT_FOUND', 'SANDBOX_MISMATCH'] as const;

export const intentRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { database, db, config } = app.services;

  app.post(
    '/intents',
    {
      config: {
        auth: 'secret',
        scope: 'intents:write',
        write: API_WRITE,
        errorCodes: [
          'AMOUNT_OUT_OF_RANGE',
          'METADATA_TOO_MANY_KEYS',
          'METADATA_VALUE_TOO_LONG',
          'CODE_SPACE_EXHAUSTED',
          'SELLER_NOT_FOUND',
          'SANDBOX_MISMATCH',
          'SELLER_DISABLED',
        ],
        openapi: {
          requestExample: { amount: 150000, label: 'Order #1042', metadata: { orderId: '1042' } },
          bodyRequired: true,
        },
      },
      schema: {
        operationId: 'createIntent',
        summary: 'Create a payment intent',
        description:
          "Creates a PENDING intent with a 6-digit payment code and a hosted checkout URL (`payUrl`), valid 24 hours. Sends `payment.created`. `splits` shares the payment between the business's sellers (decision 080): each seller's account is credited its share in the posting that pays the intent, and refunds take it back in proportion. A malformed seller id is VALIDATION_ERROR; an unknown seller or another business's, SELLER_NOT_FOUND (the message names the field); one of the other environment, SANDBOX_MISMATCH; a DISABLED one, SELLER_DISABLED; shares over what the payment leaves after the fees it bears, VALIDATION_ERROR.",
        tags,
        body: CreateIntentBody,
        response: { 201: Envelope(CreatedIntent) },
      },
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
      config: { auth: 'publishable', scope: 'intents:read', errorCodes: INTENT_CODES },
      schema: {
        operationId: 'retrieveIntent',
        summary: 'Retrieve a payment intent',
        description: 'The full intent, with its payment and refunds. A publishable key may read it.',
        tags,
        params: ReferenceParams,
        response: { 200: Envelope(Intent) },
      },
    },
    async (request) => {
      const intent = await intents.getIntentView(database, requireAuth(request.auth), request.params.referenceNumber);
      return { success: true as const, data: intents.intentView(intent, payBaseUrl(request)) };
    },
  );

  app.get(
    '/intents',
    {
      config: {
        auth: 'publishable',
        scope: 'intents:read',
        errorCodes: ['SELLER_NOT_FOUND', 'SANDBOX_MISMATCH', 'SECRET_KEY_REQUIRED'],
      },
      schema: {
        operationId: 'listIntents',
        summary: 'List payment intents',
        description:
          "Newest first, paginated. Filters by status and creation date, and `seller` (an `SL-` id): the intents whose `splits` name that seller. A malformed seller id is 400 VALIDATION_ERROR; another business's seller, or none, 404 SELLER_NOT_FOUND; one of the other environment, 403 SANDBOX_MISMATCH. A publishable key lists intents but cannot filter by seller (403 SECRET_KEY_REQUIRED): seller lookups need a secret key.",
        tags,
        querystring: ListIntentsQuery,
        response: { 200: Envelope(Paginated(Intent)) },
      },
    },
    async (request) => {
      const { page, limit, offset } = pageWindow(request.query);
      const from = parseDateFilter(request.query.from, 'from');
      const to = parseDateFilter(request.query.to, 'to');
      const auth = requireAuth(request.auth);
      if (request.query.seller !== undefined && auth.kind !== 'secret') {
        throw new ApiError('SECRET_KEY_REQUIRED', 'Filtering by seller needs a secret key (sk_...).');
      }
      const result = await intents.listIntents(database, auth, {
        status: request.query.status,
        seller: request.query.seller,
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
      config: { auth: 'secret', scope: 'intents:read', errorCodes: INTENT_CODES },
      schema: {
        operationId: 'listIntentPayments',
        summary: "List a payment intent's payments",
        description: `Every attempt to pay the intent, failed ones included, newest first, paginated.\n\n${PAYMENT_ATTEMPTS}`,
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
      config: {
        auth: 'secret',
        scope: 'intents:write',
        write: API_WRITE,
        errorCodes: [...INTENT_CODES, 'INTENT_CANCEL_INVALID_STATUS', 'INTENT_CANCEL_CONFLICT'],
      },
      schema: {
        operationId: 'cancelIntent',
        summary: 'Cancel a payment intent',
        description: 'Cancels a PENDING intent and sends `payment.cancelled`. No body.',
        tags,
        params: ReferenceParams,
        body: NoBody,
        response: { 200: Envelope(Intent) },
      },
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
      config: {
        auth: 'secret',
        scope: 'intents:write',
        write: API_WRITE,
        errorCodes: [...INTENT_CODES, 'INTENT_REFUND_INVALID_STATUS', 'REFUND_AMOUNT_INVALID', 'INSUFFICIENT_FUNDS'],
        openapi: { requestExample: { amount: 50000, reason: 'Damaged item' } },
      },
      schema: {
        operationId: 'refundIntent',
        summary: 'Refund a payment intent',
        description:
          'Refunds a PAID intent in full (no amount) or in part, from the merchant balance. Sends `payment.refunded`. A balance that cannot cover the refund answers 402 INSUFFICIENT_FUNDS (as a payout does) and nothing moves.',
        tags,
        params: ReferenceParams,
        body: RefundBody,
        response: { 200: Envelope(Intent) },
      },
    },
    async (request, reply) =>
      write(request, reply, 200, async (trx) => {
        const refunded = await intents.refundIntent(
          trx,
          requireAuth(request.auth),
          request.params.referenceNumber,
          request.body,
        );
        await recordRefund(trx, request, { kind: 'payment_intent', id: refunded.reference_number }, refunded.refunds);
        return intents.intentView(refunded, payBaseUrl(request));
      }),
  );

  app.post(
    '/intents/:referenceNumber/simulate',
    {
      config: {
        auth: 'secret',
        scope: 'intents:write',
        sandboxOnly: true,
        write: API_WRITE,
        errorCodes: [...INTENT_CODES, 'INTENT_NOT_PENDING', 'AMOUNT_OUT_OF_RANGE', 'PAYMENT_FAILED', 'WALLET_LOCKED'],
        openapi: { requestExample: { outcome: 'success' } },
      },
      schema: {
        operationId: 'simulateIntentPayment',
        summary: 'Simulate a payment (sandbox)',
        description:
          'Test keys only: pays the intent from a sandbox wallet (`outcome: success`) or fails it (`failure`), with the events a real payment sends. From `+22220000004` (approves), `+22220000005` (declines) or `+22220000006` (never answers) the intent stays `PENDING` with a `PROCESSING` payment, which the payer ends about 2 s later (or the timeout ends); see the sandbox scenarios in docs/payments.md.',
        tags,
        params: ReferenceParams,
        body: SimulateBody,
        response: { 200: Envelope(Intent) },
      },
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
      config: {
        auth: 'secret',
        scope: 'intents:write',
        sandboxOnly: true,
        write: API_WRITE,
        errorCodes: [...INTENT_CODES, 'INTENT_NOT_PENDING'],
      },
      schema: {
        operationId: 'simulateIntentExpiry',
        summary: 'Simulate expiry (sandbox)',
        description: 'Test keys only: expires a PENDING intent now, as 24 hours would, and sends `payment.expired`.',
        tags,
        params: ReferenceParams,
        body: NoBody,
        response: { 200: Envelope(Intent) },
      },
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
