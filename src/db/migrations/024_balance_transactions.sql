-- Money in must come out exactly (issue 33).
--
-- 1. What each refund took back from the platform's accounts, kept beside what the payment
--    credited them, so the next refund returns a share of what is left and never more.
ALTER TABLE payment_intents
  ADD COLUMN provider_returned bigint NOT NULL DEFAULT 0,
  ADD COLUMN tof_returned bigint NOT NULL DEFAULT 0,
  ADD COLUMN tte_returned bigint NOT NULL DEFAULT 0;

-- 2. The revenue model of a business: COMMISSION (a rate on the amount) or MARGIN (a rate on
--    price less cost basis, for products that have one).
ALTER TABLE fee_plans
  ADD COLUMN revenue_model text NOT NULL DEFAULT 'COMMISSION' CHECK (revenue_model IN ('COMMISSION', 'MARGIN')),
  ADD COLUMN margin_bps integer NOT NULL DEFAULT 1000 CHECK (margin_bps BETWEEN 0 AND 10000);

-- 3. Balance transactions: one per movement of a merchant's account, written by the statement
--    that posts it. `net` is that movement; `amount` the gross it came from and `fee` what the
--    platform kept of it (amount - fee = net). `balance_after` is set when the worker folds the
--    movement into the account's row, in the order it folds them: exact from then on.
CREATE TABLE balance_transactions (
  id                     text PRIMARY KEY,
  business_id            text NOT NULL,
  environment            text NOT NULL CHECK (environment IN ('test', 'live')),
  type                   text NOT NULL,
  amount                 bigint NOT NULL,
  fee                    bigint NOT NULL,
  net                    bigint NOT NULL,
  source_reference       text NOT NULL,
  source_kind            text NOT NULL CHECK (source_kind IN ('payment_intent', 'order')),
  description            text NOT NULL,
  ledger_transaction_id  text NOT NULL,
  balance_after          bigint,
  created_at             timestamptz NOT NULL,
  CHECK (amount - fee = net)
);
CREATE INDEX balance_transactions_list_idx
  ON balance_transactions (business_id, environment, created_at DESC, id DESC);
CREATE INDEX balance_transactions_type_idx
  ON balance_transactions (business_id, environment, type, created_at DESC, id DESC);
CREATE INDEX balance_transactions_source_idx
  ON balance_transactions (business_id, environment, source_reference, created_at DESC, id DESC);

ALTER TABLE ledger_pending_movements ADD COLUMN balance_transaction_id text;

-- Counted like the other big lists (018), the type standing for the status.
CREATE FUNCTION count_balance_transactions() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO list_counts (list, business_id, environment, day, status, slot, n)
  SELECT 'balance', business_id, environment, (created_at AT TIME ZONE 'UTC')::date, type, pg_backend_pid(), count(*)
  FROM new_rows GROUP BY 2, 3, 4, 5
  ON CONFLICT (list, business_id, environment, day, status, slot) DO UPDATE SET n = list_counts.n + excluded.n;
  RETURN NULL;
END $$;
CREATE TRIGGER balance_transactions_counted_insert AFTER INSERT ON balance_transactions
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION count_balance_transactions();

-- 4. The balance transactions' scope, given to the secret keys that exist (new keys get every scope).
UPDATE api_keys SET scopes = array_append(scopes, 'balance:read')
WHERE kind = 'secret' AND NOT ('balance:read' = ANY (scopes));
