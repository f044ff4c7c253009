import type { ColumnType, Generated } from 'kysely';
import type { CreatedAt, Environment, Json } from './columns.js';

export type ProductStatus = 'ACTIVE' | 'DISABLED';

export interface StoredImage {
  id: string;
  url: string;
  sortOrder: number;
}
export interface StoredVariant {
  _id: string;
  type: string;
  label: string;
  value: string | null;
  priceAdjustment: number;
  quantity: number | null;
}
export interface StoredOption {
  _id: string;
  name: string;
  priceAdjustment: number;
}
export interface PreparationTime {
  value: number;
  unit: 'minutes' | 'hours' | 'days';
}

export interface ProductsTable {
  id: string;
  shop_id: string;
  business_id: string;
  environment: Environment;
  external_id: string | null;
  name: string;
  search_name: string;
  search_vector: ColumnType<string, never, never>;
  description: string | null;
  price: number;
  cost_basis: number | null;
  category_id: string | null;
  quantity: number | null;
  status: ProductStatus;
  is_flexible_price: Generated<boolean>;
  low_stock_threshold: Generated<number>;
  preparation_time: ColumnType<PreparationTime | null, string | null | undefined, string | null>;
  images: Json<StoredImage[]>;
  variants: Json<StoredVariant[]>;
  options: Json<StoredOption[]>;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
  /** The seller the product belongs to (migration 047): its order lines settle to that seller. */
  seller_id: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface MediaFilesTable {
  id: string;
  business_id: string;
  storage_key: string;
  content_type: string;
  size_bytes: number;
  created_at: CreatedAt;
}
