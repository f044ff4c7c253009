-- Payment intents, their refunds, and the event outbox every state change writes into.

CREATE TABLE payment_intents (
  id                bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  reference_number  text NOT NULL UNIQUE,
  short_code        text NOT NULL UNIQUE,
  business_id       text NOT NULL REFERENCES businesses(id),
  environment       text NOT NULL CHECK (environment IN ('test', 'live')),
  amount_type       text NOT NULL CHECK (amount_type IN ('FIXED', 'OPEN')),
  amount            bigint CHECK (amount > 0),
  suggested_amount  bigint CHECK (suggested_amount > 0),
  label             text NOT NULL DEFAULT '',
  metadata          jsonb NOT NULL DEFAULT '{}',
  success_url       text,
  cancel_url        text,
  status            text NOT NULL CHECK (status IN ('PENDING', 'PAID', 'REFUNDED', 'CANCELLED', 'FAILED')),
  -- The 6-digit payment code as an integer, set only while the intent can be paid: the partial
  -- unique index below is what makes a code unique among payable intents and free again after.
  payment_code      integer CHECK (payment_code BETWEEN 0 AND 999999),
  expires_at        timestamptz NOT NULL,
  -- Filled by the payment; the commission is computed once, from the fee plan of that moment.
  amount_paid       bigint,
  paid_at           timestamptz,
  payment_method    text,
  payer_phone       text,
  payer_fee         bigint NOT NULL DEFAULT 0,
  provider_ttc      bigint NOT NULL DEFAULT 0,
  payer_ttc         bigint NOT NULL DEFAULT 0,
  tof               bigint NOT NULL DEFAULT 0,
  tte               bigint NOT NULL DEFAULT 0,
  tof_bps           integer NOT NULL DEFAULT 0,
  tte_bps           integer NOT NULL DEFAULT 0,
  total_amount_refunded bigint NOT NULL DEFAULT 0,
  last_failure      text,
  created_at        timestamptz NOT NULL,
  updated_at        timestamptz NOT NULL,
  CHECK (amount_type = 'OPEN' OR amount IS NOT NULL),
  CHECK (total_amount_refunded >= 0 AND total_amount_refunded <= coalesce(amount_paid, 0)),
  CHECK (payment_code IS NULL OR status IN ('PENDING', 'FAILED'))
);
CREATE UNIQUE INDEX payment_intents_code_idx ON payment_intents (environment, payment_code)
  WHERE payment_code IS NOT NULL;
CREATE INDEX payment_intents_list_idx
  ON payment_intents (business_id, environment, created_at DESC, reference_number DESC);
CREATE INDEX payment_intents_status_list_idx
  ON payment_intents (business_id, environment, status, created_at DESC, reference_number DESC);
CREATE INDEX payment_intents_expiry_idx ON payment_intents (expires_at)
  WHERE status IN ('PENDING', 'FAILED');

CREATE TABLE refunds (
  id                 text PRIMARY KEY,
  intent_id          bigint NOT NULL REFERENCES payment_intents(id),
  amount             bigint NOT NULL CHECK (amount > 0),
  reason             text,
  status             text NOT NULL CHECK (status IN ('SUCCEEDED')),
  -- The part of the payment's fees this refund gives back (decisions: Refunds, Commission).
  provider_ttc       bigint NOT NULL,
  tof                bigint NOT NULL,
  tte                bigint NOT NULL,
  created_at         timestamptz NOT NULL
);
CREATE INDEX refunds_intent_idx ON refunds (intent_id, created_at);

-- The transactional outbox: an event row commits with the change that caused it. `body` is the
-- exact JSON text receivers get, so a delivery can be signed over the bytes it sends.
CREATE TABLE events (
  id           text PRIMARY KEY,
  business_id  text NOT NULL REFERENCES businesses(id),
  environment  text NOT NULL CHECK (environment IN ('test', 'live')),
  event        text NOT NULL,
  subject      text NOT NULL,
  body         text NOT NULL,
  created_at   timestamptz NOT NULL
);
CREATE INDEX events_subject_idx ON events (subject, created_at);
CREATE INDEX events_business_idx ON events (business_id, environment, created_at);
