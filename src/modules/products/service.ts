import { sql, type Kysely, type Transaction } from 'kysely';
import type { DB, StoredVariant } from '../../db/schema.js';
import { countedPage, type CountedTable } from '../../db/counted-list.js';
import type { Executor } from '../../db/transaction.js';
import { inOtherEnvironment } from '../../http/environments.js';
import { ApiError, invalid } from '../../http/errors.js';
import { newId } from '../../lib/ids.js';
import { recordEvents, type EventRecord } from '../events/outbox.js';
import { columnsFor, fieldsOf, searchQuery, withDefaults, type ProductFields, type ProductRow } from './model.js';
import { stockEvents, stockEventsBetween } from './stock.js';
import type { Caller as RequestCaller } from '../../http/context.js';

export interface Caller extends RequestCaller {
  /** Publishable keys (browsers) see ACTIVE products only. */
  publicOnly: boolean;
}

export async function shopOf(db: Executor, caller: Caller): Promise<{ id: string; name: string }> {
  const shop = await db
    .selectFrom('shops')
    .select(['id', 'name'])
    .where('business_id', '=', caller.businessId)
    .where('environment', '=', caller.environment)
    .executeTakeFirst();
  if (!shop) throw new ApiError('SHOP_NOT_FOUND');
  return shop;
}

/** `{id}` is the internal id or the externalId (api.md 4.2 rule 1); the internal id wins a tie. */
export async function resolveProduct(
  db: Executor,
  caller: Caller,
  shopId: string,
  idOrExternalId: string,
  lock = false,
): Promise<ProductRow> {
  let query = db
    .selectFrom('products')
    .selectAll()
    .where('shop_id', '=', shopId)
    .where('deleted_at', 'is', null)
    .where((eb) => eb.or([eb('id', '=', idOrExternalId), eb('external_id', '=', idOrExternalId)]))
    .orderBy(sql`id = ${idOrExternalId}`, 'desc')
    .limit(1);
  if (caller.publicOnly) query = query.where('status', '=', 'ACTIVE');
  if (lock) query = query.forUpdate();
  const row = await query.executeTakeFirst();
  if (!row) {
    // api.md 5 rule 4: the business's product in the other environment is a mismatch. Only the
    // internal id says so: externalIds are the merchant's own names, reused in both environments.
    const where = { column: 'id', value: idOrExternalId, softDeleted: true } as const;
    if (await inOtherEnvironment(db, 'products', where, caller)) throw new ApiError('SANDBOX_MISMATCH');
    throw new ApiError('PRODUCT_NOT_FOUND', `No product with the id or externalId "${idOrExternalId}".`);
  }
  return row;
}

/**
 * What `resolveProduct` finds for several ids or externalIds at once, in one statement, in the
 * order asked (an id wins over another product's externalId, as there); undefined where it finds
 * nothing, for the caller to refuse in its own order (`resolveProduct` says why).
 */
export async function findProducts(
  db: Executor,
  caller: Caller,
  shopId: string,
  idsOrExternalIds: readonly string[],
  /** Lock the rows found, in id order (see `lockProducts` in orders), as they are read. */
  options: { lock?: boolean } = {},
): Promise<(ProductRow | undefined)[]> {
  const names = [...new Set(idsOrExternalIds)];
  if (names.length === 0) return [];
  let query = db
    .selectFrom('products')
    .selectAll()
    .where('shop_id', '=', shopId)
    .where('deleted_at', 'is', null)
    .where((eb) => eb.or([eb('id', 'in', names), eb('external_id', 'in', names)]));
  if (caller.publicOnly) query = query.where('status', '=', 'ACTIVE');
  if (options.lock) query = query.orderBy('id').forUpdate();
  const rows = await query.execute();
  return idsOrExternalIds.map((name) => rows.find((r) => r.id === name) ?? rows.find((r) => r.external_id === name));
}

function serializeColumns(columns: ReturnType<typeof columnsFor>) {
  return {
    ...columns,
    images: JSON.stringify(columns.images),
    variants: JSON.stringify(columns.variants),
    options: JSON.stringify(columns.options),
    preparation_time: columns.preparation_time === null ? null : JSON.stringify(columns.preparation_time),
  };
}

/** A unique clash on the externalId index becomes EXTERNAL_ID_TAKEN. */
async function guardExternalId<T>(work: Promise<T>, externalId: string | null): Promise<T> {
  try {
    return await work;
  } catch (error) {
    const { code, constraint } = error as { code?: string; constraint?: string };
    if (code === '23505' && (constraint === undefined || constraint === 'products_external_id_idx')) {
      throw new ApiError(
        'EXTERNAL_ID_TAKEN',
        `Another product of this shop already uses the externalId "${externalId}".`,
      );
    }
    throw error;
  }
}

