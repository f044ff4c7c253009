-- A business run by a team (issue 53, decision 083): six roles instead of two, and an append-only
-- record of every sensitive act. Existing users keep their access: owner stays owner, viewer viewer.
ALTER TABLE dashboard_users DROP CONSTRAINT dashboard_users_role_check;
ALTER TABLE dashboard_users ADD CONSTRAINT dashboard_users_role_check
  CHECK (role IN ('owner', 'admin', 'developer', 'finance', 'support', 'viewer'));

-- One row per act, written in the act's own transaction. `seq` is the order entries were written
-- in (the list's order and cursor); `environment` is null for an act that belongs to no mode
-- (sign-in, team, settings). Actors: a dashboard user (`actor_id` its id, `actor_label` its email),
-- an API key (its id and hint), the operator, or the platform's own tasks (`system`).
CREATE TABLE audit_log (
  seq          bigserial PRIMARY KEY,
  id           text NOT NULL UNIQUE,
  business_id  text NOT NULL REFERENCES businesses(id),
  environment  text CHECK (environment IN ('test', 'live')),
  action       text NOT NULL,
  actor_kind   text NOT NULL CHECK (actor_kind IN ('user', 'api_key', 'operator', 'system')),
  actor_id     text,
  actor_label  text,
  ip           text,
  user_agent   text,
  target_kind  text,
  target_id    text,
  details      jsonb NOT NULL DEFAULT '{}',
  created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX audit_log_business_idx ON audit_log (business_id, seq DESC);
CREATE INDEX audit_log_business_action_idx ON audit_log (business_id, action, seq DESC);

-- Append-only: no route, task or script edits or deletes an entry. The guard is in the database so
-- that a bug or a hand-typed statement cannot either (retention, issue 55, drops whole old months).
CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'audit_log is append-only';
END;
$$;
CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log
  FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();
