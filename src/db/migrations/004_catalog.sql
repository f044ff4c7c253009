-- The shop catalog. Variants, options and images live with their product (they are read and
-- written with it); stock changes lock the product row, so they serialize per product.

CREATE TABLE products (
  id                   text PRIMARY KEY,
  shop_id              text NOT NULL REFERENCES shops(id),
  business_id          text NOT NULL REFERENCES businesses(id),
  environment          text NOT NULL CHECK (environment IN ('test', 'live')),
  external_id          text CHECK (length(external_id) BETWEEN 1 AND 256),
  name                 text NOT NULL,
  -- The name folded to lowercase without accents (done in the application, the same way for the
  -- query), so `creme` finds `Crème`; its word index serves `search`.
  search_name          text NOT NULL,
  search_vector        tsvector GENERATED ALWAYS AS (to_tsvector('simple', search_name)) STORED,
  description          text,
  price                bigint NOT NULL CHECK (price >= 0),
  cost_basis           bigint CHECK (cost_basis >= 0),
  category_id          text,
  quantity             integer CHECK (quantity >= 0),
  status               text NOT NULL CHECK (status IN ('ACTIVE', 'DISABLED')),
  is_flexible_price    boolean NOT NULL DEFAULT false,
  low_stock_threshold  integer NOT NULL DEFAULT 5 CHECK (low_stock_threshold >= 0),
  preparation_time     jsonb,
  images               jsonb NOT NULL DEFAULT '[]',
  variants             jsonb NOT NULL DEFAULT '[]',
  options              jsonb NOT NULL DEFAULT '[]',
  created_at           timestamptz NOT NULL,
  updated_at           timestamptz NOT NULL,
  deleted_at           timestamptz
);
CREATE UNIQUE INDEX products_external_id_idx ON products (shop_id, external_id)
  WHERE deleted_at IS NULL AND external_id IS NOT NULL;
CREATE INDEX products_newest_idx ON products (shop_id, created_at DESC, id DESC) WHERE deleted_at IS NULL;
CREATE INDEX products_price_idx ON products (shop_id, price, id) WHERE deleted_at IS NULL;
CREATE INDEX products_search_idx ON products USING gin (search_vector) WHERE deleted_at IS NULL;

-- Uploaded files; the bytes are in the media storage under `storage_key`.
CREATE TABLE media_files (
  id            text PRIMARY KEY,
  business_id   text NOT NULL REFERENCES businesses(id),
  storage_key   text NOT NULL UNIQUE,
  content_type  text NOT NULL,
  size_bytes    integer NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now()
);