/**
 * No choice a customer can make may price the product below zero: the price with the lowest
 * variant adjustment and every negative option together must stay at or above 0.
 */
export function lowestPrice(fields: {
  price: number;
  variants: readonly { priceAdjustment?: number | undefined }[];
  options: readonly { priceAdjustment: number }[];
}): number {
  const lowestVariant = Math.min(0, ...fields.variants.map((v) => v.priceAdjustment ?? 0));
  const discounts = fields.options.reduce((sum, o) => sum + Math.min(0, o.priceAdjustment), 0);
  return fields.price + lowestVariant + discounts;
}

function checkLowestPrice(fields: Pick<ProductFields, 'price' | 'variants' | 'options'>): void {
  const lowest = lowestPrice(fields);
  const lowestVariant = Math.min(0, ...fields.variants.map((v) => v.priceAdjustment ?? 0));
  if (lowest < 0) {
    const field = lowestVariant < 0 ? 'body.variants' : 'body.options';
    throw new ApiError(
      'VALIDATION_ERROR',
      `The price adjustments can take the price to ${lowest} centimes; the lowest price a customer can pick must be at least 0.`,
      [{ field, message: 'price adjustments take the price below 0' }],
    );
  }
}

export async function createProduct(
  trx: Transaction<DB>,
  caller: Caller,
  input: Partial<ProductFields> & { name: string; price: number },
): Promise<ProductRow> {
  const shop = await shopOf(trx, caller);
  const fields = withDefaults(input);
  checkLowestPrice(fields);
  const now = new Date();
  return guardExternalId(
    trx
      .insertInto('products')
      .values({
        id: newId('prod'),
        shop_id: shop.id,
        business_id: caller.businessId,
        environment: caller.environment,
        ...serializeColumns(columnsFor(fields)),
        created_at: now,
        updated_at: now,
        deleted_at: null,
      })
      .returningAll()
      .executeTakeFirstOrThrow(),
    fields.externalId,
  );
}

/**
 * Forgets the uploaded files behind images a product no longer has: their rows go in the same
 * transaction (so they stop being served at commit) and their storage keys are added to
 * `released`, for the caller to delete from storage once committed. Images given by URL have no row.
 */
async function releaseImages(
  trx: Transaction<DB>,
  businessId: string,
  removedIds: string[],
  released: string[],
): Promise<void> {
  if (removedIds.length === 0) return;
  const rows = await trx
    .deleteFrom('media_files')
    .where('business_id', '=', businessId)
    .where('id', 'in', removedIds)
    .returning('storage_key')
    .execute();
  released.push(...rows.map((row) => row.storage_key));
}

/** Writes a new version of a locked product, with the stock events the change causes. */
export async function writeProduct(
  trx: Transaction<DB>,
  current: ProductRow,
  fields: ProductFields,
  released: string[] = [],
  now = new Date(),
): Promise<ProductRow> {
  checkLowestPrice(fields);
  const kept = new Set(fields.images.map((image) => image.id).filter(Boolean));
  await releaseImages(
    trx,
    current.business_id,
    current.images.filter((image) => !kept.has(image.id)).map((image) => image.id),
    released,
  );
  const updated = await guardExternalId(
    trx
      .updateTable('products')
      .set({ ...serializeColumns(columnsFor(fields, current)), updated_at: now })
      .where('id', '=', current.id)
      .returningAll()
      .executeTakeFirstOrThrow(),
    fields.externalId,
  );
  await recordEvents(trx, stockEventsBetween(current, updated, now));
  return updated;
}

/** PUT: a full replace; every field not sent goes back to its default. */
export async function replaceProduct(
  trx: Transaction<DB>,
  caller: Caller,
  id: string,
  input: Partial<ProductFields> & { name: string; price: number },
  released: string[] = [],
): Promise<ProductRow> {
  const shop = await shopOf(trx, caller);
  const current = await resolveProduct(trx, caller, shop.id, id, true);
  return writeProduct(trx, current, withDefaults(input), released);
}

/** PATCH: only the fields sent change; `null` clears a nullable field. */
export async function patchProduct(
  trx: Transaction<DB>,
  caller: Caller,
  id: string,
  patch: Partial<ProductFields>,
  released: string[] = [],
): Promise<ProductRow> {
  const shop = await shopOf(trx, caller);
  const current = await resolveProduct(trx, caller, shop.id, id, true);
  const sent = Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== undefined));
  return writeProduct(trx, current, { ...fieldsOf(current), ...sent }, released);
}

