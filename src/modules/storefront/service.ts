import { sql, type Kysely } from 'kysely';
import type { DB, Environment, OrderItem } from '../../db/schema.js';
import type { Caller } from '../../http/context.js';
import { ApiError, type ErrorDetail } from '../../http/errors.js';
import { maskPhone } from '../../lib/phone.js';
import { checkPaymentAmount } from '../payments/amount.js';
import { feePlanFromColumns } from '../payments/fees.js';
import {
  lineTotal,
  orderTotal,
  priceItems,
  refundableAmount,
  type OrderRow,
  type OrderShop,
  type RequestedItem,
} from '../orders/service.js';
import { isOrderActionAllowed } from '../orders/state.js';
import type { ProductRow } from '../products/model.js';
import { listProducts } from '../products/service.js';
import { SANDBOX_WALLETS } from '../sandbox/sandbox.js';

/** `?mode=`: which of a business's two shops a customer link means. */
export type StoreMode = 'test' | 'live';

export interface StorefrontShop extends OrderShop {
  sandbox: boolean;
}

/**
 * The shop behind `/s/{shopId}`: the shop itself, or its business's shop of the `mode` asked for
 * (`?mode=test` on a live shop's link opens its sandbox twin, as `/pay?mode=test` does for
 * codes). A live shop takes orders only once its business is approved for live mode and its
 * Developer API is on; until then it is SHOP_NOT_FOUND, as an unknown shop is.
 */
export async function resolveShop(db: Kysely<DB>, shopId: string, mode?: StoreMode): Promise<StorefrontShop> {
  // One statement: the shop named, and the shop of its business in the mode asked (itself
  // without a mode), with the business's switches and fee plan.
  const found = await db
    .selectFrom('shops as named')
    .leftJoin('shops', (join) =>
      join
        .onRef('shops.business_id', '=', 'named.business_id')
        .on('shops.environment', '=', mode ?? sql<Environment>`named.environment`),
    )
    .leftJoin('businesses', 'businesses.id', 'shops.business_id')
    .leftJoin('fee_plans', 'fee_plans.business_id', 'shops.business_id')
    .select([
      'shops.id',
      'shops.name',
      'shops.business_id',
      'shops.environment',
      'businesses.live_approved',
      'businesses.api_enabled',
      'fee_plans.provider_bps',
      'fee_plans.payer_fee',
      'fee_plans.tof_bps',
      'fee_plans.tte_bps',
      'fee_plans.revenue_model',
      'fee_plans.margin_bps',
    ])
    .where('named.id', '=', shopId)
    .executeTakeFirst();
  if (!found) throw new ApiError('SHOP_NOT_FOUND', 'No shop at this address.');
  const { id, name, business_id: businessId, environment } = found;
  if (
    id === null ||
    name === null ||
    businessId === null ||
    environment === null ||
    (environment === 'live' && (!found.live_approved || !found.api_enabled))
  ) {
    throw new ApiError('SHOP_NOT_FOUND', 'This shop does not take orders.');
  }
  return {
    id,
    name,
    businessId,
    environment,
    feePlan: feePlanFromColumns(found),
    sandbox: environment === 'test',
  };
}

/** What a customer sees of a product: what it is, what it costs, what can be chosen, whether it is in stock. */
function catalogProduct(row: ProductRow) {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    price: row.price,
    isFlexiblePrice: row.is_flexible_price,
    inStock: row.quantity === null || row.quantity > 0,
    images: [...row.images].sort((a, b) => a.sortOrder - b.sortOrder).map((image) => ({ url: image.url })),
    variants: row.variants.map((variant) => ({
      _id: variant._id,
      type: variant.type,
      label: variant.label,
      priceAdjustment: variant.priceAdjustment,
      inStock: variant.quantity === null || variant.quantity > 0,
    })),
    options: row.options.map((option) => ({
      _id: option._id,
      name: option.name,
      priceAdjustment: option.priceAdjustment,
    })),
  };
}

