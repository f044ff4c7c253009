import type { Selectable } from 'kysely';
import type { PreparationTime, ProductsTable, StoredImage, StoredOption, StoredVariant } from '../../db/schema.js';
import { ApiError, invalid } from '../../http/errors.js';
import { newId } from '../../lib/ids.js';

export type ProductRow = Selectable<ProductsTable>;

/** Lowercase without accents: `Crème Brûlée` → `creme brulee`. Names and queries fold alike. */
export function fold(text: string): string {
  return text.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase();
}

/** The words of a search, each matched as a word prefix of the name (`crem` finds `Crème`). */
export function searchQuery(search: string): string | null {
  const words = fold(search).match(/[\p{L}\p{N}]+/gu) ?? [];
  return words.length === 0 ? null : words.map((word) => `${word}:*`).join(' & ');
}

export interface ImageInput {
  id?: string | undefined;
  url: string;
  sortOrder?: number | undefined;
}
export interface VariantInput {
  _id?: string | undefined;
  type: string;
  label: string;
  value?: string | null | undefined;
  priceAdjustment?: number | undefined;
  quantity?: number | null | undefined;
}
export interface OptionInput {
  _id?: string | undefined;
  name: string;
  priceAdjustment: number;
}

function checkUrl(field: string, value: string): void {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalid(field, 'must be an absolute http(s) URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw invalid(field, 'must be an absolute http(s) URL');
}

export function buildImages(input: ImageInput[], existing: StoredImage[]): StoredImage[] {
  return input.map((image, index) => {
    checkUrl(`body.images.${index}.url`, image.url);
    if (image.id !== undefined && !existing.some((e) => e.id === image.id)) {
      throw invalid(`body.images.${index}.id`, 'is not an image of this product');
    }
    return { id: image.id ?? newId('img'), url: image.url, sortOrder: image.sortOrder ?? index };
  });
}

/**
 * Variant ids stay stable: an item naming an `_id` keeps that variant; an item without one takes
 * the id of the existing variant with the same type and label, if any; other variants are new.
 * Existing variants missing from the list are removed.
 */
export function buildVariants(input: VariantInput[], existing: StoredVariant[]): StoredVariant[] {
  const used = new Set<string>();
  return input.map((variant, index) => {
    let id = variant._id;
    if (id !== undefined) {
      if (!existing.some((e) => e._id === id)) {
        throw new ApiError('VARIANT_NOT_FOUND', `body.variants.${index}._id ${id} is not a variant of this product.`);
      }
      if (used.has(id)) throw invalid(`body.variants.${index}._id`, 'appears twice');
    } else {
      id =
        existing.find((e) => !used.has(e._id) && e.type === variant.type && e.label === variant.label)?._id ??
        newId('var');
    }
    used.add(id);
    return {
      _id: id,
      type: variant.type,
      label: variant.label,
      value: variant.value ?? null,
      priceAdjustment: variant.priceAdjustment ?? 0,
      quantity: variant.quantity ?? null,
    };
  });
}

export function buildOptions(input: OptionInput[], existing: StoredOption[]): StoredOption[] {
  const used = new Set<string>();
  return input.map((option, index) => {
    let id = option._id;
    if (id !== undefined) {
      if (!existing.some((e) => e._id === id))
        throw invalid(`body.options.${index}._id`, 'is not an option of this product');
      if (used.has(id)) throw invalid(`body.options.${index}._id`, 'appears twice');
    } else {
      id = existing.find((e) => !used.has(e._id) && e.name === option.name)?._id ?? newId('opt');
    }
    used.add(id);
    return { _id: id, name: option.name, priceAdjustment: option.priceAdjustment };
  });
}

/**
 * An externalId as stored and looked up: NFC, so "THÉ-1" typed with a composed É or with E and a
 * combining accent is one name (decisions "Contract gaps closed").
 */
export function normaliseExternalId(externalId: string): string {
  return externalId.normalize('NFC');
}

/** The full input of a create or PUT; PATCH is merged into this shape first. */
export interface ProductFields {
  name: string;
  price: number;
  description: string | null;
  externalId: string | null;
  categoryId: string | null;
  quantity: number | null;
  status: 'ACTIVE' | 'DISABLED';
  isFlexiblePrice: boolean;
  costBasis: number | null;
  lowStockThreshold: number;
  images: ImageInput[];
  variants: VariantInput[];
  options: OptionInput[];
  preparationTime: PreparationTime | null;
  /** The seller the product belongs to (decision 081); null: the business's own. */
  seller: string | null;
}

/** Defaults for every field a create or PUT leaves out (decisions: PUT resets them). */
export function withDefaults(input: Partial<ProductFields> & { name: string; price: number }): ProductFields {
  return {
    name: input.name,
    price: input.price,
    description: input.description ?? null,
    externalId: input.externalId ?? null,
    categoryId: input.categoryId ?? null,
    quantity: input.quantity ?? null,
    status: input.status ?? 'DISABLED',
    isFlexiblePrice: input.isFlexiblePrice ?? false,
    costBasis: input.costBasis ?? null,
    lowStockThreshold: input.lowStockThreshold ?? 5,
    images: input.images ?? [],
    variants: input.variants ?? [],
    options: input.options ?? [],
    preparationTime: input.preparationTime ?? null,
    seller: input.seller ?? null,
  };
}

/** The editable fields of a stored product, in input shape (ids included, so they stay). */
export function fieldsOf(row: ProductRow): ProductFields {
  return {
    name: row.name,
    price: row.price,
    description: row.description,
    externalId: row.external_id,
    categoryId: row.category_id,
    quantity: row.quantity,
    status: row.status,
    isFlexiblePrice: row.is_flexible_price,
    costBasis: row.cost_basis,
    lowStockThreshold: row.low_stock_threshold,
    images: row.images,
    variants: row.variants,
    options: row.options,
    preparationTime: row.preparation_time,
    seller: row.seller_id,
  };
}

/** Column values for the fields, with stable ids against the product's current version. */
export function columnsFor(fields: ProductFields, existing?: ProductRow) {
  return {
    name: fields.name,
    search_name: fold(fields.name),
    price: fields.price,
    // An empty text is no text: stored as null, so a CSV round trip (empty cell) changes nothing.
    description: fields.description === '' ? null : fields.description,
    external_id: fields.externalId === null ? null : normaliseExternalId(fields.externalId),
    category_id: fields.categoryId,
    quantity: fields.quantity,
    status: fields.status,
    is_flexible_price: fields.isFlexiblePrice,
    cost_basis: fields.costBasis,
    low_stock_threshold: fields.lowStockThreshold,
    images: buildImages(fields.images, existing?.images ?? []),
    variants: buildVariants(fields.variants, existing?.variants ?? []),
    options: buildOptions(fields.options, existing?.options ?? []),
    preparation_time: fields.preparationTime,
    seller_id: fields.seller,
  };
}

export interface ProductView {
  id: string;
  externalId: string | null;
  shopId: string;
  name: string;
  description: string | null;
  price: number;
  currency: 'MRU';
  costBasis: number | null;
  categoryId: string | null;
  quantity: number | null;
  status: 'ACTIVE' | 'DISABLED';
  isFlexiblePrice: boolean;
  lowStockThreshold: number;
  preparationTime: PreparationTime | null;
  images: StoredImage[];
  variants: StoredVariant[];
  options: StoredOption[];
  seller: string | null;
  sandbox: boolean;
  createdAt: string;
  updatedAt: string;
}

/** `publicView`: for publishable keys (browsers), which do not see the cost basis. */
export function productView(row: ProductRow, publicView = false): ProductView {
  return {
    id: row.id,
    externalId: row.external_id,
    shopId: row.shop_id,
    name: row.name,
    description: row.description,
    price: row.price,
    currency: 'MRU',
    costBasis: publicView ? null : row.cost_basis,
    categoryId: row.category_id,
    quantity: row.quantity,
    status: row.status,
    isFlexiblePrice: row.is_flexible_price,
    lowStockThreshold: row.low_stock_threshold,
    preparationTime: row.preparation_time,
    images: [...row.images].sort((a, b) => a.sortOrder - b.sortOrder),
    variants: row.variants,
    options: row.options,
    // Like the cost basis, which seller sells what is the business's own knowledge, not a browser's.
    seller: publicView ? null : row.seller_id,
    sandbox: row.environment === 'test',
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}
