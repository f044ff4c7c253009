import { sql, type Selectable, type Transaction } from 'kysely';
import type { DB, ProductsTable, StoredVariant } from '../../db/schema.js';
import { ApiError, invalid } from '../../http/errors.js';
import { eventRecord, type EventRecord } from '../events/outbox.js';
import { unitOfWork } from '../events/unit-of-work.js';
import { normaliseExternalId, type ProductRow } from './model.js';
import { resolveProduct, shopOf, type CatalogCaller } from './reads.js';

/*
 * A product's stock rules: the events a change sends, a change worked out in memory and written,
 * the inventory endpoints, and the stock an order's lines take and give back. Each writer locks
 * its products first (several in id order), so concurrent changes queue and none is lost.
 */

/** What the stock events name of a product. */
type WatchedProduct = Pick<
  Selectable<ProductsTable>,
  'id' | 'external_id' | 'name' | 'shop_id' | 'business_id' | 'environment' | 'low_stock_threshold'
>;

/**
 * api.md 6.4: `product.stock_low` once per downward crossing of the threshold (from at or above
 * it to below it), `product.stock_out` when the stock reaches 0. A drop from 10 to 0 sends both.
 * Unlimited stock (null) is above every threshold. Variant stock is watched the same way; those
 * events name the variant.
 */
export function stockEvents(
  product: WatchedProduct,
  before: number | null,
  after: number | null,
  variant?: Pick<StoredVariant, '_id' | 'label'>,
  at = new Date(),
): EventRecord[] {
  if (after === null) return [];
  const threshold = product.low_stock_threshold;
  const was = before ?? Number.POSITIVE_INFINITY;
  const scope = { businessId: product.business_id, environment: product.environment };
  const variantFields = variant ? { variantId: variant._id, variantLabel: variant.label } : {};
  const events: EventRecord[] = [];
  if (was >= threshold && after < threshold) {
    events.push(
      eventRecord(
        'product.stock_low',
        scope,
        product.id,
        {
          productId: product.id,
          externalId: product.external_id,
          name: product.name,
          quantity: after,
          lowStockThreshold: threshold,
          shopId: product.shop_id,
          ...variantFields,
        },
        at,
      ),
    );
  }
  if (was > 0 && after === 0) {
    events.push(
      eventRecord(
        'product.stock_out',
        scope,
        product.id,
        {
          productId: product.id,
          externalId: product.external_id,
          name: product.name,
          quantity: 0,
          shopId: product.shop_id,
          ...variantFields,
        },
        at,
      ),
    );
  }
  return events;
}

/** Stock events between two versions of a product: its own stock and each variant kept by `_id`. */
export function stockEventsBetween(
  before: WatchedProduct & { quantity: number | null; variants: StoredVariant[] },
  after: WatchedProduct & { quantity: number | null; variants: StoredVariant[] },
  at = new Date(),
): EventRecord[] {
  const events = stockEvents(after, before.quantity, after.quantity, undefined, at);
  for (const variant of after.variants) {
    const previous = before.variants.find((v) => v._id === variant._id);
    if (previous) events.push(...stockEvents(after, previous.quantity, variant.quantity, variant, at));
  }
  return events;
}

export interface StockChange {
  quantity?: number | null | undefined;
  delta?: number | undefined;
  variantId?: string | undefined;
  variantLabel?: string | undefined;
  /**
   * Stock given back by an order (cancelled, or modified to fewer items): it stops at the
   * maximum instead of being refused, so a cancel always goes through. Set by the server only;
   * the inventory bodies refuse unknown fields.
   */
  givenBack?: boolean;
}

/** The stock schema's maximum: a delta may not carry the stock past it. */
const MAX_STOCK = 1_000_000_000;

/** The variant a change names, by `_id` or by label (VARIANT_LABEL_AMBIGUOUS when several share it). */
export function targetVariant(product: ProductRow, change: StockChange, field = 'body'): StoredVariant | undefined {
  if (change.variantId !== undefined && change.variantLabel !== undefined) {
    throw invalid(`${field}.variantLabel`, 'cannot be sent with variantId');
  }
  if (change.variantId !== undefined) {
    const variant = product.variants.find((v) => v._id === change.variantId);
    if (!variant) throw new ApiError('VARIANT_NOT_FOUND', `No variant ${change.variantId} on product ${product.id}.`);
    return variant;
  }
  if (change.variantLabel !== undefined) {
    const matches = product.variants.filter((v) => v.label === change.variantLabel);
    if (matches.length === 0) {
      throw new ApiError('VARIANT_NOT_FOUND', `No variant labelled "${change.variantLabel}" on product ${product.id}.`);
    }
    if (matches.length > 1) {
      throw new ApiError(
        'VARIANT_LABEL_AMBIGUOUS',
        `${matches.length} variants are labelled "${change.variantLabel}"; use the variant _id.`,
      );
    }
    return matches[0];
  }
  return undefined;
}

/** The stock after a change: exactly one of `quantity` (set) and `delta` (add). */
function nextStock(current: number | null, change: StockChange, field: string): number | null {
  const hasQuantity = change.quantity !== undefined;
  if (hasQuantity === (change.delta !== undefined)) throw invalid(field, 'needs exactly one of quantity and delta');
  if (hasQuantity) return change.quantity!;
  if (current === null) throw invalid(`${field}.delta`, 'cannot apply to unlimited stock; set a quantity first');
  const next = current + change.delta!;
  if (next < 0) throw new ApiError('INSUFFICIENT_STOCK', `The stock is ${current}; it cannot go below 0.`);
  if (next > MAX_STOCK && change.givenBack) return MAX_STOCK;
  if (next > MAX_STOCK)
    throw invalid(`${field}.delta`, `would take the stock from ${current} past the maximum of ${MAX_STOCK}`);
  return next;
}