export type CatalogProduct = ReturnType<typeof catalogProduct>;

export interface CatalogView {
  shopId: string;
  shopName: string;
  currency: 'MRU';
  payerFee: number;
  sandbox: boolean;
  search: string | null;
  items: CatalogProduct[];
  page: number;
  limit: number;
  total: number;
  hasMore: boolean;
  testWallets: { phone: string; pin: string; note: string; locked: boolean }[];
}

export const CATALOG_PAGE_SIZE = 100;

/** The shop's ACTIVE products (A to Z), optionally those whose name has every searched word. */
export async function catalogView(
  db: Kysely<DB>,
  shop: StorefrontShop,
  query: { search?: string | undefined; page?: number | undefined },
): Promise<CatalogView> {
  const page = query.page ?? 1;
  const limit = CATALOG_PAGE_SIZE;
  const caller = { businessId: shop.businessId, environment: shop.environment, publicOnly: true };
  const result = await listProducts(db, caller, {
    search: query.search,
    sortBy: 'oldest',
    limit,
    offset: (page - 1) * limit,
  });
  return {
    shopId: shop.id,
    shopName: shop.name,
    currency: 'MRU',
    payerFee: shop.feePlan.payerFee,
    sandbox: shop.sandbox,
    search: query.search ?? null,
    items: result.items.map(catalogProduct),
    page,
    limit,
    total: result.total,
    hasMore: page * limit < result.total,
    testWallets: shop.sandbox
      ? SANDBOX_WALLETS.map(({ phone, pin, note, locked }) => ({ phone, pin, note, locked }))
      : [],
  };
}

/**
 * Whether the stock of these lines is there now, by the same counts an order takes (product and
 * variant, several lines of one product added up). A quote only: the order itself takes the
 * stock under lock, and may still find it gone. Every short line is named in the error's details,
 * `body.items.{i}.quantity` "must be <= {n}", n being what that line may have with the other
 * lines kept as they are (0: none left), so a page can say which item and how many are left.
 */
async function checkStock(db: Kysely<DB>, items: OrderItem[]): Promise<void> {
  const ids = [...new Set(items.map((item) => item.productId))];
  const rows = await db.selectFrom('products').select(['id', 'quantity', 'variants']).where('id', 'in', ids).execute();
  const wanted = new Map<string, number>();
  const variantKey = (item: OrderItem) => `${item.productId}/${item.variant!._id}`;
  for (const item of items) {
    wanted.set(item.productId, (wanted.get(item.productId) ?? 0) + item.quantity);
    if (item.variant) wanted.set(variantKey(item), (wanted.get(variantKey(item)) ?? 0) + item.quantity);
  }
  const details: ErrorDetail[] = [];
  const names: string[] = [];
  for (const [index, item] of items.entries()) {
    const row = rows.find((product) => product.id === item.productId);
    const variant = item.variant && row?.variants.find((v) => v._id === item.variant!._id);
    // What this line may have: the stock less what the cart's other lines of it take.
    const room = (stock: number | null | undefined, key: string) =>
      stock == null ? Infinity : stock - ((wanted.get(key) ?? 0) - item.quantity);
    const allowed = Math.min(
      room(row?.quantity, item.productId),
      variant ? room(variant.quantity, variantKey(item)) : Infinity,
    );
    if (allowed < item.quantity) {
      details.push({ field: `body.items.${index}.quantity`, message: `must be <= ${Math.max(0, allowed)}` });
      names.push(`${item.name}${item.variant ? ` (${item.variant.label})` : ''}`);
    }
  }
  if (details.length > 0) {
    throw new ApiError('INSUFFICIENT_STOCK', `Not enough stock of ${names.join(', ')}.`, details);
  }
}

