-- The wallet app's history (issue 51): a wallet's payments and the payouts it received, newest
-- first, a page at a time. Without these, each page read every payment and payout of the
-- platform (a sequential scan of each table); with them, a page reads its own rows from the
-- cursor on.
CREATE INDEX payments_payer_wallet_idx ON payments (payer_wallet_id, settled_at DESC, id DESC)
  WHERE status = 'SUCCEEDED';
CREATE INDEX payouts_wallet_idx ON payouts (wallet_id, paid_at DESC, reference DESC) WHERE status = 'PAID';
