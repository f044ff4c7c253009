-- Delivery states as the contract now reads them: PENDING (no attempt yet), FAILED (the last
-- attempt failed and the next is scheduled), SUCCEEDED, DEAD (no attempt will follow) with the
-- reason on the delivery. Before, a delivery waiting for its retry stayed PENDING, FAILED meant
-- "ended by its endpoint's auto-disable", and a delivery of an endpoint disabled by hand waited
-- PENDING for it to come back. The rows are rewritten into the new meaning (the per-statement
-- trigger moves their list counts along).

ALTER TABLE webhook_deliveries
  ADD COLUMN dead_reason text CHECK (dead_reason IN ('MAX_ATTEMPTS', 'ENDPOINT_DISABLED', 'ENDPOINT_DELETED'));

-- Ended by an auto-disable (old FAILED), or waiting on an endpoint that is switched off: DEAD,
-- its endpoint disabled (a recover, once it is active again, sends them, as before).
UPDATE webhook_deliveries d
SET status = 'DEAD', dead_reason = 'ENDPOINT_DISABLED', locked_by = NULL, locked_until = NULL,
    completed_at = coalesce(d.completed_at, e.disabled_at, now()), updated_at = now()
FROM webhook_endpoints e
WHERE e.id = d.endpoint_id
  AND (d.status = 'FAILED' OR (d.status = 'PENDING' AND NOT e.active AND e.deleted_at IS NULL));

-- Old DEAD: its 8 attempts failed, or its endpoint was deleted (the delete wrote that last error).
UPDATE webhook_deliveries d
SET status = 'DEAD', dead_reason = CASE WHEN d.last_error = 'endpoint deleted' THEN 'ENDPOINT_DELETED' ELSE 'MAX_ATTEMPTS' END,
    locked_by = NULL, locked_until = NULL, completed_at = coalesce(d.completed_at, now())
FROM webhook_endpoints e
WHERE e.id = d.endpoint_id AND d.dead_reason IS NULL
  AND (d.status = 'DEAD' OR (d.status = 'PENDING' AND e.deleted_at IS NOT NULL));

-- Waiting with an attempt that came back failed: FAILED. The attempt a claim holds is counted
-- already but has no outcome yet, so a delivery in its first attempt stays PENDING.
UPDATE webhook_deliveries
SET status = 'FAILED'
WHERE status = 'PENDING' AND attempt_count > CASE WHEN locked_by IS NOT NULL THEN 1 ELSE 0 END;

ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_dead_has_reason
  CHECK ((status = 'DEAD') = (dead_reason IS NOT NULL));

-- The partial indexes of waiting deliveries now cover both waiting statuses; the one recover
-- reads covers DEAD only.
DROP INDEX webhook_deliveries_due_idx;
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at)
  WHERE status IN ('PENDING', 'FAILED');
DROP INDEX webhook_deliveries_endpoint_pending_idx;
CREATE INDEX webhook_deliveries_endpoint_waiting_idx ON webhook_deliveries (endpoint_id, next_attempt_at)
  WHERE status IN ('PENDING', 'FAILED');
DROP INDEX webhook_deliveries_endpoint_failed_idx;
CREATE INDEX webhook_deliveries_endpoint_dead_idx ON webhook_deliveries (endpoint_id, created_at, id)
  WHERE status = 'DEAD';
