-- The data of migration 024, for what was paid before it: what refunds took back of each
-- payment's fees, and the balance transactions of every merchant movement. Each statement can run
-- again on the same data and give the same result (the balance transactions once emptied), which
-- test/payments/migration-backfill.test.ts does to compare it with what the code writes.

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

-- What the merchant accounts already moved, as balance transactions: the gross is what the
-- payer's wallet moved (less the payer fee of a payment), the fee what the merchant did not get,
-- the balance after it the account's postings up to it (they are older than any fold to come).
INSERT INTO balance_transactions (id, business_id, environment, type, amount, fee, net, source_reference,
  source_kind, description, ledger_transaction_id, balance_after, created_at)
-- Every ledger transaction an order names, found once (one hash join, not a search per posting).
WITH order_transactions AS (
  SELECT o.reference_number, o.payment, o.payment->>'ledgerTransactionId' AS transaction_id
  FROM orders o WHERE o.payment IS NOT NULL
  UNION ALL
  SELECT o.reference_number, o.payment, adjustment->>'ledgerTransactionId'
  FROM orders o, jsonb_array_elements(coalesce(o.payment->'adjustments', '[]')) adjustment
  UNION ALL
  SELECT o.reference_number, o.payment, refund->>'ledgerTransactionId'
  FROM orders o, jsonb_array_elements(o.refunds) refund WHERE refund->>'ledgerTransactionId' IS NOT NULL
)
SELECT 'txn_' || lpad(to_hex(p.id), 10, '0') || substr(md5(p.transaction_id || p.id::text), 1, 14),
  a.owner_id, a.environment, s.type, s.gross, s.gross - p.amount, p.amount, s.reference, s.kind,
  CASE s.type
    WHEN 'payment' THEN 'Payment ' || s.reference || CASE WHEN paid.label <> '' THEN ': ' || paid.label ELSE '' END
    WHEN 'refund' THEN 'Refund ' || p.reference || ' of ' || s.reference
    WHEN 'order_payment' THEN 'Order ' || s.reference
    WHEN 'order_refund' THEN 'Refund ' || p.reference || ' of order ' || s.reference
    ELSE 'Modification ' || p.reference || ' of order ' || s.reference
  END,
  p.transaction_id, sum(p.amount) OVER (PARTITION BY p.account_id ORDER BY p.id), p.created_at
FROM ledger_postings p
JOIN ledger_accounts a ON a.id = p.account_id AND a.kind = 'merchant'
CROSS JOIN LATERAL (
  SELECT -sum(w.amount) AS moved FROM ledger_postings w JOIN ledger_accounts wa ON wa.id = w.account_id
  WHERE w.transaction_id = p.transaction_id AND wa.kind = 'wallet'
) wallet
LEFT JOIN payment_intents paid ON p.kind = 'payment' AND paid.reference_number = p.reference
LEFT JOIN refunds r ON p.kind = 'refund' AND r.ledger_transaction_id = p.transaction_id
LEFT JOIN payment_intents refunded ON refunded.id = r.intent_id
LEFT JOIN order_transactions o ON paid.id IS NULL AND refunded.id IS NULL AND o.transaction_id = p.transaction_id
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
