-- Webhook operations: signature schemes, per-endpoint rate limits, endpoint health (auto-disable),
-- what each attempt sent and got back, hourly attempt rollups for the stats, and the FAILED status.

ALTER TABLE webhook_endpoints
  ADD COLUMN signature_scheme text NOT NULL DEFAULT 'commerce' CHECK (signature_scheme IN ('commerce', 'standard')),
  ADD COLUMN max_per_second integer CHECK (max_per_second > 0),
  -- The rate limit's current one-second window (database clock) and the attempts claimed in it;
  -- every worker reads and bumps these in its claim statement.
  ADD COLUMN rate_window_at timestamptz,
  ADD COLUMN rate_window_count integer NOT NULL DEFAULT 0,
  -- Start of the current run of failed attempts; a successful attempt clears it.
  ADD COLUMN failing_since timestamptz,
  ADD COLUMN disable_warned_at timestamptz,
  ADD COLUMN disabled_at timestamptz,
  ADD COLUMN disabled_reason text CHECK (disabled_reason IN ('FAILING', 'MANUAL'));
CREATE INDEX webhook_endpoints_failing_idx ON webhook_endpoints (failing_since)
  WHERE failing_since IS NOT NULL AND active AND deleted_at IS NULL;

-- FAILED: the delivery stopped before its 8 attempts because its endpoint was disabled.
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_status_check;
ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_status_check
  CHECK (status IN ('PENDING', 'SUCCEEDED', 'FAILED', 'DEAD'));
CREATE INDEX webhook_deliveries_endpoint_pending_idx ON webhook_deliveries (endpoint_id, next_attempt_at)
  WHERE status = 'PENDING';
CREATE INDEX webhook_deliveries_endpoint_failed_idx ON webhook_deliveries (endpoint_id, created_at, id)
  WHERE status IN ('FAILED', 'DEAD');

ALTER TABLE webhook_attempts RENAME COLUMN response_snippet TO response_body;
ALTER TABLE webhook_attempts
  ADD COLUMN error_class text,
  ADD COLUMN request_headers jsonb,
  ADD COLUMN response_headers jsonb;

-- One row per endpoint, hour, outcome and latency bucket, bumped by the statement that records
-- the attempt: the stats read a few hundred rows, never the attempts.
CREATE TABLE webhook_attempt_rollups (
  endpoint_id      text NOT NULL REFERENCES webhook_endpoints(id),
  hour             timestamptz NOT NULL,
  outcome          text NOT NULL,
  latency_bucket   smallint NOT NULL,
  attempts         integer NOT NULL,
  last_error       text,
  last_error_at    timestamptz,
  last_status_code integer,
  PRIMARY KEY (endpoint_id, hour, outcome, latency_bucket)
);
CREATE INDEX webhook_attempt_rollups_hour_idx ON webhook_attempt_rollups (hour);
