-- One SUCCEEDED payment for every intent and order paid before payments were rows, from what
-- their own columns and their ledger transaction say. Re-runnable: a test wipes the payments and
-- runs this again, and an operator runs it again after a rolling deploy in which processes of the
-- version before went on paying after it ran. The method is WALLET_PIN: which payments were
-- simulated was not recorded. An order's payment is its first charge (its ledger transaction):
-- what a modification charged or returned since is an adjustment of it, not of this row.

INSERT INTO payments (id, business_id, environment, intent_id, method, status, amount, payer_phone,
  payer_wallet_id, commission, settlement, ledger_transaction_id, created_at, settled_at, updated_at)
SELECT 'pay_' || substr(md5(i.reference_number), 1, 24), i.business_id, i.environment, i.id, 'WALLET_PIN',
  'SUCCEEDED', i.amount_paid, i.payer_phone, i.payer_wallet_id,
  jsonb_build_object('provider_ttc', i.provider_ttc, 'payer_ttc', i.payer_ttc, 'tof', i.tof, 'tte', i.tte,
    'total_revenue', i.provider_ttc + i.payer_ttc - i.tof - i.tte),
  coalesce((
    SELECT jsonb_agg(jsonb_build_object('account', a.kind, 'amount', p.amount)
      ORDER BY array_position(ARRAY['merchant', 'revenue', 'tof', 'tte'], a.kind))
    FROM ledger_postings p JOIN ledger_accounts a ON a.id = p.account_id
    WHERE p.transaction_id = t.transaction_id AND a.kind <> 'wallet' AND p.amount <> 0), '[]'::jsonb),
  t.transaction_id, i.paid_at, i.paid_at, i.paid_at
FROM payment_intents i
-- The payment's ledger transaction through its balance transaction (an index lookup per intent,
-- the postings have no index on their reference).
LEFT JOIN LATERAL (
  SELECT b.ledger_transaction_id AS transaction_id FROM balance_transactions b
  WHERE b.business_id = i.business_id AND b.environment = i.environment AND b.source_reference = i.reference_number
    AND b.type = 'payment'
  LIMIT 1
) t ON true
WHERE i.paid_at IS NOT NULL AND i.amount_paid > 0
  AND NOT EXISTS (SELECT 1 FROM payments x WHERE x.intent_id = i.id AND x.status = 'SUCCEEDED');

INSERT INTO payments (id, business_id, environment, order_id, method, status, amount, payer_phone,
  payer_wallet_id, commission, settlement, ledger_transaction_id, created_at, settled_at, updated_at)
SELECT 'pay_' || substr(md5(o.reference_number), 1, 24), o.business_id, o.environment, o.id, 'WALLET_PIN',
  'SUCCEEDED', lines.charged, o.payment ->> 'payerPhone', o.payer_wallet_id,
  jsonb_build_object(
    'provider_ttc', lines.charged - coalesce(lines.merchant, 0),
    'payer_ttc', coalesce((o.payment ->> 'payerFee')::bigint, 0),
    'tof', coalesce(lines.tof, 0), 'tte', coalesce(lines.tte, 0), 'total_revenue', coalesce(lines.revenue, 0)),
  coalesce(lines.settlement, '[]'::jsonb),
  o.payment ->> 'ledgerTransactionId', (o.payment ->> 'paidAt')::timestamptz, (o.payment ->> 'paidAt')::timestamptz,
  (o.payment ->> 'paidAt')::timestamptz
FROM orders o
CROSS JOIN LATERAL (
  SELECT -sum(p.amount) FILTER (WHERE a.kind = 'wallet') - coalesce((o.payment ->> 'payerFee')::bigint, 0) AS charged,
    sum(p.amount) FILTER (WHERE a.kind = 'merchant') AS merchant,
    sum(p.amount) FILTER (WHERE a.kind = 'revenue') AS revenue,
    sum(p.amount) FILTER (WHERE a.kind = 'tof') AS tof,
    sum(p.amount) FILTER (WHERE a.kind = 'tte') AS tte,
    jsonb_agg(jsonb_build_object('account', a.kind, 'amount', p.amount)
      ORDER BY array_position(ARRAY['merchant', 'revenue', 'tof', 'tte'], a.kind))
      FILTER (WHERE a.kind <> 'wallet' AND p.amount <> 0) AS settlement
  FROM ledger_postings p JOIN ledger_accounts a ON a.id = p.account_id
  WHERE p.transaction_id = o.payment ->> 'ledgerTransactionId'
) lines
WHERE o.paid AND o.payment IS NOT NULL AND lines.charged > 0
  AND NOT EXISTS (SELECT 1 FROM payments x WHERE x.order_id = o.id AND x.status = 'SUCCEEDED');
