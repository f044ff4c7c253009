-- Orders split between sellers (issue 52 item 2, decision 081). A product may belong to one of
-- its business's sellers; an order's lines of such products settle to their sellers, less each
-- seller's commission, in the order's one payment. `split_shares` is what that payment gave each
-- seller ([{ seller, gross, fee, net }], as payment_intents.split_shares, migration 045), written
-- by the statement that pays the order; returns read it back (nothing is stored per return).
ALTER TABLE products ADD COLUMN seller_id text REFERENCES sellers(id);
CREATE INDEX products_seller_idx ON products (seller_id) WHERE seller_id IS NOT NULL;
ALTER TABLE orders ADD COLUMN split_shares jsonb;
