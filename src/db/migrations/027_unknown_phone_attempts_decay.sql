-- Wrong PINs decay (issue 36 item 4): a count whose last attempt is older than the lock window
-- (15 minutes) counts as zero, whatever it is, so four wrong PINs months apart never lock; the
-- cleanup task deletes such rows of unknown phones, not only those whose lock has ended.
ALTER TABLE unknown_phone_pin_attempts ADD COLUMN last_attempt_at timestamptz NOT NULL DEFAULT now();
CREATE INDEX unknown_phone_pin_attempts_last_attempt_idx ON unknown_phone_pin_attempts (last_attempt_at);

-- A wallet's wrong PINs decay alike; NULL: no attempt since this column was added.
ALTER TABLE wallets ADD COLUMN last_pin_attempt_at timestamptz;
