-- Wrong PINs sent for a phone that has no wallet, counted like a wallet's own, so that a phone
-- without a wallet also "locks" after five: the pay routes must not tell the two apart. A row
-- whose lock has expired counts as zero, so the cleanup task may delete it.
CREATE TABLE unknown_phone_pin_attempts (
  environment          text NOT NULL CHECK (environment IN ('test', 'live')),
  phone                text NOT NULL,
  failed_pin_attempts  integer NOT NULL,
  locked_until         timestamptz,
  PRIMARY KEY (environment, phone)
);
CREATE INDEX unknown_phone_pin_attempts_locked_idx ON unknown_phone_pin_attempts (locked_until)
  WHERE locked_until IS NOT NULL;
