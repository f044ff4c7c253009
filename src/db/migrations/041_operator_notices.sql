-- The operator notification hook (issue 51, decision 078): each new payment request, when the
-- operator configured OPERATOR_HOOK_URL, queues one notice in the request's own transaction; the
-- worker POSTs it to the operator's gateway (SMS, push) and retries it on the webhook schedule.
-- The body is written once, so every attempt signs the same bytes under the same webhook-id.
CREATE TABLE operator_notices (
  id               text PRIMARY KEY,
  request_id       text NOT NULL UNIQUE REFERENCES payment_requests(id),
  environment      text NOT NULL CHECK (environment IN ('test', 'live')),
  body             text NOT NULL,
  status           text NOT NULL CHECK (status IN ('PENDING', 'SENT', 'FAILED', 'EXPIRED')),
  attempts         integer NOT NULL DEFAULT 0,
  -- When the next attempt is due; while an attempt runs, when its claim lapses (a worker that
  -- died mid-attempt leaves the notice to the next one then).
  next_attempt_at  timestamptz NOT NULL,
  last_status_code integer,
  last_error       text,
  created_at       timestamptz NOT NULL,
  updated_at       timestamptz NOT NULL,
  sent_at          timestamptz,
  CHECK ((status = 'SENT') = (sent_at IS NOT NULL))
);
-- The sender reads only the notices still to send, soonest first.
CREATE INDEX operator_notices_due_idx ON operator_notices (next_attempt_at) WHERE status = 'PENDING';
