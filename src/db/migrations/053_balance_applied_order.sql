-- Balance transactions in the order the balance took them (issue 54 item 2, decision 086).
--
-- `balance_after` is written by the fold (ledger.ts `foldPendingMovements`) in the order it
-- applies an account's movements. The lists ordered by created_at then id, which is not that
-- order: the payouts of one batch share their created_at, and a transaction that commits later
-- is folded after one that committed sooner. `applied_order` is that order: a number from one
-- sequence, taken when the row is written (so a row not yet folded has one) and taken again by the
-- fold, in the order it applies the account's movements. Folds of one account never overlap (the
-- account row is locked), so within an account the numbers follow the balance_after chain.
--
-- The file can run again (test/payments/applied-order-backfill.test.ts does, over rows it
-- disordered): it numbers every row again, as it did the first time.
CREATE SEQUENCE IF NOT EXISTS balance_transactions_applied_order_seq;
ALTER TABLE balance_transactions ADD COLUMN IF NOT EXISTS applied_order bigint;

-- The rows that exist, in the order the fold took them: the order of their account's posting
-- (the pending movements it folded were written in that order, in the same statement), the rows
-- never folded after the others.
UPDATE balance_transactions b SET applied_order = o.n
FROM (
  SELECT b2.id, row_number() OVER (
    ORDER BY b2.balance_after IS NULL, p.id NULLS LAST, b2.created_at, b2.id) AS n
  FROM balance_transactions b2
  LEFT JOIN LATERAL (
    SELECT min(lp.id) AS id FROM ledger_postings lp JOIN ledger_accounts a ON a.id = lp.account_id
    WHERE lp.transaction_id = b2.ledger_transaction_id AND a.environment = b2.environment
      AND a.kind = CASE WHEN b2.seller_id IS NULL THEN 'merchant' ELSE 'seller' END
      AND a.owner_id = coalesce(b2.seller_id, b2.business_id)
  ) p ON true
) o
WHERE o.id = b.id;

-- Where that order does not chain (a later posting folded first: it committed sooner), the
-- account's rows are walked along the chain itself: from 0, the next row is the first whose
-- balance before it (balance_after - net) is the balance reached; failing one, the first left.
-- The account keeps its own set of numbers, handed out again in that order. Only a break between
-- two of its rows sends an account there: one whose first movement was not a balance transaction
-- (its first row opens above 0) chains already. Each step is an index probe, the first row left
-- found from the last one found (`low`): a walk of n rows costs n log n, not n² (a broken chain of
-- 100,000 rows at deploy; test/payments/applied-order-backfill.test.ts times one).
DO $$
DECLARE
  account record;
  reached bigint;
  low bigint;
  slot bigint;
  chosen record;
BEGIN
  FOR account IN
    SELECT DISTINCT business_id, environment, seller_id FROM (
      SELECT business_id, environment, seller_id, balance_after, net,
        lag(balance_after) OVER (PARTITION BY business_id, environment, seller_id ORDER BY applied_order) AS before
      FROM balance_transactions WHERE balance_after IS NOT NULL
    ) chained
    WHERE before <> balance_after - net
  LOOP
    CREATE TEMP TABLE walk AS
      SELECT id, balance_after - net AS opened, balance_after, applied_order AS old_slot,
        NULL::bigint AS new_slot
      FROM balance_transactions
      WHERE business_id = account.business_id AND environment = account.environment
        AND seller_id IS NOT DISTINCT FROM account.seller_id AND balance_after IS NOT NULL;
    CREATE UNIQUE INDEX walk_slot_idx ON walk (old_slot);
    CREATE INDEX walk_opened_idx ON walk (opened, old_slot) WHERE new_slot IS NULL;
    ANALYZE walk;
    reached := 0;
    low := (SELECT min(old_slot) FROM walk);
    FOR slot IN SELECT old_slot FROM walk ORDER BY old_slot LOOP
      SELECT old_slot, balance_after INTO chosen FROM walk
      WHERE new_slot IS NULL AND opened = reached ORDER BY old_slot LIMIT 1;
      IF NOT FOUND THEN
        -- Every row below `low` is taken: the first left is at or above it.
        SELECT old_slot, balance_after INTO chosen FROM walk
        WHERE new_slot IS NULL AND old_slot >= low ORDER BY old_slot LIMIT 1;
        low := chosen.old_slot;
      END IF;
      UPDATE walk SET new_slot = slot WHERE old_slot = chosen.old_slot;
      reached := chosen.balance_after;
    END LOOP;
    UPDATE balance_transactions b SET applied_order = walk.new_slot FROM walk WHERE walk.id = b.id;
    DROP TABLE walk;
  END LOOP;
END $$;

SELECT setval('balance_transactions_applied_order_seq', coalesce((SELECT max(applied_order) FROM balance_transactions), 0) + 1, false);
ALTER TABLE balance_transactions
  ALTER COLUMN applied_order SET DEFAULT nextval('balance_transactions_applied_order_seq'),
  ALTER COLUMN applied_order SET NOT NULL;
ALTER SEQUENCE balance_transactions_applied_order_seq OWNED BY balance_transactions.applied_order;

-- Every list, export and statement reads an owner's rows in that order.
CREATE INDEX IF NOT EXISTS balance_transactions_applied_idx
  ON balance_transactions (business_id, environment, applied_order) WHERE seller_id IS NULL;
CREATE INDEX IF NOT EXISTS balance_transactions_seller_applied_idx
  ON balance_transactions (seller_id, applied_order) WHERE seller_id IS NOT NULL;
