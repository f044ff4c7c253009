-- API keys managed through the API (issue 53 item 3, decision 084). A key may be named and may
-- expire: a rolled key keeps working until its `expires_at` (the overlap), then is refused like an
-- unknown key. `last_used_ip` is written with `last_used_at`, at most once a minute per process.
-- `expiring_sent_at` marks the one `api_key.expiring` event sent 24 h before `expires_at`.
ALTER TABLE api_keys ADD COLUMN name text CHECK (char_length(name) BETWEEN 1 AND 100);
ALTER TABLE api_keys ADD COLUMN expires_at timestamptz;
ALTER TABLE api_keys ADD COLUMN last_used_ip text;
ALTER TABLE api_keys ADD COLUMN expiring_sent_at timestamptz;

-- The worker's expiry notice looks for keys about to expire that were not told yet.
CREATE INDEX api_keys_expiring_idx ON api_keys (expires_at) WHERE expires_at IS NOT NULL AND expiring_sent_at IS NULL;
