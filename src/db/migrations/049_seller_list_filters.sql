-- The seller filters of the intent and payout lists (issue 52, decision 079). An intent's split
-- names its sellers in `split -> 'lines'` ([{ seller, amount } or { seller, bps }]): this index
-- finds the intents whose lines contain { "seller": id }, the list's `@>` condition, without
-- reading the business's every intent.
CREATE INDEX payment_intents_split_sellers_idx
  ON payment_intents USING gin ((split -> 'lines') jsonb_path_ops) WHERE split IS NOT NULL;

-- A seller's payouts, newest first, as `GET /payouts?seller=` reads them.
CREATE INDEX payouts_seller_idx
  ON payouts (seller_id, created_at DESC, reference DESC) WHERE seller_id IS NOT NULL;
