import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyContextConfig } from 'fastify';
import { requireAuth } from '../../http/context.js';
import { ApiError } from '../../http/errors.js';
import { Envelope } from '../../http/schemas.js';
import { PAYMENT_ATTEMPTS, Payment, PaymentParams } from './schemas.js';
import { getPayment, type PaymentView } from './store.js';

const tags = ['Payments'];

/** What an order's payment asks of a key besides `intents:read`: the scope that reads orders. */
const ORDER_SCOPE = 'store.orders:read' satisfies FastifyContextConfig['scope'];

/**
 * A payment pays an intent or an order: the one route reads both, under `intents:read`, and a
 * payment of an order also needs `store.orders:read`, so that a key kept away from orders (their
 * customers) does not read their payments by id.
 */
function checkPaymentScope(payment: PaymentView, scopes: readonly string[]): void {
  if (payment.order !== null && !scopes.includes(ORDER_SCOPE)) {
    throw new ApiError('SCOPE_REQUIRED', `This API key lacks the scope "${ORDER_SCOPE}".`);
  }
}

/** `GET /dev/payments/{id}`: one attempt to pay, whatever it paid. The lists are the intent's and the order's. */
export const paymentRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app.services;

  app.get(
    '/payments/:id',
    {
      config: { auth: 'secret', scope: 'intents:read', errorCodes: ['PAYMENT_NOT_FOUND', 'SANDBOX_MISMATCH'] },
      schema: {
        operationId: 'retrievePayment',
        summary: 'Retrieve a payment',
        description: `One payment by its \`pay_\` id, with the reference of the intent (\`intent\`) or order (\`order\`) it pays. A payment of an order also needs the scope \`store.orders:read\` (SCOPE_REQUIRED otherwise). A payment of the other environment answers SANDBOX_MISMATCH.\n\n${PAYMENT_ATTEMPTS}`,
        tags,
        params: PaymentParams,
        response: { 200: Envelope(Payment) },
      },
    },
    async (request) => {
      const auth = requireAuth(request.auth);
      const payment = await getPayment(db, auth, request.params.id);
      checkPaymentScope(payment, auth.scopes);
      return { success: true as const, data: payment };
    },
  );
};
