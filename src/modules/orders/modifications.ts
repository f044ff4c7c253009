import type { Transaction } from 'kysely';
import type { DB, OrderFees, OrderPayment } from '../../db/schema.js';
import { ApiError } from '../../http/errors.js';
import { randomDigits } from '../../lib/ids.js';
import { unitOfWork } from '../events/unit-of-work.js';
import { checkPaymentAmount } from '../payments/amount.js';
import { chargeOrderDifference } from '../payments/order-payments.js';
import { lockPayer } from '../payments/payers.js';
import { lockProducts, moveStock } from '../products/stock.js';
import { orderEvent } from './events.js';
import { SHOP_NAME, type Caller, type ChangedOrder, type OrderLocator } from './model.js';
import { costBases, marginLines, orderTotal, priceItems, type RequestedItem } from './pricing.js';
import { lockOrder } from './reads.js';
import { moneyRefOf, returnMoney } from './refunds.js';
import { assertOrderAction } from './state.js';

/** The merchant proposes new lines (NEW or PREPARING); nothing changes until the customer accepts. */
export async function proposeModification(
  trx: Transaction<DB>,
  locator: OrderLocator & { caller: Caller },
  requested: RequestedItem[],
  limits: { maxAmount: number },
): Promise<ChangedOrder> {
  const order = await lockOrder(trx, locator);
  assertOrderAction(order, 'modify');
  const items = await priceItems(trx, locator.caller, order.shop_id, requested);
  const total = orderTotal(items);
  // The same bounds as placing an order: the customer would be charged (or refunded) up to it.
  checkPaymentAmount(total, limits.maxAmount);
  return trx
    .updateTable('orders')
    .set({
      proposed_modification: JSON.stringify({
        items,
        totalAmount: total,
        proposedAt: new Date().toISOString(),
      }),
      updated_at: new Date(),
    })
    .where('id', '=', order.id)
    .returningAll()
    .returning(SHOP_NAME)
    .executeTakeFirstOrThrow();
}

/**
 * The customer accepts the proposal: the lines and total change, stock follows, the difference is
 * settled through the ledger (a higher total is charged to the wallet that paid, without a second
 * payer fee; a lower one is refunded with its fees in proportion), and `order.modified` is sent.
 * A wallet that cannot pay the difference: 402 INSUFFICIENT_BALANCE and the order stays as it was.
 */
