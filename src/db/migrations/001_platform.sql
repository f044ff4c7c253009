-- Platform foundation: businesses, shops, API keys, fee plans, idempotency, periodic tasks.

CREATE TABLE businesses (
  id             text PRIMARY KEY,
  name           text NOT NULL,
  live_approved  boolean NOT NULL DEFAULT false,
  api_enabled    boolean NOT NULL DEFAULT true,
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE shops (
  id           text PRIMARY KEY,
  business_id  text NOT NULL REFERENCES businesses(id),
  environment  text NOT NULL CHECK (environment IN ('test', 'live')),
  name         text NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  UNIQUE (business_id, environment)
);

CREATE TABLE api_keys (
  id            text PRIMARY KEY,
  business_id   text NOT NULL REFERENCES businesses(id),
  kind          text NOT NULL CHECK (kind IN ('secret', 'publishable')),
  environment   text NOT NULL CHECK (environment IN ('test', 'live')),
  key_hash      text NOT NULL UNIQUE,
  key_hint      text NOT NULL,
  scopes        text[] NOT NULL,
  ip_allowlist  text[] NOT NULL DEFAULT '{}',
  status        text NOT NULL DEFAULT 'active'
                CHECK (status IN ('active', 'suspended', 'revoked', 'rotated')),
  replaced_by   text REFERENCES api_keys(id),
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX api_keys_business_idx ON api_keys (business_id, created_at);

CREATE TABLE platform_settings (
  name        text PRIMARY KEY,
  value       jsonb NOT NULL,
  updated_at  timestamptz NOT NULL DEFAULT now()
);
INSERT INTO platform_settings (name, value) VALUES ('developer_api_enabled', 'true');

-- Fees are basis points (1/100 of a percent) and integer centimes; no fractional money anywhere.
CREATE TABLE fee_plans (
  business_id   text PRIMARY KEY REFERENCES businesses(id),
  provider_bps  integer NOT NULL DEFAULT 100 CHECK (provider_bps BETWEEN 0 AND 10000),
  payer_fee     bigint  NOT NULL DEFAULT 0   CHECK (payer_fee >= 0),
  tof_bps       integer NOT NULL DEFAULT 500 CHECK (tof_bps BETWEEN 0 AND 10000),
  tte_bps       integer NOT NULL DEFAULT 0   CHECK (tte_bps BETWEEN 0 AND 10000),
  updated_at    timestamptz NOT NULL DEFAULT now()
);

-- One row per (business, environment, key). The lock token lets a stale claim be taken over
-- safely: the effect's transaction only commits if it still holds the token it started with.
CREATE TABLE idempotency_keys (
  id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  business_id      text NOT NULL REFERENCES businesses(id),
  environment      text NOT NULL CHECK (environment IN ('test', 'live')),
  idempotency_key  text NOT NULL,
  fingerprint      text NOT NULL,
  state            text NOT NULL CHECK (state IN ('running', 'done')),
  lock_token       text,
  locked_at        timestamptz,
  response_status  integer,
  response_body    text,
  created_at       timestamptz NOT NULL DEFAULT now(),
  UNIQUE (business_id, environment, idempotency_key)
);
CREATE INDEX idempotency_keys_created_idx ON idempotency_keys (created_at);

-- Recurring maintenance: a worker runs a task only after moving next_run_at forward in one
-- UPDATE, so several workers never run the same task at once.
CREATE TABLE periodic_tasks (
  name         text PRIMARY KEY,
  next_run_at  timestamptz NOT NULL DEFAULT now(),
  last_run_at  timestamptz,
  last_error   text
);
