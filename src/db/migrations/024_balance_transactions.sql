-- Money in must come out exactly (issue 33).
--
-- 1. What each refund took back from the platform's accounts, kept beside what the payment
--    credited them, so the next refund returns a share of what is left and never more.
ALTER TABLE payment_intents
  ADD COLUMN provider_returned bigint NOT NULL DEFAULT 0,
  ADD COLUMN tof_returned bigint NOT NULL DEFAULT 0,
  ADD COLUMN tte_returned bigint NOT NULL DEFAULT 0;
UPDATE payment_intents i
SET provider_returned = r.provider_ttc, tof_returned = r.tof, tte_returned = r.tte
FROM (SELECT intent_id, sum(provider_ttc) AS provider_ttc, sum(tof) AS tof, sum(tte) AS tte FROM refunds GROUP BY 1) r
WHERE r.intent_id = i.id;

-- An order's fee state gains what its charges credited to each platform account and what its
-- returns took back, read from the ledger transactions the order names.
UPDATE orders o SET fees = o.fees || jsonb_build_object(
  'payerTtc', coalesce((o.payment->>'payerFee')::bigint, 0),
  'tof', coalesce(m.tof, 0), 'tte', coalesce(m.tte, 0),
  'tofReturned', coalesce(m.tof_returned, 0), 'tteReturned', coalesce(m.tte_returned, 0))
FROM orders o2
LEFT JOIN LATERAL (
  SELECT
    sum(p.amount) FILTER (WHERE a.kind = 'tof' AND p.amount > 0) AS tof,
    sum(p.amount) FILTER (WHERE a.kind = 'tte' AND p.amount > 0) AS tte,
    -sum(p.amount) FILTER (WHERE a.kind = 'tof' AND p.amount < 0) AS tof_returned,
    -sum(p.amount) FILTER (WHERE a.kind = 'tte' AND p.amount < 0) AS tte_returned
  FROM ledger_postings p JOIN ledger_accounts a ON a.id = p.account_id
  WHERE p.transaction_id IN (
    SELECT o2.payment->>'ledgerTransactionId'
    UNION ALL SELECT adjustment->>'ledgerTransactionId' FROM jsonb_array_elements(coalesce(o2.payment->'adjustments', '[]')) adjustment
    UNION ALL SELECT refund->>'ledgerTransactionId' FROM jsonb_array_elements(o2.refunds) refund)
) m ON true
WHERE o.id = o2.id AND o.fees IS NOT NULL;

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

-- What the merchant accounts already moved, as balance transactions: the gross is what the
-- payer's wallet moved (less the payer fee of a payment), the fee what the merchant did not get.
INSERT INTO balance_transactions (id, business_id, environment, type, amount, fee, net, source_reference,
  source_kind, description, ledger_transaction_id, balance_after, created_at)
SELECT 'txn_' || lpad(to_hex(p.id), 10, '0') || substr(md5(p.transaction_id || p.id::text), 1, 14),
  a.owner_id, a.environment, s.type, s.gross, s.gross - p.amount, p.amount, s.reference, s.kind,
  s.type || ' ' || s.reference, p.transaction_id, NULL, p.created_at
FROM ledger_postings p
JOIN ledger_accounts a ON a.id = p.account_id AND a.kind = 'merchant'
CROSS JOIN LATERAL (
  SELECT -sum(w.amount) AS moved FROM ledger_postings w JOIN ledger_accounts wa ON wa.id = w.account_id
  WHERE w.transaction_id = p.transaction_id AND wa.kind = 'wallet'
) wallet
LEFT JOIN payment_intents paid ON p.kind = 'payment' AND paid.reference_number = p.reference
LEFT JOIN refunds r ON p.kind = 'refund' AND r.ledger_transaction_id = p.transaction_id
LEFT JOIN payment_intents refunded ON refunded.id = r.intent_id
LEFT JOIN LATERAL (
  SELECT o.reference_number, o.payment FROM orders o
  WHERE o.business_id = a.owner_id AND o.environment = a.environment AND (
    o.reference_number = p.reference
    OR o.payment->'adjustments' @> jsonb_build_array(jsonb_build_object('ledgerTransactionId', p.transaction_id))
    OR o.refunds @> jsonb_build_array(jsonb_build_object('ledgerTransactionId', p.transaction_id)))
  LIMIT 1
) o ON paid.id IS NULL AND refunded.id IS NULL
CROSS JOIN LATERAL (
  SELECT
    CASE
      WHEN paid.id IS NOT NULL THEN 'payment'
      WHEN refunded.id IS NOT NULL THEN 'refund'
      WHEN o.reference_number = p.reference THEN 'order_payment'
      WHEN p.reference LIKE 'OA-%' THEN 'order_adjustment'
      ELSE 'order_refund'
    END AS type,
    coalesce(paid.reference_number, refunded.reference_number, o.reference_number, p.reference) AS reference,
    CASE WHEN paid.id IS NULL AND refunded.id IS NULL THEN 'order' ELSE 'payment_intent' END AS kind,
    coalesce(wallet.moved, p.amount)
      + CASE
          WHEN paid.id IS NOT NULL THEN -paid.payer_ttc
          WHEN o.reference_number = p.reference THEN -coalesce((o.payment->>'payerFee')::bigint, 0)
          ELSE 0
        END AS gross
) s;

-- 4. The balance transactions' scope, given to the secret keys that exist (new keys get every scope).
UPDATE api_keys SET scopes = array_append(scopes, 'balance:read')
WHERE kind = 'secret' AND NOT ('balance:read' = ANY (scopes));