export async function acceptModification(
  trx: Transaction<DB>,
  locator: OrderLocator,
  /** The proposal the customer saw (its `proposedAt`): a proposal replaced since is not accepted. */
  seen?: { proposedAt: string },
): Promise<ChangedOrder> {
  const order = await lockOrder(trx, locator);
  const proposal = order.proposed_modification;
  if (!proposal) throw new ApiError('ORDER_INVALID_TRANSITION', 'This order has no proposed modification to accept.');
  if (seen && seen.proposedAt !== proposal.proposedAt) {
    throw new ApiError(
      'ORDER_INVALID_TRANSITION',
      'The proposed modification changed since it was shown: read the order again before accepting.',
    );
  }
  assertOrderAction(order, 'modify');
  if (order.total_amount_refunded > proposal.totalAmount)
    throw new ApiError('ORDER_INVALID_TRANSITION', 'The new total would be below what was already refunded.');
  const now = new Date();
  let settled: { payment: OrderPayment; fees: OrderFees; amountPaid: number } | undefined;
  if (order.paid) {
    const difference = proposal.totalAmount - order.amount_paid;
    const id = `OA-${randomDigits(16)}`;
    const fees = order.fees!;
    let ledgerTransactionId: string | undefined;
    let nextFees = fees;
    if (difference > 0) {
      const payer = await lockPayer(trx, order.environment, order.customer_phone);
      if (!payer || payer.wallet.id !== order.payer_wallet_id) throw new ApiError('WALLET_NOT_FOUND');
      const costs = await costBases(trx, [...order.items, ...proposal.items]);
      const charged = await chargeOrderDifference(
        trx,
        { ...moneyRefOf(order), fees },
        {
          reference: id,
          payer,
          amount: difference,
          lines: { before: marginLines(order.items, costs), after: marginLines(proposal.items, costs) },
          now,
        },
      );
      if (charged === 'INSUFFICIENT_BALANCE') {
        throw new ApiError(
          'INSUFFICIENT_BALANCE',
          `The wallet balance cannot cover the difference (${difference} centimes). The order is unchanged.`,
        );
      }
      ledgerTransactionId = charged.ledgerTransactionId;
      nextFees = charged.fees;
    } else if (difference < 0) {
      const returned = await returnMoney(trx, order, {
        amount: -difference,
        reference: id,
        as: 'order_adjustment',
        final: proposal.totalAmount === order.total_amount_refunded,
        now,
      });
      ledgerTransactionId = returned.ledgerTransactionId;
      nextFees = returned.fees;
    }
    const payment = order.payment!;
    settled = {
      amountPaid: proposal.totalAmount,
      fees: nextFees,
      payment: {
        ...payment,
        amountPaid: proposal.totalAmount,
        adjustments:
          ledgerTransactionId === undefined
            ? payment.adjustments
            : [...payment.adjustments, { id, amount: difference, createdAt: now.toISOString(), ledgerTransactionId }],
      },
    };
  }
  const locked = await lockProducts(trx, [...order.items, ...proposal.items]);
  const stockEvents = [
    ...(await moveStock(trx, order.shop_id, order.items, 1, locked)),
    ...(await moveStock(trx, order.shop_id, proposal.items, -1, locked)),
  ];
  const updated = await trx
    .updateTable('orders')
    .set({
      items: JSON.stringify(proposal.items),
      total_amount: proposal.totalAmount,
      proposed_modification: null,
      ...(settled
        ? {
            amount_paid: settled.amountPaid,
            payment: JSON.stringify(settled.payment),
            fees: JSON.stringify(settled.fees),
          }
        : {}),
      updated_at: now,
    })
    .where('id', '=', order.id)
    .returningAll()
    .returning(SHOP_NAME)
    .executeTakeFirstOrThrow();
  await unitOfWork()
    .events([
      ...stockEvents,
      orderEvent(
        'order.modified',
        updated,
        {
          referenceNumber: updated.reference_number,
          previousTotalAmount: order.total_amount,
          newTotalAmount: updated.total_amount,
          modifiedItems: proposal.items.map(({ productId, name, quantity }) => ({ productId, name, quantity })),
        },
        now,
      ),
    ])
    .run(trx);
  return updated;
}

/**
 * The customer declines the proposal: the order stays exactly as it was (lines, total, money,
 * stock), the proposal is dropped, and `order.modification_declined` tells the merchant.
 */
export async function declineModification(trx: Transaction<DB>, locator: OrderLocator): Promise<ChangedOrder> {
  const order = await lockOrder(trx, locator);
  const proposal = order.proposed_modification;
  if (!proposal) throw new ApiError('ORDER_INVALID_TRANSITION', 'This order has no proposed modification to decline.');
  assertOrderAction(order, 'modify');
  const now = new Date();
  const updated = await trx
    .updateTable('orders')
    .set({ proposed_modification: null, updated_at: now })
    .where('id', '=', order.id)
    .returningAll()
    .returning(SHOP_NAME)
    .executeTakeFirstOrThrow();
  await unitOfWork()
    .events([
      orderEvent(
        'order.modification_declined',
        updated,
        {
          referenceNumber: updated.reference_number,
          totalAmount: updated.total_amount,
          proposedTotalAmount: proposal.totalAmount,
          proposedItems: proposal.items.map(({ productId, name, quantity }) => ({ productId, name, quantity })),
        },
        now,
      ),
    ])
    .run(trx);
  return updated;
}
