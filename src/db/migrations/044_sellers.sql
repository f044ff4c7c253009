-- Sellers (issue 52, decision 079): the people or shops a marketplace business sells for, each
-- with its own balance in the ledger under the business. Payments are not split yet: this is the
-- seller itself, its account and its scopes.

CREATE TABLE sellers (
  -- 'SL-' and 16 digits, like the PR- and PL- ids.
  id             text PRIMARY KEY,
  business_id    text NOT NULL REFERENCES businesses(id),
  environment    text NOT NULL CHECK (environment IN ('test', 'live')),
  name           text NOT NULL,
  -- E.164: where the seller's payouts go.
  phone          text NOT NULL,
  -- What the business keeps of the seller's share of a payment, in basis points.
  commission_bps integer NOT NULL DEFAULT 0 CHECK (commission_bps BETWEEN 0 AND 10000),
  status         text NOT NULL DEFAULT 'ACTIVE' CHECK (status IN ('ACTIVE', 'DISABLED')),
  metadata       jsonb NOT NULL DEFAULT '{}',
  created_at     timestamptz NOT NULL,
  updated_at     timestamptz NOT NULL
);

CREATE INDEX sellers_list_idx ON sellers (business_id, environment, created_at DESC, id DESC);

-- Each seller's balance is a ledger account of its own (kind `seller`, owned by the seller's id,
-- in the seller's environment), made by the statement that inserts the seller, as a wallet's and
-- a business's are (migration 008): a split never creates or looks up an account on its own.
ALTER TABLE ledger_accounts DROP CONSTRAINT ledger_accounts_kind_check;
ALTER TABLE ledger_accounts ADD CONSTRAINT ledger_accounts_kind_check
  CHECK (kind IN ('wallet', 'merchant', 'revenue', 'tof', 'tte', 'funding', 'payouts', 'seller'));

CREATE FUNCTION ledger_account_for_seller() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO ledger_accounts (id, environment, kind, owner_id)
  VALUES (ledger_account_id(), NEW.environment, 'seller', NEW.id);
  RETURN NEW;
END $$;
CREATE TRIGGER sellers_ledger_account AFTER INSERT ON sellers
  FOR EACH ROW EXECUTE FUNCTION ledger_account_for_seller();

-- The sellers' scopes, given to the secret keys that exist (new keys get every scope; a
-- publishable key reaches no seller route, which all take a secret key).
UPDATE api_keys SET scopes = array_cat(scopes, ARRAY['sellers:read', 'sellers:write'])
WHERE kind = 'secret' AND NOT ('sellers:read' = ANY (scopes));
