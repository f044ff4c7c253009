import { sql, type Kysely, type Selectable, type Transaction } from 'kysely';
import type { DB, Environment, OrderItem, OrderStatus, OrdersTable } from '../../db/schema.js';
import { inOtherEnvironment } from '../../http/environments.js';
import { ApiError } from '../../http/errors.js';
import type { Executor } from '../../db/transaction.js';
import { randomDigits } from '../../lib/ids.js';
import { recordEvents, type EventRecord } from '../events/outbox.js';
import { storeEvent } from '../events/store-events.js';
import { applyStockChange, resolveProduct, shopOf } from '../products/service.js';
import { assertTransition, orderActions, type WorkflowAction } from './state.js';

export type OrderRow = Selectable<OrdersTable>;

export interface Caller {
  businessId: string;
  environment: Environment;
}

/** The sandbox customer when a simulation names none (the rich test wallet of the README). */
export const SANDBOX_CUSTOMER_PHONE = '+22220000001';

export interface RequestedItem {
  productId: string;
  quantity: number;
  variantId?: string | undefined;
  optionIds?: string[] | undefined;
}

function invalid(field: string, message: string): ApiError {
  return new ApiError('VALIDATION_ERROR', `${field} ${message}.`, [{ field, message }]);
}

export function lineTotal(item: OrderItem): number {
  const options = (item.options ?? []).reduce((sum, option) => sum + option.priceAdjustment, 0);
  return (item.price + (item.variant?.priceAdjustment ?? 0) + options) * item.quantity;
}

export function orderTotal(items: OrderItem[]): number {
  return items.reduce((sum, item) => sum + lineTotal(item), 0);
}

/**
 * What the customer buys, priced by the server from the products as they are now (ACTIVE, of
 * this shop), kept as a snapshot: later product edits do not change the order.
 */
async function priceItems(
  trx: Transaction<DB>,
  caller: Caller,
  shopId: string,
  requested: RequestedItem[],
): Promise<OrderItem[]> {
  const lookup = { ...caller, publicOnly: true };
  const items: OrderItem[] = [];
  for (const [index, line] of requested.entries()) {
    const product = await resolveProduct(trx, lookup, shopId, line.productId);
    const item: OrderItem = {
      productId: product.id,
      name: product.name,
      quantity: line.quantity,
      price: product.price,
    };
    if (line.variantId !== undefined) {
      const variant = product.variants.find((v) => v._id === line.variantId);
      if (!variant) throw new ApiError('VARIANT_NOT_FOUND', `No variant ${line.variantId} on product ${product.id}.`);
      item.variant = { _id: variant._id, label: variant.label, priceAdjustment: variant.priceAdjustment };
    }
    if (line.optionIds !== undefined && line.optionIds.length > 0) {
      if (new Set(line.optionIds).size !== line.optionIds.length)
        throw invalid(`body.items.${index}.optionIds`, 'repeats an option');
      item.options = line.optionIds.map((optionId) => {
        const option = product.options.find((o) => o._id === optionId);
        if (!option)
          throw invalid(`body.items.${index}.optionIds`, `names ${optionId}, not an option of ${product.id}`);
        return { _id: option._id, name: option.name, priceAdjustment: option.priceAdjustment };
      });
    }
    items.push(item);
  }
  return items;
}

/**
 * Moves stock for order lines (negative to take, positive to give back), on the product and on
 * the chosen variant wherever that stock is counted. Rows are locked, so concurrent orders queue.
 */
async function moveStock(trx: Transaction<DB>, shopId: string, items: OrderItem[], direction: -1 | 1): Promise<void> {
  await lockProducts(trx, items);
  for (const item of items) {
    const row = await trx
      .selectFrom('products')
      .selectAll()
      .where('id', '=', item.productId)
      .forUpdate()
      .executeTakeFirst();
    if (!row || row.deleted_at || row.shop_id !== shopId) {
      if (direction === -1) throw new ApiError('PRODUCT_NOT_FOUND', `No product ${item.productId}.`);
      continue; // nothing to give stock back to
    }
    const change = { delta: direction * item.quantity, givenBack: direction === 1 };
    try {
      let product = row;
      if (product.quantity !== null) product = await applyStockChange(trx, product, change);
      const variant = item.variant && product.variants.find((v) => v._id === item.variant!._id);
      if (variant && variant.quantity !== null)
        await applyStockChange(trx, product, { ...change, variantId: variant._id });
    } catch (error) {
      if (error instanceof ApiError && error.code === 'INSUFFICIENT_STOCK') {
        throw new ApiError(
          'INSUFFICIENT_STOCK',
          `Not enough stock of ${item.name}${item.variant ? ` (${item.variant.label})` : ''} for ${item.quantity}.`,
        );
      }
      throw error;
    }
  }
}

/**
 * Locks the products of some order lines in one fixed order (by id), so two transactions that
 * touch the same products always queue instead of deadlocking.
 */
