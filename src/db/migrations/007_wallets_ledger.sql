-- Customer wallets and the double-entry ledger every movement of money goes through.

CREATE TABLE wallets (
  id                   text PRIMARY KEY,
  environment          text NOT NULL CHECK (environment IN ('test', 'live')),
  phone                text NOT NULL,
  pin_hash             text NOT NULL,
  -- 'locked' by an operator; wrong PINs lock for a while through locked_until instead.
  status               text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'locked')),
  failed_pin_attempts  integer NOT NULL DEFAULT 0,
  locked_until         timestamptz,
  created_at           timestamptz NOT NULL DEFAULT now(),
  UNIQUE (environment, phone)
);

-- One account per wallet, per merchant business and environment, and one per platform account
-- (revenue, the two taxes, and `funding`: money that entered from outside, the only account
-- allowed below zero).
CREATE TABLE ledger_accounts (
  id           text PRIMARY KEY,
  environment  text NOT NULL CHECK (environment IN ('test', 'live')),
  kind         text NOT NULL CHECK (kind IN ('wallet', 'merchant', 'revenue', 'tof', 'tte', 'funding')),
  owner_id     text NOT NULL DEFAULT '',
  balance      bigint NOT NULL DEFAULT 0,
  created_at   timestamptz NOT NULL DEFAULT now(),
  UNIQUE (environment, kind, owner_id),
  CHECK (kind = 'funding' OR balance >= 0)
);

-- Postings are written once and never changed; each ledger transaction sums to zero.
CREATE TABLE ledger_postings (
  id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  transaction_id  text NOT NULL,
  account_id      text NOT NULL REFERENCES ledger_accounts(id),
  amount          bigint NOT NULL CHECK (amount <> 0),
  kind            text NOT NULL CHECK (kind IN ('payment', 'refund', 'credit')),
  reference       text NOT NULL,
  created_at      timestamptz NOT NULL
);
CREATE INDEX ledger_postings_account_idx ON ledger_postings (account_id, id);
CREATE INDEX ledger_postings_transaction_idx ON ledger_postings (transaction_id);

CREATE FUNCTION ledger_postings_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'ledger postings are immutable';
END $$;
CREATE TRIGGER ledger_postings_no_change BEFORE UPDATE OR DELETE ON ledger_postings
  FOR EACH ROW EXECUTE FUNCTION ledger_postings_immutable();

ALTER TABLE refunds ADD COLUMN ledger_transaction_id text;
