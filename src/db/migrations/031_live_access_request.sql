-- When a business asked for live access from its dashboard ("Request live access"): shown to the
-- operator by `admin business list` and `business show`, who approves it as before
-- (`business approve-live`). Null: never asked. It stays once approved, as the record of the ask.
ALTER TABLE businesses ADD COLUMN live_requested_at timestamptz;
