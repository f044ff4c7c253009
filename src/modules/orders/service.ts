import { sql, type Kysely, type Selectable, type Transaction } from 'kysely';
import type {
  DB,
  Environment,
  OrderFees,
  OrderItem,
  OrderPayment,
  OrderRefund,
  OrderStatus,
  OrdersTable,
} from '../../db/schema.js';
import { inOtherEnvironment } from '../../http/environments.js';
import { ApiError, invalid } from '../../http/errors.js';
import { countedPage, type CountedTable } from '../../db/counted-list.js';
import type { Executor } from '../../db/transaction.js';
import { randomBase62, randomDigits } from '../../lib/ids.js';
import type { EventNameOf } from '../events/catalog.js';
import { changeWithEvents, recordEvents, type EventRecord } from '../events/outbox.js';
import { storeEvent } from '../events/store-events.js';
import { feePlanFromColumns, type FeePlan, type MarginLine } from '../payments/fees.js';
import { chargeOrder, chargeOrderDifference, heldCommission, returnOrderMoney } from '../payments/order-payments.js';
import { lockPayer, sandboxPayer, type Payer } from '../payments/payers.js';
import { lockedUntil } from '../wallets/service.js';
import { findProducts, resolveProduct, stockChangeOf, writeStock } from '../products/service.js';
import type { ProductRow } from '../products/model.js';
import { assertOrderAction, ORDER_STATUSES, orderActions, type WorkflowAction } from './state.js';
import type { Caller } from '../../http/context.js';

export type OrderRow = Selectable<OrdersTable>;

/** An order as a write left it, with its shop's name for the answer, read by the same statement. */
export type ChangedOrder = OrderRow & { shop_name: string };
const SHOP_NAME = sql<string>`(SELECT name FROM shops WHERE shops.id = orders.shop_id)`.as('shop_name');

export type { Caller };

/** The sandbox customer when a simulation names none (the rich test wallet of the README). */
export const SANDBOX_CUSTOMER_PHONE = '+22220000001';

export interface RequestedItem {
  productId: string;
  quantity: number;
  variantId?: string | undefined;
  optionIds?: string[] | undefined;
  /** The unit price the customer chose, for an `isFlexiblePrice` product only (centimes). */
  price?: number | undefined;
}

/** Where an order is found: by the merchant (its key's business and environment) or by its customer link. */
export type OrderLocator = { caller: Caller; referenceNumber: string } | { customerRef: string };

export function lineTotal(item: OrderItem): number {
  const options = (item.options ?? []).reduce((sum, option) => sum + option.priceAdjustment, 0);
  return (item.price + (item.variant?.priceAdjustment ?? 0) + options) * item.quantity;
}

export function orderTotal(items: OrderItem[]): number {
  return items.reduce((sum, item) => sum + lineTotal(item), 0);
}

/**
 * The unit price of a line: the catalog price, never a price the client sends, except for an
 * `isFlexiblePrice` product (pay what you want), where the customer's price counts if it is at
 * least the catalog price (decisions: the catalog price is the floor).
 */
function unitPrice(
  product: { id: string; price: number; is_flexible_price: boolean },
  chosen: number | undefined,
  index: number,
): number {
  if (chosen === undefined) return product.price;
  const field = `body.items.${index}.price`;
  if (!product.is_flexible_price)
    throw invalid(field, `is only for a flexible-price product; ${product.id} is not one`);
  if (chosen < product.price) throw invalid(field, `must be at least the catalog price (${product.price})`);
  return chosen;
}

/**
 * What the customer buys, priced by the server from the products as they are now (ACTIVE, of
 * this shop), kept as a snapshot: later product edits do not change the order.
 */
export async function priceItems(
  trx: Executor,
  caller: Caller,
  shopId: string,
  requested: RequestedItem[],
): Promise<OrderItem[]> {
  return (await pricedLines(trx, caller, shopId, requested, false)).items;
}

/**
 * Prices the lines from their products, read (and, with `lock`, locked in id order for the stock
 * the order takes: one statement for both) in one statement; returns the products read too.
 */