async function lockProducts(trx: Transaction<DB>, items: OrderItem[]): Promise<void> {
  const ids = [...new Set(items.map((item) => item.productId))].sort();
  if (ids.length === 0) return;
  await trx.selectFrom('products').select('id').where('id', 'in', ids).orderBy('id').forUpdate().execute();
}

/** The `order.new` data: exactly the fields of api.md 2.5. */
function orderNewData(order: OrderRow, shopName: string) {
  return {
    referenceNumber: order.reference_number,
    shopId: order.shop_id,
    shopName,
    status: order.status,
    items: order.items.map(({ productId, name, quantity, price, variant, options }) => ({
      productId,
      name,
      quantity,
      price,
      ...(variant ? { variant: { label: variant.label, priceAdjustment: variant.priceAdjustment } } : {}),
      ...(options ? { options: options.map((o) => ({ name: o.name, priceAdjustment: o.priceAdjustment })) } : {}),
    })),
    totalAmount: order.total_amount,
    customerPhone: order.customer_phone,
    customerName: order.customer_name,
    createdAt: order.created_at.toISOString(),
  };
}

function orderEvent(event: string, order: OrderRow, data: Record<string, unknown>, at: Date): EventRecord {
  return storeEvent(
    event,
    { businessId: order.business_id, environment: order.environment },
    order.reference_number,
    data,
    at,
  );
}

