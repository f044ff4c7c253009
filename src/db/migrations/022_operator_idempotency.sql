-- The operator API (/api/v1/admin) takes idempotency keys too: a retried wallet credit must not
-- credit twice. No business owns those keys, so business_id is now the key's scope: a business id,
-- or 'operator' (business ids are 'biz_…'). The foreign key goes; a business is never deleted, so
-- it guarded nothing a business's keys could lose.
ALTER TABLE idempotency_keys DROP CONSTRAINT idempotency_keys_business_id_fkey;
COMMENT ON COLUMN idempotency_keys.business_id IS 'the key''s scope: a business id, or ''operator'' for the operator API';
