-- Orders keep what was bought as it was at order time (items are a snapshot, not references to
-- the product's current state), with their history and refunds.
CREATE TABLE orders (
  id                     bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  reference_number       text NOT NULL UNIQUE,
  shop_id                text NOT NULL REFERENCES shops(id),
  business_id            text NOT NULL REFERENCES businesses(id),
  environment            text NOT NULL CHECK (environment IN ('test', 'live')),
  status                 text NOT NULL
                         CHECK (status IN ('NEW', 'PREPARING', 'READY', 'PICKED_UP', 'DELIVERED', 'CANCELLED', 'REFUNDED')),
  items                  jsonb NOT NULL,
  total_amount           bigint NOT NULL CHECK (total_amount >= 0),
  customer_name          text NOT NULL,
  customer_phone         text NOT NULL,
  paid                   boolean NOT NULL,
  total_amount_refunded  bigint NOT NULL DEFAULT 0,
  refunds                jsonb NOT NULL DEFAULT '[]',
  cancellation_reason    text,
  history                jsonb NOT NULL,
  proposed_modification  jsonb,
  created_at             timestamptz NOT NULL,
  updated_at             timestamptz NOT NULL,
  CHECK (total_amount_refunded >= 0 AND total_amount_refunded <= total_amount)
);
CREATE INDEX orders_list_idx ON orders (business_id, environment, created_at DESC, reference_number DESC);
