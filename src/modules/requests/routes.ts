import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { requireAuth } from '../../http/context.js';
import { API_WRITE, write } from '../../http/idempotency/plugin.js';
import { Envelope, Paginated, pageOf, pageWindow } from '../../http/schemas.js';
import { ReferenceParams } from '../intents/schemas.js';
import { operatorHookFor } from './operator-hook.js';
import { CreateRequestBody, ListRequestsQuery, PaymentRequest, RequestParams } from './schemas.js';
import * as requests from './service.js';

const tags = ['Payment requests'];
const REQUEST_CODES = ['PAYMENT_REQUEST_NOT_FOUND', 'SANDBOX_MISMATCH'] as const;

const REQUEST_FLOW = `A request is pushed to the payer's wallet: the payer approves it with the wallet's PIN in the wallet app (or declines) before \`expiresAt\`. Approval pays the intent (a payment of method WALLET_REQUEST, then \`payment.confirmed\`) and sends \`payment_request.approved\`; an approval whose payment fails (too little balance) ends FAILED with \`failureCode\`, and the intent stays payable. Statuses: PENDING, then APPROVED, DECLINED, EXPIRED, CANCELLED or FAILED, each with its \`payment_request.*\` event. A pending request follows its intent: it ends CANCELLED when the intent is cancelled or paid another way, EXPIRED when the intent expires, in the same transaction. In the sandbox, \`+22220000021\` approves and \`+22220000022\` declines after about 2 s, \`+22220000023\` never answers, \`+22220000002\` approves and fails for too little balance; any other phone waits for the wallet app (PIN 1234).`;

/** Payment requests (issue 51): the merchant asks, the payer approves in the wallet app. */
export const paymentRequestRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db, config } = app.services;

  app.post(
    '/intents/:referenceNumber/requests',
    {
      config: {
        auth: 'secret',
        scope: 'intents:write',
        write: API_WRITE,
        errorCodes: [
          'INTENT_NOT_FOUND',
          'SANDBOX_MISMATCH',
          'INTENT_NOT_PENDING',
          'AMOUNT_OUT_OF_RANGE',
          'WALLET_NOT_FOUND',
          'PAYMENT_REQUESTS_MUTED',
          'PAYMENT_REQUEST_PENDING',
          'TOO_MANY_PAYMENT_REQUESTS',
        ],
        openapi: { requestExample: { phone: '+22220000021', expiresIn: 300, message: 'Table 4, thank you' } },
      },
      schema: {
        operationId: 'createPaymentRequest',
        summary: "Ask a payer's wallet to pay an intent",
        description: `Pushes a request to pay the intent to the wallet of \`phone\`: \`amount\` is the intent's (FIXED) or required (OPEN); \`expiresIn\` 60 to 900 seconds (300 by default), capped at the intent's own \`expiresAt\`; \`message\` up to 100 characters, shown beside the business's name. One pending request per intent (PAYMENT_REQUEST_PENDING); the intent must be payable (INTENT_NOT_PENDING). A live phone without a wallet answers WALLET_NOT_FOUND; a payer who muted the business, PAYMENT_REQUESTS_MUTED; at most ${requests.REQUEST_LIMITS.pendingPerPhone} pending requests and ${requests.REQUEST_LIMITS.perPhonePerHour} requests an hour per business and phone, TOO_MANY_PAYMENT_REQUESTS with Retry-After. Sends \`payment_request.created\`.\n\n${REQUEST_FLOW}`,
        tags,
        params: ReferenceParams,
        body: CreateRequestBody,
        response: { 201: Envelope(PaymentRequest) },
      },
    },
    async (request, reply) =>
      write(request, reply, 201, async (trx) =>
        requests.requestView(
          await requests.createRequest(trx, requireAuth(request.auth), request.params.referenceNumber, request.body, {
            maxAmount: config.intentMaxAmount,
            operatorHook: operatorHookFor(request),
          }),
        ),
      ),
  );

  app.get(
    '/intents/:referenceNumber/requests',
    {
      config: { auth: 'secret', scope: 'intents:read', errorCodes: ['INTENT_NOT_FOUND', 'SANDBOX_MISMATCH'] },
      schema: {
        operationId: 'listIntentPaymentRequests',
        summary: "List a payment intent's requests",
        description: `The requests made for the intent, newest first, paginated.\n\n${REQUEST_FLOW}`,
        tags,
        params: ReferenceParams,
        querystring: ListRequestsQuery,
        response: { 200: Envelope(Paginated(PaymentRequest)) },
      },
    },
    async (request) => {
      const window = pageWindow(request.query);
      const result = await requests.listIntentRequests(
        db,
        requireAuth(request.auth),
        request.params.referenceNumber,
        window,
      );
      return {
        success: true as const,
        data: pageOf(window, { items: result.items.map(requests.requestView), total: result.total }),
      };
    },
  );

  app.get(
    '/payment-requests/:id',
    {
      config: { auth: 'secret', scope: 'intents:read', errorCodes: REQUEST_CODES },
      schema: {
        operationId: 'retrievePaymentRequest',
        summary: 'Retrieve a payment request',
        description: `One request by its \`PR-\` id. A request of the other environment answers SANDBOX_MISMATCH.\n\n${REQUEST_FLOW}`,
        tags,
        params: RequestParams,
        response: { 200: Envelope(PaymentRequest) },
      },
    },
    async (request) => ({
      success: true as const,
      data: requests.requestView(await requests.getRequest(db, requireAuth(request.auth), request.params.id)),
    }),
  );

  app.post(
    '/payment-requests/:id/cancel',
    {
      config: {
        auth: 'secret',
        scope: 'intents:write',
        write: API_WRITE,
        errorCodes: [...REQUEST_CODES, 'PAYMENT_REQUEST_NOT_PENDING'],
      },
      schema: {
        operationId: 'cancelPaymentRequest',
        summary: 'Cancel a payment request',
        description:
          'Withdraws a PENDING request: CANCELLED, its payment FAILED with `CANCELLED`, nothing moved; sends `payment_request.cancelled`. A request already answered or ended answers PAYMENT_REQUEST_NOT_PENDING. The intent stays payable.',
        tags,
        params: RequestParams,
        response: { 200: Envelope(PaymentRequest) },
      },
    },
    async (request, reply) =>
      write(request, reply, 200, async (trx) =>
        requests.requestView(await requests.cancelRequest(trx, requireAuth(request.auth), request.params.id)),
      ),
  );
};
