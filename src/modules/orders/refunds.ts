import type { Transaction } from 'kysely';
import type { DB, OrderFees, OrderRefund } from '../../db/schema.js';
import { ApiError } from '../../http/errors.js';
import { randomDigits } from '../../lib/ids.js';
import { unitOfWork } from '../events/unit-of-work.js';
import { returnOrderMoney } from '../payments/order-payments.js';
import { orderEvent } from './events.js';
import { SHOP_NAME, type ChangedOrder, type OrderLocator, type OrderRow } from './model.js';
import { lockOrder } from './reads.js';
import { assertOrderAction } from './state.js';

/** What can still go back to the customer: what was paid less what was refunded. */
export function refundableAmount(order: OrderRow): number {
  return order.paid ? order.amount_paid - order.total_amount_refunded : 0;
}

/** Gives `amount` of a paid order back to the wallet that paid (payments' `returnOrderMoney`). */
export function returnMoney(
  trx: Transaction<DB>,
  order: OrderRow,
  money: { amount: number; reference: string; as: 'order_refund' | 'order_adjustment'; final: boolean; now: Date },
): Promise<{ ledgerTransactionId: string; fees: OrderFees }> {
  return returnOrderMoney(
    trx,
    { ...moneyRefOf(order), fees: order.fees!, walletId: order.payer_wallet_id!, split: order.split_shares },
    money,
  );
}

/** Where an order's money movements are booked: its business, environment and reference. */
export function moneyRefOf(order: OrderRow) {
  return { environment: order.environment, businessId: order.business_id, orderReference: order.reference_number };
}

/**
 * A refund on a paid order, partial or full, back to the wallet that paid; the order becomes
 * REFUNDED. The cap is what was paid less what was refunded.
 */
export async function refundOrder(
  trx: Transaction<DB>,
  locator: OrderLocator,
  input: { amount?: number | undefined; reason?: string | undefined },
): Promise<ChangedOrder> {
  const order = await lockOrder(trx, locator);
  const status = assertOrderAction(order, 'refund');
  const left = refundableAmount(order);
  const amount = input.amount ?? left;
  if (amount < 1 || amount > left) {
    throw new ApiError('REFUND_AMOUNT_INVALID', `The refund amount must be between 1 and ${left} centimes.`);
  }
  const now = new Date();
  const id = `RF-${randomDigits(16)}`;
  const returned = await returnMoney(trx, order, {
    amount,
    reference: id,
    as: 'order_refund',
    final: amount === left,
    now,
  });
  const totalRefunded = order.total_amount_refunded + amount;
  const refund: OrderRefund = {
    id,
    amount,
    reason: input.reason ?? null,
    createdAt: now.toISOString(),
    ledgerTransactionId: returned.ledgerTransactionId,
  };
  const updated = await trx
    .updateTable('orders')
    .set({
      status,
      total_amount_refunded: totalRefunded,
      refunds: JSON.stringify([...order.refunds, refund]),
      fees: JSON.stringify(returned.fees),
      history:
        order.status === 'REFUNDED'
          ? JSON.stringify(order.history)
          : JSON.stringify([
              ...order.history,
              { status: 'REFUNDED', previousStatus: order.status, at: now.toISOString() },
            ]),
      proposed_modification: null,
      updated_at: now,
    })
    .where('id', '=', order.id)
    .returningAll()
    .returning(SHOP_NAME)
    .executeTakeFirstOrThrow();
  await unitOfWork()
    .events([
      orderEvent(
        'order.refunded',
        updated,
        {
          referenceNumber: updated.reference_number,
          status: 'REFUNDED',
          amountRefunded: amount,
          totalAmountRefunded: totalRefunded,
          totalAmount: updated.total_amount,
        },
        now,
      ),
    ])
    .run(trx);
  return updated;
}
