-- Issue 51: payers see the merchant's name as the operator verified it, not the name the merchant
-- types in its settings. The operator sets it when approving live access (default: the name then)
-- and only the operator changes it; a merchant's rename leaves it alone. The sandbox verifies
-- nobody: its requests show the business's own name, marked not verified.
ALTER TABLE businesses ADD COLUMN verified_name text;

-- The businesses already live were approved under their current name.
UPDATE businesses SET verified_name = name WHERE live_approved;

ALTER TABLE businesses ADD CONSTRAINT businesses_verified_name_check
  CHECK (verified_name IS NULL OR char_length(verified_name) BETWEEN 1 AND 200);
-- A live business always has one: approving live access sets it.
ALTER TABLE businesses ADD CONSTRAINT businesses_live_verified_check
  CHECK (NOT live_approved OR verified_name IS NOT NULL);
