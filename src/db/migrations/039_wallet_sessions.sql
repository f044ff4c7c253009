-- The wallet app's sessions (issue 51): a payer signed in with their wallet phone and PIN, in one
-- environment. Only the token's hash is kept; the CSRF token is the session's own.
CREATE TABLE wallet_sessions (
  token_hash   text PRIMARY KEY,
  wallet_id    text NOT NULL REFERENCES wallets(id),
  csrf_token   text NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  last_seen_at timestamptz NOT NULL DEFAULT now(),
  revoked_at   timestamptz
);
CREATE INDEX wallet_sessions_wallet_idx ON wallet_sessions (wallet_id) WHERE revoked_at IS NULL;
