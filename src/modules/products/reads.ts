import { sql, type Kysely, type Transaction } from 'kysely';
import type { DB } from '../../db/schema.js';
import { countedPage, type CountedTable } from '../../db/counted-list.js';
import type { Executor } from '../../db/transaction.js';
import { inOtherEnvironment } from '../../http/environments.js';
import { ApiError } from '../../http/errors.js';
import { normaliseExternalId, searchQuery, type ProductRow } from './model.js';
import type { Caller } from '../../http/context.js';

export interface CatalogCaller extends Caller {
  /** Publishable keys (browsers) see ACTIVE products only. */
  publicOnly: boolean;
}

export async function shopOf(db: Executor, caller: CatalogCaller): Promise<{ id: string; name: string }> {
  const shop = await db
    .selectFrom('shops')
    .select(['id', 'name'])
    .where('business_id', '=', caller.businessId)
    .where('environment', '=', caller.environment)
    .executeTakeFirst();
  if (!shop) throw new ApiError('SHOP_NOT_FOUND');
  return shop;
}

/**
 * `{id}` is the internal id or the externalId (api.md 4.2 rule 1); the internal id wins a tie.
 * With `lock` the row is locked for the caller's transaction (a lock taken outside one would be
 * released as soon as it is taken).
 */
export function resolveProduct(
  trx: Transaction<DB>,
  caller: CatalogCaller,
  shopId: string,
  idOrExternalId: string,
  lock: true,
): Promise<ProductRow>;
export function resolveProduct(
  db: Executor,
  caller: CatalogCaller,
  shopId: string,
  idOrExternalId: string,
  lock?: false,
): Promise<ProductRow>;
export async function resolveProduct(
  db: Executor,
  caller: CatalogCaller,
  shopId: string,
  idOrExternalId: string,
  lock = false,
): Promise<ProductRow> {
  // Stored externalIds are NFC; the text as given, first, still finds one stored before that rule.
  const externalIds = [...new Set([normaliseExternalId(idOrExternalId), idOrExternalId])];
  let query = db
    .selectFrom('products')
    .selectAll()
    .where('shop_id', '=', shopId)
    .where('deleted_at', 'is', null)
    .where((eb) => eb.or([eb('id', '=', idOrExternalId), eb('external_id', 'in', externalIds)]))
    .orderBy(sql`id = ${idOrExternalId}`, 'desc')
    .orderBy(sql`external_id = ${idOrExternalId}`, 'desc')
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
export function findProducts(
  trx: Transaction<DB>,
  caller: CatalogCaller,
  shopId: string,
  idsOrExternalIds: readonly string[],
  /** Lock the rows found, in id order (see `lockProducts` in stock.ts), as they are read. */
  options: { lock: true },
): Promise<(ProductRow | undefined)[]>;
export function findProducts(
  db: Executor,
  caller: CatalogCaller,
  shopId: string,
  idsOrExternalIds: readonly string[],
  options?: { lock?: false },
): Promise<(ProductRow | undefined)[]>;
export async function findProducts(
  db: Executor,
  caller: CatalogCaller,
  shopId: string,
  idsOrExternalIds: readonly string[],
  options: { lock?: boolean } = {},
): Promise<(ProductRow | undefined)[]> {
  const names = [...new Set(idsOrExternalIds.flatMap((name) => [name, normaliseExternalId(name)]))];
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
  return idsOrExternalIds.map(
    (name) =>
      rows.find((r) => r.id === name) ??
      rows.find((r) => r.external_id === name) ??
      rows.find((r) => r.external_id === normaliseExternalId(name)),
  );
}

export async function getProduct(db: Kysely<DB>, caller: CatalogCaller, id: string): Promise<ProductRow> {
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
  caller: CatalogCaller,
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