/** Sandbox: a customer places and pays an order. Stock is taken; `order.new` is sent. */
export async function simulateOrder(
  trx: Transaction<DB>,
  caller: Caller,
  input: { items: RequestedItem[]; customerName: string; customerPhone?: string | undefined },
): Promise<OrderRow> {
  const shop = await shopOf(trx, { ...caller, publicOnly: false });
  const items = await priceItems(trx, caller, shop.id, input.items);
  await moveStock(trx, shop.id, items, -1);
  const now = new Date();
  const order = await trx
    .insertInto('orders')
    .values({
      reference_number: `OR-${randomDigits(16)}`,
      shop_id: shop.id,
      business_id: caller.businessId,
      environment: caller.environment,
      status: 'NEW',
      items: JSON.stringify(items),
      total_amount: orderTotal(items),
      customer_name: input.customerName,
      customer_phone: input.customerPhone ?? SANDBOX_CUSTOMER_PHONE,
      paid: true,
      cancellation_reason: null,
      history: JSON.stringify([{ status: 'NEW', previousStatus: null, at: now.toISOString() }]),
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  await recordEvents(trx, [orderEvent('order.new', order, orderNewData(order, shop.name), now)]);
  return order;
}

async function lockOrder(
  trx: Transaction<DB> | Kysely<DB>,
  caller: Caller,
  referenceNumber: string,
  lock = true,
): Promise<OrderRow> {
  let query = trx
    .selectFrom('orders')
    .selectAll()
    .where('reference_number', '=', referenceNumber)
    .where('business_id', '=', caller.businessId)
    .where('environment', '=', caller.environment);
  if (lock) query = query.forUpdate();
  const order = await query.executeTakeFirst();
  if (!order) {
    // api.md 5 rule 4: the business's order in the other environment is a mismatch, not missing.
    const where = { column: 'reference_number', value: referenceNumber } as const;
    throw new ApiError(
      (await inOtherEnvironment(trx, 'orders', where, caller)) ? 'SANDBOX_MISMATCH' : 'ORDER_NOT_FOUND',
    );
  }
  return order;
}

/** One workflow step on a locked order; the losing side of a race finds the new status and is refused. */
export async function transitionOrder(
  trx: Transaction<DB>,
  caller: Caller,
  referenceNumber: string,
  action: WorkflowAction,
  reason?: string,
): Promise<OrderRow> {
  const order = await lockOrder(trx, caller, referenceNumber);
  const step = orderActions[action];
  assertTransition(order.status, action);
  const now = new Date();
  if (action === 'cancel') await moveStock(trx, order.shop_id, order.items, 1);
  const updated = await trx
    .updateTable('orders')
    .set({
      status: step.to,
      history: JSON.stringify([
        ...order.history,
        { status: step.to, previousStatus: order.status, at: now.toISOString() },
      ]),
      ...(action === 'cancel' ? { cancellation_reason: reason ?? null, proposed_modification: null } : {}),
      updated_at: now,
    })
    .where('id', '=', order.id)
    .returningAll()
    .executeTakeFirstOrThrow();
  if (step.event) {
    const data: Record<string, unknown> = {
      referenceNumber: updated.reference_number,
      status: updated.status,
      previousStatus: order.status,
    };
    if (action === 'cancel') data.cancellationReason = reason ?? '';
    await recordEvents(trx, [orderEvent(step.event, updated, data, now)]);
  }
  return updated;
}

/** A refund on a paid order, partial or full; the order becomes REFUNDED. */
export async function refundOrder(
  trx: Transaction<DB>,
  caller: Caller,
  referenceNumber: string,
  input: { amount?: number | undefined },
): Promise<OrderRow> {
  const order = await lockOrder(trx, caller, referenceNumber);
  const left = order.total_amount - order.total_amount_refunded;
  const status = assertTransition(order.status, 'refund');
  if (!order.paid) throw new ApiError('ORDER_INVALID_TRANSITION', 'Only a paid order can be refunded.');
  if (left <= 0) throw new ApiError('ORDER_INVALID_TRANSITION', 'Nothing is left to refund on this order.');
  const amount = input.amount ?? left;
  if (amount < 1 || amount > left) {
    throw new ApiError('REFUND_AMOUNT_INVALID', `The refund amount must be between 1 and ${left} centimes.`);
  }
  const now = new Date();
  const totalRefunded = order.total_amount_refunded + amount;
  const updated = await trx
    .updateTable('orders')
    .set({
      status,
      total_amount_refunded: totalRefunded,
      refunds: JSON.stringify([
        ...order.refunds,
        { id: `RF-${randomDigits(16)}`, amount, createdAt: now.toISOString() },
      ]),
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
    .executeTakeFirstOrThrow();
  await recordEvents(trx, [
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
  ]);
  return updated;
}

/** The merchant proposes new lines (NEW or PREPARING); nothing changes until the customer accepts. */
export async function proposeModification(
  trx: Transaction<DB>,
  caller: Caller,
  referenceNumber: string,
  requested: RequestedItem[],
): Promise<OrderRow> {
  const order = await lockOrder(trx, caller, referenceNumber);
  assertTransition(order.status, 'modify');
  const items = await priceItems(trx, caller, order.shop_id, requested);
  return trx
    .updateTable('orders')
    .set({
      proposed_modification: JSON.stringify({
        items,
        totalAmount: orderTotal(items),
        proposedAt: new Date().toISOString(),
      }),
      updated_at: new Date(),
    })
    .where('id', '=', order.id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The customer accepts the proposal: the lines and total change, stock follows, `order.modified` is sent. */
export async function acceptModification(
  trx: Transaction<DB>,
  caller: Caller,
  referenceNumber: string,
): Promise<OrderRow> {
  const order = await lockOrder(trx, caller, referenceNumber);
  const proposal = order.proposed_modification;
  if (!proposal) throw new ApiError('ORDER_INVALID_TRANSITION', 'This order has no proposed modification to accept.');
  assertTransition(order.status, 'modify');
  await lockProducts(trx, [...order.items, ...proposal.items]);
  await moveStock(trx, order.shop_id, order.items, 1);
  await moveStock(trx, order.shop_id, proposal.items, -1);
  const now = new Date();
  const updated = await trx
    .updateTable('orders')
    .set({
      items: JSON.stringify(proposal.items),
      total_amount: proposal.totalAmount,
      proposed_modification: null,
      updated_at: now,
    })
    .where('id', '=', order.id)
    .where(sql<boolean>`total_amount_refunded <= ${proposal.totalAmount}`)
    .returningAll()
    .executeTakeFirst();
  if (!updated)
    throw new ApiError('ORDER_INVALID_TRANSITION', 'The new total would be below what was already refunded.');
  await recordEvents(trx, [
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
  ]);
  return updated;
}

export async function getOrder(db: Kysely<DB>, caller: Caller, referenceNumber: string): Promise<OrderRow> {
  return lockOrder(db, caller, referenceNumber, false);
}

export async function listOrders(
  db: Kysely<DB>,
  caller: Caller,
  query: {
    status?: OrderStatus | undefined;
    from?: Date | undefined;
    to?: Date | undefined;
    limit: number;
    offset: number;
  },
): Promise<{ items: OrderRow[]; total: number }> {
  let base = db
    .selectFrom('orders')
    .where('business_id', '=', caller.businessId)
    .where('environment', '=', caller.environment);
  if (query.status) base = base.where('status', '=', query.status);
  if (query.from) base = base.where('created_at', '>=', query.from);
  if (query.to) base = base.where('created_at', '<=', query.to);
  const [items, total] = await Promise.all([
    base
      .selectAll()
      .orderBy('created_at', 'desc')
      .orderBy('reference_number', 'desc')
      .limit(query.limit)
      .offset(query.offset)
      .execute(),
    base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { items, total: Number(total.n) };
}

export async function shopNames(db: Executor, shopIds: string[]): Promise<Map<string, string>> {
  if (shopIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('shops')
    .select(['id', 'name'])
    .where('id', 'in', [...new Set(shopIds)])
    .execute();
  return new Map(rows.map((row) => [row.id, row.name]));
}

export function orderView(order: OrderRow, shopName: string) {
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
    totalAmountRefunded: order.total_amount_refunded,
    refunds: order.refunds,
    cancellationReason: order.cancellation_reason,
    history: order.history,
    proposedModification: order.proposed_modification,
    sandbox: order.environment === 'test',
    createdAt: order.created_at.toISOString(),
    updatedAt: order.updated_at.toISOString(),
  };
}
