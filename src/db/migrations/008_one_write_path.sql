-- One write path (idempotency claims inside the write's transaction), stored cancel reasons, and
-- a ledger whose shared accounts are never locked by a payment.

-- A claim now lives and dies with its write's transaction: no lock tokens, no stale claims.
DELETE FROM idempotency_keys WHERE state = 'running';
ALTER TABLE idempotency_keys DROP COLUMN lock_token, DROP COLUMN locked_at;

-- Why a CANCELLED intent is cancelled, stored instead of searched for in the events.
ALTER TABLE payment_intents ADD COLUMN cancel_reason text CHECK (cancel_reason IN ('cancel', 'expiry'));
UPDATE payment_intents i
SET cancel_reason = CASE WHEN EXISTS (SELECT 1 FROM events e WHERE e.subject = i.reference_number
                                      AND e.event = 'payment.expired') THEN 'expiry' ELSE 'cancel' END
WHERE status = 'CANCELLED';
ALTER TABLE payment_intents ADD CONSTRAINT payment_intents_cancelled_with_reason
  CHECK ((status = 'CANCELLED') = (cancel_reason IS NOT NULL));

-- Every account exists before its first movement: platform accounts here, a wallet's and a
-- business's with their owner (triggers below), so a payment never creates or looks up one.
CREATE FUNCTION ledger_account_id() RETURNS text LANGUAGE sql AS
  $$ SELECT 'acct_' || replace(gen_random_uuid()::text, '-', '') $$;

INSERT INTO ledger_accounts (id, environment, kind, owner_id)
SELECT ledger_account_id(), env, kind, ''
FROM (VALUES ('revenue'), ('tof'), ('tte'), ('funding')) AS k(kind), (VALUES ('test'), ('live')) AS e(env)
ON CONFLICT (environment, kind, owner_id) DO NOTHING;

INSERT INTO ledger_accounts (id, environment, kind, owner_id)
SELECT ledger_account_id(), env, 'merchant', b.id FROM businesses b, (VALUES ('test'), ('live')) AS e(env)
ON CONFLICT (environment, kind, owner_id) DO NOTHING;

INSERT INTO ledger_accounts (id, environment, kind, owner_id)
SELECT ledger_account_id(), w.environment, 'wallet', w.id FROM wallets w
ON CONFLICT (environment, kind, owner_id) DO NOTHING;

CREATE FUNCTION ledger_accounts_for_owner() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_TABLE_NAME = 'wallets' THEN
    INSERT INTO ledger_accounts (id, environment, kind, owner_id)
    VALUES (ledger_account_id(), NEW.environment, 'wallet', NEW.id);
  ELSE
    INSERT INTO ledger_accounts (id, environment, kind, owner_id)
    VALUES (ledger_account_id(), 'test', 'merchant', NEW.id), (ledger_account_id(), 'live', 'merchant', NEW.id);
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER wallets_ledger_account AFTER INSERT ON wallets
  FOR EACH ROW EXECUTE FUNCTION ledger_accounts_for_owner();
CREATE TRIGGER businesses_ledger_accounts AFTER INSERT ON businesses
  FOR EACH ROW EXECUTE FUNCTION ledger_accounts_for_owner();

-- Movements of shared accounts (a merchant's, the platform's) wait here instead of updating the
-- account row, so payments of different wallets never queue on one row. An account's balance is
-- its row's balance plus its pending movements; the worker folds them into the row.
-- No foreign key to ledger_accounts here or on postings: checking one locks the account row in
-- share mode, which a hot account's writers would then all take (and fight over) again. Accounts
-- are never deleted and `post` resolves every id from ledger_accounts; `ledger check` proves it.
CREATE TABLE ledger_pending_movements (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  account_id  text NOT NULL,
  amount      bigint NOT NULL CHECK (amount <> 0)
);
ALTER TABLE ledger_postings DROP CONSTRAINT ledger_postings_account_id_fkey;
CREATE INDEX ledger_pending_movements_account_idx ON ledger_pending_movements (account_id);

-- The wallet that paid, so a refund credits it without looking it up by phone.
ALTER TABLE payment_intents ADD COLUMN payer_wallet_id text REFERENCES wallets(id);
UPDATE payment_intents i SET payer_wallet_id = w.id
FROM wallets w WHERE w.environment = i.environment AND w.phone = i.payer_phone AND i.payer_phone IS NOT NULL;
