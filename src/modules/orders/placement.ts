import { sql, type RawBuilder, type Transaction } from 'kysely';
import type { DB, Environment, OrderPayment } from '../../db/schema.js';
import type { Executor } from '../../db/transaction.js';
import { ApiError } from '../../http/errors.js';
import { randomDigits, secretBase62 } from '../../lib/ids.js';
import { unitOfWork } from '../events/unit-of-work.js';
import { checkPaymentAmount } from '../payments/amount.js';
import { feePlanFromColumns, type FeePlan } from '../payments/fees.js';
import { chargeOrder } from '../payments/order-payments.js';
import { settlementRecord } from '../payments/settlement.js';
import type { PaymentMethodName } from '../payments/state.js';
import { newPaymentId, paymentInsert } from '../payments/store.js';
import type { Payer } from '../payments/payers.js';
import { sandboxPayer, SANDBOX_DEFAULT_PAYER } from '../sandbox/sandbox.js';
import { moveStock } from '../products/stock.js';
import { lockedUntil } from '../wallets/service.js';
import { orderEvent, orderNewData } from './events.js';
import type { Caller, OrderRow } from './model.js';
import { marginLines, orderTotal, priceAndLockItems, type RequestedItem } from './pricing.js';
import { orderSplitLines } from './splits.js';

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
  method: PaymentMethodName = 'WALLET_PIN',
): Promise<OrderRow> {
  const caller = { businessId: shop.businessId, environment: shop.environment };
  const { items, products } = await priceAndLockItems(trx, caller, shop.id, input.items);
  const stockEvents = await moveStock(trx, shop.id, items, -1, products);
  const total = orderTotal(items);
  checkPaymentAmount(total, limits.maxAmount);
  const now = new Date();
  const referenceNumber = `OR-${randomDigits(16)}`;
  const plan = shop.feePlan;
  const charge = chargeOrder(
    { environment: shop.environment, businessId: shop.businessId, orderReference: referenceNumber },
    {
      payer,
      amount: total,
      lines: marginLines(items, products),
      plan,
      split: await orderSplitLines(trx, items, products),
      now,
    },
  );
  if (charge === 'INSUFFICIENT_BALANCE') {
    throw new ApiError(
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
    customer_ref: secretBase62(32),
    shop_id: shop.id,
    business_id: shop.businessId,
    environment: shop.environment,
    status: 'NEW' as const,
    total_amount: total,
    customer_name: input.customerName,
    customer_phone: payer.wallet.phone,
    created_at: now,
  };
  // The order's payment row names the order by its id, known only once it is inserted: the row
  // takes it from the statement's insert (`changed`).
  const paymentRow = (changed: RawBuilder<unknown>) =>
    paymentInsert({
      id: newPaymentId(),
      businessId: shop.businessId,
      environment: shop.environment,
      subject: { orderIdOf: sql<number>`(SELECT id FROM ${changed})` },
      method,
      status: 'SUCCEEDED',
      amount: total,
      payerPhone: payer.wallet.phone,
      payerWalletId: payer.wallet.id,
      commission: charge.commission,
      settlement: settlementRecord(charge.settlement),
      failure: null,
      ledgerTransactionId: charge.transfer.transactionId,
      createdAt: now,
    });
  // The order, its payment (row and ledger transfer), its `order.new` and the stock events, in one statement.
  const [order] = await unitOfWork()
    .money(charge.transfer)
    .change(
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
          split_shares: charge.split ? JSON.stringify(charge.split) : null,
          cancellation_reason: null,
          history: JSON.stringify([{ status: 'NEW', previousStatus: null, at: now.toISOString() }]),
          updated_at: now,
        })
        .returningAll(),
    )
    .following(paymentRow)
    .events([...stockEvents, orderEvent('order.new', row, orderNewData({ ...row, items }, shop.name), now)])
    .run(trx);
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
  const payer = await sandboxPayer(trx, input.customerPhone ?? SANDBOX_DEFAULT_PAYER);
  if (lockedUntil(payer.wallet, new Date())) throw new ApiError('WALLET_LOCKED');
  return { order: await placeOrder(trx, shop, input, payer, limits, 'SANDBOX'), shop };
}

/** The caller's shop with its business's fee plan, in one statement. */
async function orderShopOf(db: Executor, caller: Caller): Promise<OrderShop> {
  const shop = await db
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
