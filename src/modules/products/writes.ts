import type { Transaction } from 'kysely';
import type { DB } from '../../db/schema.js';
import { ApiError } from '../../http/errors.js';
import { newId } from '../../lib/ids.js';
import { unitOfWork } from '../events/unit-of-work.js';
import { columnsFor, fieldsOf, withDefaults, type ProductFields, type ProductRow } from './model.js';
import { resolveProduct, shopOf, type CatalogCaller } from './reads.js';
import { checkProductSeller } from './sellers.js';
import { stockEventsBetween } from './stock.js';

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
  caller: CatalogCaller,
  input: Partial<ProductFields> & { name: string; price: number },
): Promise<ProductRow> {
  const shop = await shopOf(trx, caller);
  const fields = withDefaults(input);
  checkLowestPrice(fields);
  if (fields.seller !== null) await checkProductSeller(trx, caller, fields.seller, 'body.seller');
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
  // Only a seller newly given is checked: a product keeps the seller it has, even disabled since.
  if (fields.seller !== null && fields.seller !== current.seller_id) {
    await checkProductSeller(
      trx,
      { businessId: current.business_id, environment: current.environment },
      fields.seller,
      'body.seller',
    );
  }
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
  await unitOfWork()
    .events(stockEventsBetween(current, updated, now))
    .run(trx);
  return updated;
}

/** PUT: a full replace; every field not sent goes back to its default. */
export async function replaceProduct(
  trx: Transaction<DB>,
  caller: CatalogCaller,
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
  caller: CatalogCaller,
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
  caller: CatalogCaller,
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
