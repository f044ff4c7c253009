-- A balance transaction's description as data, not as an English sentence (issue 54 item 3,
-- decision 086). The type and the source already say what moved; `detail` keeps what else the
-- sentence held: the movement's own reference (a refund's, an order modification's), the text the
-- merchant gave (a payment's label, a payout's description), why a payout came back (failed or
-- cancelled). Each reader words it in its own language (payments/balance-wording.ts); the API's
-- `description` is its English wording, the same sentence as before.
--
-- Every sentence the code wrote is read back into data; one it never wrote (none is known) is kept
-- whole as `text`, shown as it is. The file can run again over rows that have a `description`
-- column (test/payments/migration-backfill.test.ts replays migration 025 through it).
ALTER TABLE balance_transactions ADD COLUMN IF NOT EXISTS detail jsonb NOT NULL DEFAULT '{}';

UPDATE balance_transactions b SET detail = CASE
  WHEN b.type = 'payment' AND b.description = 'Payment ' || b.source_reference THEN '{}'::jsonb
  WHEN b.type = 'payment' AND starts_with(b.description, 'Payment ' || b.source_reference || ': ')
    THEN jsonb_build_object('label', substr(b.description, length('Payment ' || b.source_reference || ': ') + 1))
  WHEN b.type = 'payout' AND b.description = 'Payout ' || b.source_reference THEN '{}'::jsonb
  WHEN b.type = 'payout' AND starts_with(b.description, 'Payout ' || b.source_reference || ': ')
    THEN jsonb_build_object('label', substr(b.description, length('Payout ' || b.source_reference || ': ') + 1))
  WHEN b.type = 'refund' AND b.description ~ ('^Refund [^ ]+ of ' || b.source_reference || '$')
    THEN jsonb_build_object('reference', split_part(b.description, ' ', 2))
  WHEN b.type = 'order_payment' AND b.description = 'Order ' || b.source_reference THEN '{}'::jsonb
  WHEN b.type = 'order_refund' AND b.description ~ ('^Refund [^ ]+ of order ' || b.source_reference || '$')
    THEN jsonb_build_object('reference', split_part(b.description, ' ', 2))
  WHEN b.type = 'order_adjustment' AND b.description ~ ('^Modification [^ ]+ of order ' || b.source_reference || '$')
    THEN jsonb_build_object('reference', split_part(b.description, ' ', 2))
  WHEN b.type = 'payout_fee' AND b.description = 'Fee of payout ' || b.source_reference THEN '{}'::jsonb
  WHEN b.type = 'payout_reversal'
    AND b.description IN ('Payout ' || b.source_reference || ' failed: amount and fee returned',
      'Payout ' || b.source_reference || ' cancelled: amount and fee returned')
    THEN jsonb_build_object('outcome', split_part(split_part(b.description, ' ', 3), ':', 1))
  ELSE jsonb_build_object('text', b.description)
END;

ALTER TABLE balance_transactions DROP COLUMN description;