async function pricedLines(
  trx: Executor,
  caller: Caller,
  shopId: string,
  requested: RequestedItem[],
  lock: boolean,
): Promise<{ items: OrderItem[]; products: Map<string, ProductRow> }> {
  const lookup = { ...caller, publicOnly: true };
  const products = await findProducts(
    trx,
    lookup,
    shopId,
    requested.map((line) => line.productId),
    { lock },
  );
  const items: OrderItem[] = [];
  for (const [index, line] of requested.entries()) {
    // A line that found nothing is refused in its turn, with resolveProduct's reason.
    const product = products[index] ?? (await resolveProduct(trx, lookup, shopId, line.productId));
    const item: OrderItem = {
      productId: product.id,
      name: product.name,
      quantity: line.quantity,
      price: unitPrice(product, line.price, index),
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
  return { items, products: new Map(products.flatMap((product) => (product ? [[product.id, product]] : []))) };
}

/**
 * Moves stock for order lines (negative to take, positive to give back), on the product and on
 * the chosen variant wherever that stock is counted, and writes every changed product in one
 * statement. The products are locked once, in id order (`locked`, when the caller already holds
 * them), so concurrent orders queue. Returns the stock events, for the caller to write with its own.
 */
async function moveStock(
  trx: Transaction<DB>,
  shopId: string,
  items: OrderItem[],
  direction: -1 | 1,
  locked?: Map<string, ProductRow>,
): Promise<EventRecord[]> {
  const rows = locked ?? (await lockProducts(trx, items));
  const changed = new Map<string, ProductRow>();
  const events: EventRecord[] = [];
  const now = new Date();
  for (const item of items) {
    const row = rows.get(item.productId);
    if (!row || row.deleted_at || row.shop_id !== shopId) {
      if (direction === -1) throw new ApiError('PRODUCT_NOT_FOUND', `No product ${item.productId}.`);
      continue; // nothing to give stock back to
    }
    // Checked again under the lock: a product disabled since it was priced (or since a
    // modification was proposed) is not sold.
    if (direction === -1 && row.status !== 'ACTIVE') {
      throw new ApiError('PRODUCT_NOT_FOUND', `No product ${item.productId}: it is not on sale.`);
    }
    const change = { delta: direction * item.quantity, givenBack: direction === 1 };
    try {
      let product = row;
      if (product.quantity !== null) {
        const moved = stockChangeOf(product, change, 'body', now);
        product = moved.product;
        events.push(...moved.events);
      }
      const variant = item.variant && product.variants.find((v) => v._id === item.variant!._id);
      if (variant && variant.quantity !== null) {
        const moved = stockChangeOf(product, { ...change, variantId: variant._id }, 'body', now);
        product = moved.product;
        events.push(...moved.events);
      }
      // Two lines of one product (two variants) see each other's change.
      rows.set(product.id, product);
      if (product !== row) changed.set(product.id, product);
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
  await writeStock(trx, [...changed.values()]);
  return events;
}

/**
 * Locks the products of some order lines in one fixed order (by id), in one statement, so two
 * transactions that touch the same products always queue instead of deadlocking; returns them
 * as they are under the lock.
 */
async function lockProducts(trx: Transaction<DB>, items: OrderItem[]): Promise<Map<string, ProductRow>> {
  const ids = [...new Set(items.map((item) => item.productId))].sort();
  if (ids.length === 0) return new Map();
  const rows = await trx.selectFrom('products').selectAll().where('id', 'in', ids).orderBy('id').forUpdate().execute();
  return new Map(rows.map((row) => [row.id, row]));
}

/** The `order.new` data: exactly the fields of api.md 2.5. */
function orderNewData(
  order: Pick<
    OrderRow,
    | 'reference_number'
    | 'shop_id'
    | 'status'
    | 'items'
    | 'total_amount'
    | 'customer_phone'
    | 'customer_name'
    | 'created_at'
  >,
  shopName: string,
) {
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

function orderEvent(
  event: EventNameOf<'order'>,
  order: Pick<OrderRow, 'business_id' | 'environment' | 'reference_number'>,
  data: Record<string, unknown>,
  at: Date,
): EventRecord {
  return storeEvent(
    event,
    { businessId: order.business_id, environment: order.environment },
    order.reference_number,
    data,
    at,
  );
}

/** The shop an order is placed in: its environment decides which products and wallets count. */
export interface OrderShop {
  id: string;
  name: string;
  businessId: string;
  environment: Environment;
  /** The business's fee plan, read with the shop. */
  feePlan: FeePlan;
}

export interface PlaceOrderInput {
  items: RequestedItem[];
  customerName: string;
}

function refused(code: 'INSUFFICIENT_BALANCE', message: string): ApiError {
  return new ApiError(code, message);
}

/**
 * A customer places and pays an order, in the caller's transaction with the payer's wallet
 * locked: the server prices every line, takes the stock, debits amount + payer fee from the
 * wallet and credits the merchant through the one charge every payment uses, creates the order
 * (paid, linked to its payment) and writes `order.new` with its deliveries. Any refusal (stock,
 * product, balance) throws, so the transaction takes nothing.
 */
export async function placeOrder(
  trx: Transaction<DB>,
  shop: OrderShop,
  input: PlaceOrderInput,
  payer: Payer,
  limits: { maxAmount: number },
): Promise<OrderRow> {
  const caller = { businessId: shop.businessId, environment: shop.environment };
  const { items, products } = await pricedLines(trx, caller, shop.id, input.items, true);
  const stockEvents = await moveStock(trx, shop.id, items, -1, products);
  const total = orderTotal(items);
  if (total < 1 || total > limits.maxAmount) {
    throw new ApiError('AMOUNT_OUT_OF_RANGE', `An order total must be between 1 and ${limits.maxAmount} centimes.`);
  }
  const now = new Date();
  const referenceNumber = `OR-${randomDigits(16)}`;
  const plan = shop.feePlan;
  const charge = chargeOrder(
    { environment: shop.environment, businessId: shop.businessId, orderReference: referenceNumber },
    { payer, amount: total, lines: marginLines(items, products), plan, now },
  );
  if (charge === 'INSUFFICIENT_BALANCE') {
    throw refused(
      'INSUFFICIENT_BALANCE',
      `The wallet balance cannot cover this order (${total + plan.payerFee} centimes with the fee). Nothing was charged.`,
    );
  }
  const payment: OrderPayment = {
    id: `OP-${randomDigits(16)}`,
    amountPaid: total,
    payerFee: charge.commission.payer_ttc,
    method: 'WALLET',
    payerPhone: payer.wallet.phone,
    paidAt: now.toISOString(),
    ledgerTransactionId: charge.transfer.transactionId,
    adjustments: [],
  };
  const { fees } = charge;
  const row = {
    reference_number: referenceNumber,
    customer_ref: randomBase62(32),
    shop_id: shop.id,
    business_id: shop.businessId,
    environment: shop.environment,
    status: 'NEW' as const,
    total_amount: total,
    customer_name: input.customerName,
    customer_phone: payer.wallet.phone,
    created_at: now,
  };
  // The order, its payment's ledger transfer, its `order.new` and the stock events, in one statement.
  const [order] = await changeWithEvents(
    trx,
    trx
      .insertInto('orders')
      .values({
        ...row,
        items: JSON.stringify(items),
        paid: true,
        payer_wallet_id: payer.wallet.id,
        amount_paid: total,
        payment: JSON.stringify(payment),
        fees: JSON.stringify(fees),
        cancellation_reason: null,
        history: JSON.stringify([{ status: 'NEW', previousStatus: null, at: now.toISOString() }]),
        updated_at: now,
      })
      .returningAll(),
    [...stockEvents, orderEvent('order.new', row, orderNewData({ ...row, items }, shop.name), now)],
    charge.transfer.ctes,
  );
  if (!order) throw new Error(`order ${referenceNumber} was not inserted`);
  return order;
}

/**
 * Sandbox: a customer places and pays an order, through the same path as the storefront, paying
 * from the sandbox wallet of `customerPhone` (a phone without one gets a funded one).
 */
export async function simulateOrder(
  trx: Transaction<DB>,
  caller: Caller,
  input: PlaceOrderInput & { customerPhone?: string | undefined },
  limits: { maxAmount: number },
): Promise<{ order: OrderRow; shop: OrderShop }> {
  const shop = await orderShopOf(trx, caller);
  const payer = await sandboxPayer(trx, input.customerPhone ?? SANDBOX_CUSTOMER_PHONE);
  if (lockedUntil(payer.wallet, new Date())) throw new ApiError('WALLET_LOCKED');
  return { order: await placeOrder(trx, shop, input, payer, limits), shop };
}

/** The cost basis of the products of some order lines, as the catalog has them now. */
async function costBases(
  trx: Executor,
  items: readonly OrderItem[],
): Promise<Map<string, { cost_basis: number | null }>> {
  const ids = [...new Set(items.map((item) => item.productId))];
  const rows = await trx.selectFrom('products').select(['id', 'cost_basis']).where('id', 'in', ids).execute();
  return new Map(rows.map((row) => [row.id, row]));
}

/** The caller's shop with its business's fee plan, in one statement. */
async function orderShopOf(trx: Executor, caller: Caller): Promise<OrderShop> {
  const shop = await trx
    .selectFrom('shops')
    .leftJoin('fee_plans', 'fee_plans.business_id', 'shops.business_id')
    .select([
      'shops.id',
      'shops.name',
      'provider_bps',
      'payer_fee',
      'tof_bps',
      'tte_bps',
      'revenue_model',
      'margin_bps',
    ])
    .where('shops.business_id', '=', caller.businessId)
    .where('shops.environment', '=', caller.environment)
    .executeTakeFirst();
  if (!shop) throw new ApiError('SHOP_NOT_FOUND');
  return { id: shop.id, name: shop.name, ...caller, feePlan: feePlanFromColumns(shop) };
}

async function lockOrder(trx: Transaction<DB> | Kysely<DB>, locator: OrderLocator, lock = true): Promise<OrderRow> {
  let query = trx.selectFrom('orders').selectAll();
  query =
    'customerRef' in locator
      ? query.where('customer_ref', '=', locator.customerRef)
      : query
          .where('reference_number', '=', locator.referenceNumber)
          .where('business_id', '=', locator.caller.businessId)
          .where('environment', '=', locator.caller.environment);
  if (lock) query = query.forUpdate();
  const order = await query.executeTakeFirst();
  if (!order) {
    if ('customerRef' in locator) throw new ApiError('ORDER_NOT_FOUND', 'No order with this link.');
    // api.md 5 rule 4: the business's order in the other environment is a mismatch, not missing.
    const where = { column: 'reference_number', value: locator.referenceNumber } as const;
    throw new ApiError(
      (await inOtherEnvironment(trx, 'orders', where, locator.caller)) ? 'SANDBOX_MISMATCH' : 'ORDER_NOT_FOUND',
    );
  }
  return order;
}

/** What can still go back to the customer: what was paid less what was refunded. */
export function refundableAmount(order: OrderRow): number {
  return order.paid ? order.amount_paid - order.total_amount_refunded : 0;
}

/** Gives `amount` of a paid order back to the wallet that paid (payments' `returnOrderMoney`). */
function returnMoney(
  trx: Transaction<DB>,
  order: OrderRow,
  money: { amount: number; reference: string; as: 'order_refund' | 'order_adjustment'; final: boolean; now: Date },
): Promise<{ ledgerTransactionId: string; fees: OrderFees }> {
  return returnOrderMoney(trx, { ...moneyRefOf(order), fees: order.fees!, walletId: order.payer_wallet_id! }, money);
}

function moneyRefOf(order: OrderRow) {
  return { environment: order.environment, businessId: order.business_id, orderReference: order.reference_number };
}

/** An order's lines as the MARGIN revenue model sees them, with their products' cost basis. */
function marginLines(items: readonly OrderItem[], costs: Map<string, { cost_basis: number | null }>): MarginLine[] {
  return items.map((item) => ({
    amount: lineTotal(item),
    quantity: item.quantity,
    costBasis: costs.get(item.productId)?.cost_basis ?? null,
  }));
}

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
    const data: Record<string, unknown> = {
      referenceNumber: updated.reference_number,
      status: updated.status,
      previousStatus: order.status,
    };
    if (action === 'cancel') {
      data.cancellationReason = reason ?? '';
      data.amountRefunded = money?.refund.amount ?? 0;
    }
    await recordEvents(trx, [...stockEvents, orderEvent(step.event, updated, data, now)]);
  } else {
    await recordEvents(trx, stockEvents);
  }
  return updated;
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
  locator: OrderLocator & { caller: Caller },
  requested: RequestedItem[],
  limits: { maxAmount: number },
): Promise<ChangedOrder> {
  const order = await lockOrder(trx, locator);
  assertOrderAction(order, 'modify');
  const items = await priceItems(trx, locator.caller, order.shop_id, requested);
  const total = orderTotal(items);
  // The same bounds as placing an order: the customer would be charged (or refunded) up to it.
  if (total < 1 || total > limits.maxAmount) {
    throw new ApiError('AMOUNT_OUT_OF_RANGE', `An order total must be between 1 and ${limits.maxAmount} centimes.`);
  }
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
        throw refused(
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
  await recordEvents(trx, [
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
  ]);
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
  await recordEvents(trx, [
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
  ]);
  return updated;
}

export async function getOrder(db: Kysely<DB>, locator: OrderLocator): Promise<OrderRow> {
  return lockOrder(db, locator, false);
}

const ORDERS: CountedTable = { list: 'orders', table: 'orders', tiebreak: 'reference_number' };

/** A page of a business's orders, newest first, with the exact number that match (counted-list.ts). */
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
  return countedPage<OrderRow>(db, ORDERS, {
    businessId: caller.businessId,
    environment: caller.environment,
    statuses: query.status ? [query.status] : ORDER_STATUSES,
    filterRowsByStatus: query.status !== undefined,
    from: query.from,
    to: query.to,
    order: 'newest',
    limit: query.limit,
    offset: query.offset,
  });
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
