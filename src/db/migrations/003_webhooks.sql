-- Webhook endpoints, one delivery per (event, endpoint), and every attempt of every delivery.

CREATE TABLE webhook_endpoints (
  id                          text PRIMARY KEY,
  business_id                 text NOT NULL REFERENCES businesses(id),
  environment                 text NOT NULL CHECK (environment IN ('test', 'live')),
  url                         text NOT NULL,
  events                      text[] NOT NULL,
  active                      boolean NOT NULL DEFAULT true,
  -- The secret signs deliveries, so it is kept as is (a hash could not sign).
  secret                      text NOT NULL,
  previous_secret             text,
  previous_secret_expires_at  timestamptz,
  created_at                  timestamptz NOT NULL DEFAULT now(),
  updated_at                  timestamptz NOT NULL DEFAULT now(),
  deleted_at                  timestamptz
);
CREATE INDEX webhook_endpoints_business_idx ON webhook_endpoints (business_id, environment, created_at)
  WHERE deleted_at IS NULL;

CREATE TABLE webhook_deliveries (
  id               text PRIMARY KEY,
  event_id         text NOT NULL REFERENCES events(id),
  endpoint_id      text NOT NULL REFERENCES webhook_endpoints(id),
  business_id      text NOT NULL REFERENCES businesses(id),
  environment      text NOT NULL CHECK (environment IN ('test', 'live')),
  event            text NOT NULL,
  status           text NOT NULL CHECK (status IN ('PENDING', 'SUCCEEDED', 'DEAD')),
  -- Counted when an attempt is claimed, so a worker that dies mid-attempt still used it up.
  attempt_count    integer NOT NULL DEFAULT 0,
  -- Attempts over every schedule (a manual retry starts a new schedule); numbers the attempt log.
  attempts_total   integer NOT NULL DEFAULT 0,
  next_attempt_at  timestamptz NOT NULL,
  -- A claim is a lease: its worker extends it while the attempt runs; once it lapses (the worker
  -- died) another worker takes the delivery.
  locked_by        text,
  locked_until     timestamptz,
  last_status_code integer,
  last_error       text,
  completed_at     timestamptz,
  created_at       timestamptz NOT NULL,
  updated_at       timestamptz NOT NULL
);
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'PENDING';
CREATE INDEX webhook_deliveries_inflight_idx ON webhook_deliveries (endpoint_id) WHERE locked_until IS NOT NULL;
CREATE INDEX webhook_deliveries_list_idx ON webhook_deliveries (business_id, environment, created_at DESC, id DESC);
CREATE INDEX webhook_deliveries_event_idx ON webhook_deliveries (event_id);

CREATE TABLE webhook_attempts (
  delivery_id      text NOT NULL REFERENCES webhook_deliveries(id),
  attempt          integer NOT NULL,
  started_at       timestamptz NOT NULL,
  status_code      integer,
  duration_ms      integer,
  error            text,
  response_snippet text,
  PRIMARY KEY (delivery_id, attempt)
);