/** Soft delete: gone from every read; its externalId is free again, its uploaded images released. */
export async function deleteProduct(
  trx: Transaction<DB>,
  caller: Caller,
  id: string,
  released: string[] = [],
): Promise<{ deleted: true }> {
  const shop = await shopOf(trx, caller);
  const current = await resolveProduct(trx, caller, shop.id, id, true);
  await releaseImages(
    trx,
    current.business_id,
    current.images.map((image) => image.id),
    released,
  );
  await trx
    .updateTable('products')
    .set({ deleted_at: new Date(), updated_at: new Date() })
    .where('id', '=', current.id)
    .execute();
  return { deleted: true };
}

export async function getProduct(db: Kysely<DB>, caller: Caller, id: string): Promise<ProductRow> {
  const shop = await shopOf(db, caller);
  return resolveProduct(db, caller, shop.id, id);
}

export interface ProductListQuery {
  search?: string | undefined;
  status?: 'ACTIVE' | 'DISABLED' | 'ALL' | undefined;
  sortBy?: 'newest' | 'oldest' | 'price_asc' | 'price_desc' | undefined;
  categoryId?: string | undefined;
  limit: number;
  offset: number;
}

const PRODUCTS: CountedTable = { list: 'products', table: 'products', tiebreak: 'id' };

/**
 * A page of the shop's products with the exact number that match: by creation date from the list
 * counts (counted-list.ts); by price, or searched, or in one category, counted from the rows.
 */
export async function listProducts(
  db: Kysely<DB>,
  caller: Caller,
  query: ProductListQuery,
): Promise<{ items: ProductRow[]; total: number }> {
  const shop = await shopOf(db, caller);
  const status = caller.publicOnly ? 'ACTIVE' : (query.status ?? 'ALL');
  const sortBy = query.sortBy ?? 'newest';
  const impossible = caller.publicOnly && query.status === 'DISABLED';
  if (!query.search && !query.categoryId && !impossible && (sortBy === 'newest' || sortBy === 'oldest')) {
    // Products carry their business and environment; a business has one shop per environment.
    return countedPage<ProductRow>(db, PRODUCTS, {
      businessId: caller.businessId,
      environment: caller.environment,
      statuses: status === 'ALL' ? ['ACTIVE', 'DISABLED'] : [status],
      filterRowsByStatus: status !== 'ALL',
      where: sql<boolean>`t.shop_id = ${shop.id} AND t.deleted_at IS NULL`,
      order: sortBy,
      limit: query.limit,
      offset: query.offset,
    });
  }
  let base = db.selectFrom('products').where('shop_id', '=', shop.id).where('deleted_at', 'is', null);
  if (status !== 'ALL') base = base.where('status', '=', status);
  if (impossible) base = base.where(sql<boolean>`false`);
  if (query.categoryId) base = base.where('category_id', '=', query.categoryId);
  const words = query.search ? searchQuery(query.search) : null;
  if (words) base = base.where(sql<boolean>`search_vector @@ to_tsquery('simple', ${words})`);
  let page = base.selectAll();
  switch (sortBy) {
    case 'newest':
      page = page.orderBy('created_at', 'desc').orderBy('id', 'desc');
      break;
    case 'oldest':
      page = page.orderBy('created_at', 'asc').orderBy('id', 'asc');
      break;
    case 'price_asc':
      page = page.orderBy('price', 'asc').orderBy('id', 'asc');
      break;
    case 'price_desc':
      page = page.orderBy('price', 'desc').orderBy('id', 'desc');
      break;
  }
  const [items, total] = await Promise.all([
    page.limit(query.limit).offset(query.offset).execute(),
    base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { items, total: Number(total.n) };
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
export async function writeStock(trx: Executor, products: readonly ProductRow[]): Promise<void> {
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
  await recordEvents(trx, events);
  return updated;
}

export async function changeInventory(
  trx: Transaction<DB>,
  caller: Caller,
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
  caller: Caller,
  items: (StockChange & { id?: string | undefined; externalId?: string | undefined })[],
): Promise<ProductRow[]> {
  const shop = await shopOf(trx, caller);
  // Every product named is locked first, in id order like an order's products, so a bulk update
  // and an order (or two bulk updates) naming the same products in other orders queue rather
  // than deadlock.
  const keys = items.flatMap((item) => [item.id, item.externalId]).filter((key) => key !== undefined);
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
    if (item.externalId !== undefined && product.external_id !== item.externalId) {
      throw new ApiError('PRODUCT_NOT_FOUND', `No product with the externalId "${item.externalId}".`);
    }
    results.set(product.id, await applyStockChange(trx, results.get(product.id) ?? product, item, field));
  }
  return [...results.values()];
}