function lineView(item: OrderItem) {
  return {
    productId: item.productId,
    name: item.name,
    quantity: item.quantity,
    price: item.price,
    ...(item.variant
      ? { variant: { _id: item.variant._id, label: item.variant.label, priceAdjustment: item.variant.priceAdjustment } }
      : {}),
    ...(item.options ? { options: item.options } : {}),
    lineTotal: lineTotal(item),
  };
}

/** The errors that mean a line's product or variant is no longer sold here. */
const GONE: ReadonlySet<string> = new Set(['PRODUCT_NOT_FOUND', 'VARIANT_NOT_FOUND']);

/**
 * A cart kept by a browser outlives products: when pricing finds one gone, the error names the
 * line (`body.items.{i}`), found by pricing the lines one by one (on this failure only).
 */
async function nameTheLineGone(error: unknown, lineErrors: () => Promise<(ApiError | undefined)[]>): Promise<never> {
  if (!(error instanceof ApiError) || !GONE.has(error.code) || error.details) throw error;
  const details = (await lineErrors()).flatMap((lineError, index) =>
    lineError && GONE.has(lineError.code) ? [{ field: `body.items.${index}`, message: lineError.message }] : [],
  );
  throw new ApiError(error.code, error.message, details.length > 0 ? details : undefined);
}

function priceEachLine(db: Kysely<DB>, caller: Caller, shopId: string, requested: RequestedItem[]) {
  return Promise.all(
    requested.map((line) =>
      priceItems(db, caller, shopId, [line]).then(
        () => undefined,
        (error: unknown) => (error instanceof ApiError ? error : undefined),
      ),
    ),
  );
}

/** A cart priced by the server, exactly as an order of it would be now: lines, total, fee, what the wallet pays. */
export async function priceCart(db: Kysely<DB>, shop: StorefrontShop, requested: RequestedItem[], maxAmount: number) {
  const caller = { businessId: shop.businessId, environment: shop.environment };
  const items = await priceItems(db, caller, shop.id, requested).catch((error: unknown) =>
    nameTheLineGone(error, () => priceEachLine(db, caller, shop.id, requested)),
  );
  await checkStock(db, items);
  const total = orderTotal(items);
  checkPaymentAmount(total, maxAmount);
  const payerFee = shop.feePlan.payerFee;
  return {
    items: items.map(lineView),
    totalAmount: total,
    payerFee,
    totalToPay: total + payerFee,
    currency: 'MRU' as const,
    sandbox: shop.sandbox,
  };
}

/** What the customer sees of their order, by its link: never the merchant's own fields. */
export function customerOrderView(order: OrderRow, shopName: string) {
  const proposal = order.proposed_modification;
  const modifiable = isOrderActionAllowed(order, 'modify');
  return {
    orderRef: order.customer_ref,
    referenceNumber: order.reference_number,
    shopId: order.shop_id,
    shopName,
    status: order.status,
    items: order.items.map(lineView),
    totalAmount: order.total_amount,
    currency: 'MRU' as const,
    customerName: order.customer_name,
    customerPhone: maskPhone(order.customer_phone),
    paid: order.paid,
    amountPaid: order.paid ? order.amount_paid : 0,
    payerFee: order.payment?.payerFee ?? 0,
    totalAmountRefunded: order.total_amount_refunded,
    refunds: order.refunds.map((refund) => ({ amount: refund.amount, createdAt: refund.createdAt })),
    refundable: refundableAmount(order),
    cancellationReason: order.cancellation_reason,
    proposedModification:
      proposal && modifiable
        ? {
            items: proposal.items.map(lineView),
            totalAmount: proposal.totalAmount,
            difference: proposal.totalAmount - order.total_amount,
            proposedAt: proposal.proposedAt,
          }
        : null,
    canCancel: isOrderActionAllowed(order, 'customerCancel'),
    sandbox: order.environment === 'test',
    createdAt: order.created_at.toISOString(),
    updatedAt: order.updated_at.toISOString(),
  };
}

export type CustomerOrderView = ReturnType<typeof customerOrderView>;
