-- Invitations to a business's team (issue 53, decision 083): an owner or admin invites an email with
-- a role; the invitee opens a one-time link within 72 hours and sets a password. Only the token's
-- hash is kept (like sessions'): the link is shown once, to the inviter, and never again.
CREATE TABLE dashboard_invitations (
  id           text PRIMARY KEY,
  business_id  text NOT NULL REFERENCES businesses(id),
  email        text NOT NULL,
  role         text NOT NULL CHECK (role IN ('owner', 'admin', 'developer', 'finance', 'support', 'viewer')),
  token_hash   text NOT NULL UNIQUE,
  invited_by   text REFERENCES dashboard_users(id),
  created_at   timestamptz NOT NULL DEFAULT now(),
  expires_at   timestamptz NOT NULL,
  accepted_at  timestamptz,
  revoked_at   timestamptz,
  CHECK (accepted_at IS NULL OR revoked_at IS NULL)
);
-- A pending invitation per email and business is refused on the inviter's form (an expired one
-- does not count, so the index is not unique).
CREATE INDEX dashboard_invitations_email_idx ON dashboard_invitations (business_id, email);
CREATE INDEX dashboard_invitations_business_idx ON dashboard_invitations (business_id, created_at DESC);
