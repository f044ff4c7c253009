import { heldCommission } from '../payments/order-payments.js';
import type { OrderRow } from './model.js';

/** The customer's own page for an order: `{pay_url}/o/{customerRef}`. */
export function customerUrl(order: OrderRow, payBase: string): string {
  return `${payBase}/o/${order.customer_ref}`;
}

export function orderView(order: OrderRow, shopName: string, payBase: string) {
  return {
    referenceNumber: order.reference_number,
    shopId: order.shop_id,
    shopName,
    status: order.status,
    items: order.items,
    totalAmount: order.total_amount,
    currency: 'MRU' as const,
    customerName: order.customer_name,
    customerPhone: order.customer_phone,
    paid: order.paid,
    payment: order.payment,
    commission: order.fees ? heldCommission(order.fees) : null,
    // Only on an order whose lines paid sellers (decision 081), as an intent shows its split.
    ...(order.split_shares ? { splits: order.split_shares } : {}),
    totalAmountRefunded: order.total_amount_refunded,
    refunds: order.refunds.map((refund) => ({
      id: refund.id,
      amount: refund.amount,
      reason: refund.reason ?? null,
      createdAt: refund.createdAt,
      ledgerTransactionId: refund.ledgerTransactionId ?? null,
    })),
    customerUrl: customerUrl(order, payBase),
    cancellationReason: order.cancellation_reason,
    history: order.history,
    proposedModification: order.proposed_modification,
    sandbox: order.environment === 'test',
    createdAt: order.created_at.toISOString(),
    updatedAt: order.updated_at.toISOString(),
  };
}
