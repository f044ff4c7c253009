-- Money out (issue 35): payouts to wallets, single and in batches, reconciled to the balance
-- transactions they settle.

-- 1. The payout fee, set per business by the operator beside its other fees: a flat part and a
--    rate, both 0 by default.
ALTER TABLE fee_plans
  ADD COLUMN payout_fee_flat bigint NOT NULL DEFAULT 0 CHECK (payout_fee_flat BETWEEN 0 AND 100000000),
  ADD COLUMN payout_fee_bps integer NOT NULL DEFAULT 0 CHECK (payout_fee_bps BETWEEN 0 AND 10000);

-- 2. Money reserved for a payout waits in a platform account of its own until the payout is paid
--    (to the wallet, and its fee to revenue) or fails or is cancelled (back to the merchant).
ALTER TABLE ledger_accounts DROP CONSTRAINT ledger_accounts_kind_check;
ALTER TABLE ledger_accounts ADD CONSTRAINT ledger_accounts_kind_check
  CHECK (kind IN ('wallet', 'merchant', 'revenue', 'tof', 'tte', 'funding', 'payouts'));
INSERT INTO ledger_accounts (id, environment, kind, owner_id)
SELECT ledger_account_id(), env, 'payouts', '' FROM (VALUES ('test'), ('live')) AS e(env)
ON CONFLICT (environment, kind, owner_id) DO NOTHING;

ALTER TABLE ledger_postings DROP CONSTRAINT ledger_postings_kind_check;
ALTER TABLE ledger_postings ADD CONSTRAINT ledger_postings_kind_check
  CHECK (kind IN ('payment', 'refund', 'credit', 'payout'));

-- 3. Balance transactions of payouts, and which payout (or batch) settles each other one: set
--    when a payout is reserved on every transaction not yet settled, cleared when it fails or is
--    cancelled so that the next payout takes them.
ALTER TABLE balance_transactions DROP CONSTRAINT balance_transactions_source_kind_check;
ALTER TABLE balance_transactions ADD CONSTRAINT balance_transactions_source_kind_check
  CHECK (source_kind IN ('payment_intent', 'order', 'payout'));
ALTER TABLE balance_transactions ADD COLUMN settled_by text;
CREATE INDEX balance_transactions_unsettled_idx ON balance_transactions (business_id, environment)
  WHERE settled_by IS NULL AND source_kind <> 'payout';
CREATE INDEX balance_transactions_settled_idx ON balance_transactions (settled_by, created_at DESC, id DESC)
  WHERE settled_by IS NOT NULL;

CREATE TABLE payout_batches (
  id            text PRIMARY KEY,
  business_id   text NOT NULL REFERENCES businesses(id),
  environment   text NOT NULL CHECK (environment IN ('test', 'live')),
  item_count    integer NOT NULL CHECK (item_count BETWEEN 1 AND 1000),
  total_amount  bigint NOT NULL,
  total_fee     bigint NOT NULL,
  created_at    timestamptz NOT NULL
);

CREATE TABLE payouts (
  reference          text PRIMARY KEY,
  business_id        text NOT NULL REFERENCES businesses(id),
  environment        text NOT NULL CHECK (environment IN ('test', 'live')),
  batch_id           text REFERENCES payout_batches(id),
  batch_index        integer,
  amount             bigint NOT NULL CHECK (amount >= 1),
  fee                bigint NOT NULL CHECK (fee >= 0),
  destination_type   text NOT NULL CHECK (destination_type IN ('WALLET')),
  destination_phone  text NOT NULL,
  description        text NOT NULL DEFAULT '',
  metadata           jsonb NOT NULL DEFAULT '{}',
  status             text NOT NULL CHECK (status IN ('PENDING', 'PAID', 'FAILED', 'CANCELLED')),
  failure_code       text,
  failure_message    text,
  wallet_id          text,
  created_at         timestamptz NOT NULL,
  updated_at         timestamptz NOT NULL,
  paid_at            timestamptz,
  failed_at          timestamptz,
  cancelled_at       timestamptz,
  CHECK ((status = 'FAILED') = (failure_code IS NOT NULL)),
  CHECK ((batch_id IS NULL) = (batch_index IS NULL))
);
CREATE INDEX payouts_list_idx ON payouts (business_id, environment, created_at DESC, reference DESC);
CREATE INDEX payouts_status_idx ON payouts (business_id, environment, status, created_at DESC, reference DESC);
-- The worker's queue: oldest pending first.
CREATE INDEX payouts_pending_idx ON payouts (created_at, reference) WHERE status = 'PENDING';
CREATE INDEX payouts_batch_idx ON payouts (batch_id, batch_index) WHERE batch_id IS NOT NULL;

-- 4. The payout scopes, given to the secret keys that exist (new keys get every scope).
UPDATE api_keys SET scopes = array_cat(scopes, ARRAY['payouts:read', 'payouts:write'])
WHERE kind = 'secret' AND NOT ('payouts:read' = ANY (scopes));
