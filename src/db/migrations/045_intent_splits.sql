-- Splits (issue 52, decision 080): an intent's payment shared between the business's sellers.
-- `split` is what the merchant asked for at create time ({ fee_bearer, lines: [{ seller, amount }
-- or { seller, bps }] }); `split_shares` is what the payment gave each seller ([{ seller, gross,
-- fee, net }]), written by the statement that pays the intent. Refunds read the shares back: what
-- each refund takes from a seller is a function of the shares and the running refunded total, so
-- nothing more is stored per refund.
ALTER TABLE payment_intents ADD COLUMN split jsonb;
ALTER TABLE payment_intents ADD COLUMN split_shares jsonb;

-- A refund is never refused because a seller already withdrew its share: a seller's account may
-- go below zero (it is recovered from its next splits). `funding` and `seller` are the only kinds
-- allowed below zero; `ledger check` says the same.
ALTER TABLE ledger_accounts DROP CONSTRAINT ledger_accounts_check;
ALTER TABLE ledger_accounts ADD CONSTRAINT ledger_accounts_check CHECK (kind IN ('funding', 'seller') OR balance >= 0);
