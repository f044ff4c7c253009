import type { ErrorCode } from '../../http/errors.js';
import type { OperationDocs } from '../../http/openapi.js';
import { PAYMENT_ATTEMPTS } from '../payments/schemas.js';
import { orderActions, type WorkflowAction } from './state.js';

const ORDER_CODES = ['ORDER_NOT_FOUND', 'SANDBOX_MISMATCH', 'ORDER_INVALID_TRANSITION'] as const;

/** A workflow step's docs, told from the order state table (where it starts, leads and what it sends). */
export function orderActionDocs(action: WorkflowAction): OperationDocs {
  const { from, to, event } = orderActions[action];
  return {
    schema: {
      operationId: `${action}Order`,
      summary: `${action[0]!.toUpperCase()}${action.slice(1)} an order`,
      description: `Moves the order from ${from.join(' or ')} to ${to}${event ? ` and sends \`${event}\`` : ' (no event)'}. Any other status answers ORDER_INVALID_TRANSITION.`,
    },
    config: { errorCodes: ORDER_CODES },
  };
}

/** What pricing a cart can refuse, wherever a cart is priced (a simulated order, the storefront's quote and order). */
export const CART_REFUSALS = [
  'SHOP_NOT_FOUND',
  'PRODUCT_NOT_FOUND',
  'VARIANT_NOT_FOUND',
  'INSUFFICIENT_STOCK',
  'AMOUNT_OUT_OF_RANGE',
] as const satisfies readonly ErrorCode[];

/** The docs of the order routes (routes.ts), by operation. */
export const orderDocs = {
  simulateOrder: {
    schema: {
      operationId: 'simulateOrder',
      summary: 'Simulate a customer order (sandbox)',
      description: 'Test keys only: places and pays a NEW order, takes stock and sends `order.new`.',
    },
    config: {
      errorCodes: [...CART_REFUSALS, 'WALLET_LOCKED', 'INSUFFICIENT_BALANCE'],
      openapi: { requestExample: { items: [{ productId: 'TEA-250', quantity: 2 }], customerName: 'Aicha' } },
    },
  },
  listOrders: {
    schema: {
      operationId: 'listOrders',
      summary: 'List orders',
      description: 'Newest first, paginated; filters by status and date.',
    },
  },
  retrieveOrder: {
    schema: {
      operationId: 'retrieveOrder',
      summary: 'Retrieve an order',
      description: 'The order with its items, history and refunds.',
    },
    config: { errorCodes: ['ORDER_NOT_FOUND', 'SANDBOX_MISMATCH'] },
  },
  listOrderPayments: {
    schema: {
      operationId: 'listOrderPayments',
      summary: "List an order's payments",
      description: `The payments of the order, newest first, paginated.\n\n${PAYMENT_ATTEMPTS}`,
    },
    config: { errorCodes: ['ORDER_NOT_FOUND', 'SANDBOX_MISMATCH'] },
  },
  cancelOrder: {
    schema: {
      operationId: 'cancelOrder',
      summary: 'Cancel an order',
      description:
        'NEW or PREPARING to CANCELLED with a reason; the stock is returned and a paid order refunded in full from the merchant balance (402 INSUFFICIENT_FUNDS and nothing changes when the balance cannot cover it). Sends `order.cancelled`.',
    },
    config: {
      errorCodes: [...ORDER_CODES, 'INSUFFICIENT_FUNDS'],
      openapi: { requestExample: { reason: 'Out of stock' } },
    },
  },
  refundOrder: {
    schema: {
      operationId: 'refundOrder',
      summary: 'Refund an order',
      description:
        'Refunds a paid order in full (no amount) or in part, from the merchant balance. Sends `order.refunded`. A balance that cannot cover the refund answers 402 INSUFFICIENT_FUNDS (as a payout does) and nothing moves.',
    },
    config: {
      errorCodes: [...ORDER_CODES, 'REFUND_AMOUNT_INVALID', 'INSUFFICIENT_FUNDS'],
      openapi: { requestExample: { amount: 20000 } },
    },
  },
  proposeOrderModification: {
    schema: {
      operationId: 'proposeOrderModification',
      summary: 'Propose a modification',
      description: 'Proposes new items to the customer (NEW or PREPARING orders).',
    },
    config: {
      errorCodes: [
        ...ORDER_CODES,
        'PRODUCT_NOT_FOUND',
        'VARIANT_NOT_FOUND',
        'INSUFFICIENT_STOCK',
        'AMOUNT_OUT_OF_RANGE',
      ],
    },
  },
  declineOrderModification: {
    schema: {
      operationId: 'declineOrderModification',
      summary: 'Decline a modification (sandbox)',
      description:
        'Test keys only: the customer declines the proposed modification; the order stays as it was. Sends `order.modification_declined`.',
    },
    config: { errorCodes: ORDER_CODES },
  },
  acceptOrderModification: {
    schema: {
      operationId: 'acceptOrderModification',
      summary: 'Accept a modification (sandbox)',
      description:
        'Test keys only: the customer accepts the proposed modification. Sends `order.modified`. A wallet that cannot pay the difference leaves the order as it was (INSUFFICIENT_BALANCE); so does a merchant balance that cannot return a lower total (INSUFFICIENT_FUNDS).',
    },
    config: {
      errorCodes: [
        ...ORDER_CODES,
        'PRODUCT_NOT_FOUND',
        'VARIANT_NOT_FOUND',
        'INSUFFICIENT_STOCK',
        'WALLET_NOT_FOUND',
        'INSUFFICIENT_BALANCE',
        'INSUFFICIENT_FUNDS',
      ],
    },
  },
} satisfies Record<string, OperationDocs>;
