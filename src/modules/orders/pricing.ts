import type { Transaction } from 'kysely';
import type { DB, OrderItem } from '../../db/schema.js';
import type { Executor } from '../../db/transaction.js';
import { ApiError, invalid } from '../../http/errors.js';
import type { MarginLine } from '../payments/fees.js';
import type { ProductRow } from '../products/model.js';
import { findProducts, resolveProduct, type CatalogCaller } from '../products/reads.js';
import type { Caller } from './model.js';

export interface RequestedItem {
  productId: string;
  quantity: number;
  variantId?: string | undefined;
  optionIds?: string[] | undefined;
  /** The unit price the customer chose, for an `isFlexiblePrice` product only (centimes). */
  price?: number | undefined;
}

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
  db: Executor,
  caller: Caller,
  shopId: string,
  requested: RequestedItem[],
): Promise<OrderItem[]> {
  const lookup = { ...caller, publicOnly: true };
  const found = await findProducts(
    db,
    lookup,
    shopId,
    requested.map((line) => line.productId),
  );
  return (await pricedLines(db, lookup, shopId, requested, found)).items;
}

/**
 * `priceItems` for an order that takes the stock: the products are read and locked (in id order,
 * for the stock the order takes) by one statement, and returned with the lines.
 */
export async function priceAndLockItems(
  trx: Transaction<DB>,
  caller: Caller,
  shopId: string,
  requested: RequestedItem[],
): Promise<{ items: OrderItem[]; products: Map<string, ProductRow> }> {
  const lookup = { ...caller, publicOnly: true };
  const found = await findProducts(
    trx,
    lookup,
    shopId,
    requested.map((line) => line.productId),
    { lock: true },
  );
  return pricedLines(trx, lookup, shopId, requested, found);
}

/** Prices the lines from the products `findProducts` found for them (in the lines' order). */
async function pricedLines(
  db: Executor,
  lookup: CatalogCaller,
  shopId: string,
  requested: RequestedItem[],
  found: (ProductRow | undefined)[],
): Promise<{ items: OrderItem[]; products: Map<string, ProductRow> }> {
  const items: OrderItem[] = [];
  for (const [index, line] of requested.entries()) {
    // A line that found nothing is refused in its turn, with resolveProduct's reason.
    const product = found[index] ?? (await resolveProduct(db, lookup, shopId, line.productId));
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
  return { items, products: new Map(found.flatMap((product) => (product ? [[product.id, product]] : []))) };
}

/** The cost basis of the products of some order lines, as the catalog has them now. */
export async function costBases(
  db: Executor,
  items: readonly OrderItem[],
): Promise<Map<string, { cost_basis: number | null }>> {
  const ids = [...new Set(items.map((item) => item.productId))];
  const rows = await db.selectFrom('products').select(['id', 'cost_basis']).where('id', 'in', ids).execute();
  return new Map(rows.map((row) => [row.id, row]));
}

/** An order's lines as the MARGIN revenue model sees them, with their products' cost basis. */
export function marginLines(
  items: readonly OrderItem[],
  costs: Map<string, { cost_basis: number | null }>,
): MarginLine[] {
  return items.map((item) => ({
    amount: lineTotal(item),
    quantity: item.quantity,
    costBasis: costs.get(item.productId)?.cost_basis ?? null,
  }));
}
