-- Orders take real money (issue 11): an order is paid from the customer's wallet through the
-- ledger when it is placed, and every later change (cancel, refund, accepted modification) moves
-- money back or forth through the same ledger.

-- The customer's own link to the order (`/o/{customer_ref}`): unguessable, never the reference
-- number the merchant sees and quotes.
ALTER TABLE orders ADD COLUMN customer_ref text;
UPDATE orders SET customer_ref = replace(gen_random_uuid()::text, '-', '') || replace(gen_random_uuid()::text, '-', '');
ALTER TABLE orders ALTER COLUMN customer_ref SET NOT NULL;
CREATE UNIQUE INDEX orders_customer_ref_idx ON orders (customer_ref);

-- The wallet that paid (refunds go back to it), what was paid for the goods net of modification
-- differences, the payment record shown in the order's JSON, and the fee state the refunds of
-- this order return in proportion (never shown).
ALTER TABLE orders ADD COLUMN payer_wallet_id text REFERENCES wallets(id);
ALTER TABLE orders ADD COLUMN amount_paid bigint NOT NULL DEFAULT 0 CHECK (amount_paid >= 0);
ALTER TABLE orders ADD COLUMN payment jsonb;
ALTER TABLE orders ADD COLUMN fees jsonb;

-- Orders made before this migration never moved money: they were never paid.
UPDATE orders SET paid = false WHERE payment IS NULL;
ALTER TABLE orders ADD CONSTRAINT orders_paid_with_payment CHECK (paid = (payment IS NOT NULL));

-- What can be refunded is what was paid, not the current total.
ALTER TABLE orders DROP CONSTRAINT orders_check;
ALTER TABLE orders ADD CONSTRAINT orders_refunds_within_paid
  CHECK (total_amount_refunded >= 0 AND (payment IS NULL OR total_amount_refunded <= amount_paid));
