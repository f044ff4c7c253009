import type { Transaction } from 'kysely';
import type { DB, OrderFees, OrderRefund } from '../../db/schema.js';
import { randomDigits } from '../../lib/ids.js';
import { type EventRecord } from '../events/outbox.js';
import { unitOfWork } from '../events/unit-of-work.js';
import { moveStock } from '../products/stock.js';
import { orderEvent } from './events.js';
import { SHOP_NAME, type ChangedOrder, type OrderLocator } from './model.js';
import { lockOrder } from './reads.js';
import { refundableAmount, returnMoney } from './refunds.js';
import { assertOrderAction, orderActions, type WorkflowAction } from './state.js';

/**
 * One workflow step on a locked order; the losing side of a race finds the new status and is
 * refused. A cancel returns the stock and, for a paid order, refunds everything left to refund.
 */
export async function transitionOrder(
  trx: Transaction<DB>,
  locator: OrderLocator,
  action: WorkflowAction,
  reason?: string,
): Promise<ChangedOrder> {
  const order = await lockOrder(trx, locator);
  const step = orderActions[action];
  assertOrderAction(order, action);
  if ('customerRef' in locator) assertOrderAction(order, 'customerCancel');
  const now = new Date();
  let money: { refund: OrderRefund; fees: OrderFees } | undefined;
  let stockEvents: EventRecord[] = [];
  if (action === 'cancel') {
    // Money before stock: the lock order is merchant account, wallet, then products.
    const left = refundableAmount(order);
    if (left > 0) {
      const id = `RF-${randomDigits(16)}`;
      const returned = await returnMoney(trx, order, {
        amount: left,
        reference: id,
        as: 'order_refund',
        final: true,
        now,
      });
      money = {
        refund: {
          id,
          amount: left,
          reason: reason ?? null,
          createdAt: now.toISOString(),
          ledgerTransactionId: returned.ledgerTransactionId,
        },
        fees: returned.fees,
      };
    }
    stockEvents = await moveStock(trx, order.shop_id, order.items, 1);
  }
  const updated = await trx
    .updateTable('orders')
    .set({
      status: step.to,
      history: JSON.stringify([
        ...order.history,
        { status: step.to, previousStatus: order.status, at: now.toISOString() },
      ]),
      ...(action === 'cancel' ? { cancellation_reason: reason ?? null, proposed_modification: null } : {}),
      ...(money
        ? {
            total_amount_refunded: order.total_amount_refunded + money.refund.amount,
            refunds: JSON.stringify([...order.refunds, money.refund]),
            fees: JSON.stringify(money.fees),
          }
        : {}),
      updated_at: now,
    })
    .where('id', '=', order.id)
    .returningAll()
    .returning(SHOP_NAME)
    .executeTakeFirstOrThrow();
  if (step.event) {
    const statusData = {
      referenceNumber: updated.reference_number,
      status: updated.status,
      previousStatus: order.status,
    };
    const event =
      step.event === 'order.cancelled'
        ? orderEvent(
            step.event,
            updated,
            {
              ...statusData,
              status: 'CANCELLED',
              cancellationReason: reason ?? '',
              amountRefunded: money?.refund.amount ?? 0,
            },
            now,
          )
        : orderEvent(step.event, updated, statusData, now);
    await unitOfWork()
      .events([...stockEvents, event])
      .run(trx);
  } else {
    await unitOfWork().events(stockEvents).run(trx);
  }
  return updated;
}
