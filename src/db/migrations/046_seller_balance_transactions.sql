-- Sellers' money (issue 52 item 4): a seller's balance transactions. Each movement of a seller's
-- account (a split's share, a refund's reversal, a payout, a failed payout's return) writes a
-- balance transaction of the seller, in the table of the merchant's, under the seller's business,
-- naming the seller. The business's own list, counts, exports, statements and payouts' settling
-- read only the rows without a seller.
ALTER TABLE balance_transactions ADD COLUMN seller_id text REFERENCES sellers(id);

CREATE INDEX balance_transactions_seller_idx
  ON balance_transactions (seller_id, created_at DESC, id DESC) WHERE seller_id IS NOT NULL;

-- The business's list counts (024) count the business's own rows only: a seller's list is counted
-- from its index.
CREATE OR REPLACE FUNCTION count_balance_transactions() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO list_counts (list, business_id, environment, day, status, slot, n)
  SELECT 'balance', business_id, environment, (created_at AT TIME ZONE 'UTC')::date, type, pg_backend_pid(), count(*)
  FROM new_rows WHERE seller_id IS NULL GROUP BY 2, 3, 4, 5
  ON CONFLICT (list, business_id, environment, day, status, slot) DO UPDATE SET n = list_counts.n + excluded.n;
  RETURN NULL;
END $$;

-- What sellers' accounts already moved (splits and their refunds, migration 045), as balance
-- transactions: the type, source and description of the merchant's transaction of the same ledger
-- transaction, the seller's net as its amount (fee 0), the balance after it the account's
-- postings up to it (older than any fold to come).
INSERT INTO balance_transactions (id, business_id, environment, type, amount, fee, net, source_reference,
  source_kind, description, ledger_transaction_id, balance_after, created_at, seller_id)
SELECT 'txn_' || lpad(to_hex(p.id), 10, '0') || substr(md5(p.transaction_id || p.id::text || 'seller'), 1, 14),
  m.business_id, a.environment, m.type, p.amount, 0, p.amount, m.source_reference, m.source_kind, m.description,
  p.transaction_id, sum(p.amount) OVER (PARTITION BY p.account_id ORDER BY p.id), p.created_at, a.owner_id
FROM ledger_postings p
JOIN ledger_accounts a ON a.id = p.account_id AND a.kind = 'seller'
JOIN balance_transactions m ON m.ledger_transaction_id = p.transaction_id AND m.seller_id IS NULL;

-- A seller's payout (decision 082): paid from the seller's account to the seller's phone. Null for
-- the business's own payouts.
ALTER TABLE payouts ADD COLUMN seller_id text REFERENCES sellers(id);