/**
 * One stock change on a locked product (or one of its variants), worked out in memory: the row it
 * leaves and its stock events. `writeStock` then writes the rows of any number of such changes.
 */
export function stockChangeOf(
  product: ProductRow,
  change: StockChange,
  field = 'body',
  now = new Date(),
): { product: ProductRow; events: EventRecord[] } {
  const variant = targetVariant(product, change, field);
  if (variant) {
    const quantity = nextStock(variant.quantity, change, field);
    const variants = product.variants.map((v) => (v._id === variant._id ? { ...v, quantity } : v));
    const updated = { ...product, variants, updated_at: now };
    return { product: updated, events: stockEvents(updated, variant.quantity, quantity, variant, now) };
  }
  const quantity = nextStock(product.quantity, change, field);
  const updated = { ...product, quantity, updated_at: now };
  return { product: updated, events: stockEvents(updated, product.quantity, quantity, undefined, now) };
}

/** The stock (quantity and variants) of locked products, as `stockChangeOf` left them, in one statement. */
export async function writeStock(trx: Transaction<DB>, products: readonly ProductRow[]): Promise<void> {
  if (products.length === 0) return;
  const rows = products.map(
    (product) =>
      sql`(${product.id}::text, ${product.quantity}::int, ${JSON.stringify(product.variants)}::jsonb,
        ${product.updated_at}::timestamptz)`,
  );
  await sql`
    UPDATE products AS p SET quantity = v.quantity, variants = v.variants, updated_at = v.updated_at
    FROM (VALUES ${sql.join(rows)}) AS v(id, quantity, variants, updated_at)
    WHERE p.id = v.id`.execute(trx);
}

/**
 * One stock change on a locked product (or one of its variants), with its stock events, in the
 * caller's transaction. Concurrent changes wait on the row lock, so none is lost.
 */
export async function applyStockChange(
  trx: Transaction<DB>,
  product: ProductRow,
  change: StockChange,
  field = 'body',
  now = new Date(),
): Promise<ProductRow> {
  const { product: updated, events } = stockChangeOf(product, change, field, now);
  await writeStock(trx, [updated]);
  await unitOfWork().events(events).run(trx);
  return updated;
}

export async function changeInventory(
  trx: Transaction<DB>,
  caller: CatalogCaller,
  id: string,
  change: StockChange,
): Promise<ProductRow> {
  const shop = await shopOf(trx, caller);
  const product = await resolveProduct(trx, caller, shop.id, id, true);
  return applyStockChange(trx, product, change);
}

/** Bulk inventory: all or nothing; items naming the same product apply in order. */
export async function changeInventoryBulk(
  trx: Transaction<DB>,
  caller: CatalogCaller,
  items: (StockChange & { id?: string | undefined; externalId?: string | undefined })[],
): Promise<ProductRow[]> {
  const shop = await shopOf(trx, caller);
  // Every product named is locked first, in id order like an order's products, so a bulk update
  // and an order (or two bulk updates) naming the same products in other orders queue rather
  // than deadlock.
  const keys = items
    .flatMap((item) => [item.id, item.externalId, item.externalId && normaliseExternalId(item.externalId)])
    .filter((key) => key !== undefined);
  if (keys.length > 0) {
    await trx
      .selectFrom('products')
      .select('id')
      .where('shop_id', '=', shop.id)
      .where('deleted_at', 'is', null)
      .where((eb) => eb.or([eb('id', 'in', keys), eb('external_id', 'in', keys)]))
      .orderBy('id')
      .forUpdate()
      .execute();
  }
  const results = new Map<string, ProductRow>();
  for (const [index, item] of items.entries()) {
    const field = `body.items.${index}`;
    if ((item.id === undefined) === (item.externalId === undefined))
      throw invalid(field, 'needs exactly one of id and externalId');
    const key = item.id ?? item.externalId!;
    const product = await resolveProduct(trx, caller, shop.id, key, true);
    if (
      item.externalId !== undefined &&
      normaliseExternalId(product.external_id ?? '') !== normaliseExternalId(item.externalId)
    ) {
      throw new ApiError('PRODUCT_NOT_FOUND', `No product with the externalId "${item.externalId}".`);
    }
    results.set(product.id, await applyStockChange(trx, results.get(product.id) ?? product, item, field));
  }
  return [...results.values()];
}

/** An order line as its stock sees it: the product, the chosen variant, how many. */
export interface StockLine {
  productId: string;
  name: string;
  quantity: number;
  variant?: { _id: string; label: string } | undefined;
}

/**
 * Locks the products of some order lines in one fixed order (by id), in one statement, so two
 * transactions that touch the same products always queue instead of deadlocking; returns them
 * as they are under the lock.
 */
export async function lockProducts(
  trx: Transaction<DB>,
  lines: readonly Pick<StockLine, 'productId'>[],
): Promise<Map<string, ProductRow>> {
  const ids = [...new Set(lines.map((line) => line.productId))].sort();
  if (ids.length === 0) return new Map();
  const rows = await trx.selectFrom('products').selectAll().where('id', 'in', ids).orderBy('id').forUpdate().execute();
  return new Map(rows.map((row) => [row.id, row]));
}

/**
 * Moves stock for order lines (negative to take, positive to give back), on the product and on
 * the chosen variant wherever that stock is counted, and writes every changed product in one
 * statement. The products are locked once, in id order (`locked`, when the caller already holds
 * them), so concurrent orders queue. Returns the stock events, for the caller to write with its own.
 */
export async function moveStock(
  trx: Transaction<DB>,
  shopId: string,
  items: readonly StockLine[],
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
