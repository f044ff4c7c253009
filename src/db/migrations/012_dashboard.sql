-- Merchant dashboard: its users (operators create the first), their sessions, and when each API
-- key was last used (shown on the Developers page).

-- Emails are stored lower-cased and unique across businesses: sign-in asks for no business.
-- password_hash carries its own algorithm and parameters (scrypt$N$r$p$salt$hash), so raising the
-- cost later re-hashes nothing until each user next signs in.
CREATE TABLE dashboard_users (
  id             text PRIMARY KEY,
  business_id    text NOT NULL REFERENCES businesses(id),
  email          text NOT NULL UNIQUE CHECK (email = lower(email)),
  password_hash  text NOT NULL,
  role           text NOT NULL CHECK (role IN ('owner', 'viewer')),
  disabled_at    timestamptz,
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX dashboard_users_business_idx ON dashboard_users (business_id, created_at);

-- A session is found by the SHA-256 of its cookie: the table alone signs nobody in.
CREATE TABLE dashboard_sessions (
  token_hash    text PRIMARY KEY,
  user_id       text NOT NULL REFERENCES dashboard_users(id),
  csrf_token    text NOT NULL,
  environment   text NOT NULL DEFAULT 'test' CHECK (environment IN ('test', 'live')),
  lang          text NOT NULL DEFAULT 'en' CHECK (lang IN ('en', 'fr')),
  created_at    timestamptz NOT NULL DEFAULT now(),
  last_seen_at  timestamptz NOT NULL DEFAULT now(),
  revoked_at    timestamptz
);
CREATE INDEX dashboard_sessions_user_idx ON dashboard_sessions (user_id) WHERE revoked_at IS NULL;

ALTER TABLE api_keys ADD COLUMN last_used_at timestamptz;
