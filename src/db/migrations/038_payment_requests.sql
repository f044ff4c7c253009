-- Payment requests (issue 51): a merchant asks a wallet to pay an intent; the payer approves or
-- declines in the wallet app. A request is a payment of the intent that waits (PROCESSING, method
-- WALLET_REQUEST) with the request's own row beside it: who was asked, until when, and how it ended.

ALTER TABLE payments DROP CONSTRAINT payments_method_check;
ALTER TABLE payments ADD CONSTRAINT payments_method_check
  CHECK (method IN ('WALLET_PIN', 'SANDBOX', 'WALLET_REQUEST'));

CREATE TABLE payment_requests (
  id           text PRIMARY KEY,
  business_id  text NOT NULL REFERENCES businesses(id),
  environment  text NOT NULL CHECK (environment IN ('test', 'live')),
  intent_id    bigint NOT NULL REFERENCES payment_intents(id),
  -- The payment that waits for the payer's answer, and ends with the request.
  payment_id   text NOT NULL UNIQUE REFERENCES payments(id),
  phone        text NOT NULL,
  amount       bigint NOT NULL CHECK (amount > 0),
  message      text,
  status       text NOT NULL
    CHECK (status IN ('PENDING', 'APPROVED', 'DECLINED', 'EXPIRED', 'CANCELLED', 'FAILED')),
  failure_code text,
  expires_at   timestamptz NOT NULL,
  created_at   timestamptz NOT NULL,
  updated_at   timestamptz NOT NULL,
  ended_at     timestamptz,
  CHECK ((status = 'PENDING') = (ended_at IS NULL)),
  CHECK ((status = 'FAILED') = (failure_code IS NOT NULL))
);

-- One pending request per intent: the second is refused (PAYMENT_REQUEST_PENDING), even in a race.
CREATE UNIQUE INDEX payment_requests_one_pending_idx ON payment_requests (intent_id) WHERE status = 'PENDING';
CREATE INDEX payment_requests_intent_idx ON payment_requests (intent_id, created_at DESC, id DESC);
-- The wallet's pending requests (the wallet app).
CREATE INDEX payment_requests_phone_idx ON payment_requests (environment, phone, created_at DESC)
  WHERE status = 'PENDING';
-- A business's requests to one phone: its pending ones and its last hour's (the abuse limits).
CREATE INDEX payment_requests_business_phone_idx ON payment_requests (business_id, environment, phone, created_at DESC);
-- The periodic task that expires requests reads only these.
CREATE INDEX payment_requests_expiry_idx ON payment_requests (expires_at) WHERE status = 'PENDING';

-- A payer who muted a merchant gets no request from it (403 PAYMENT_REQUESTS_MUTED).
CREATE TABLE merchant_mutes (
  environment text NOT NULL CHECK (environment IN ('test', 'live')),
  phone       text NOT NULL,
  business_id text NOT NULL REFERENCES businesses(id),
  created_at  timestamptz NOT NULL,
  PRIMARY KEY (environment, phone, business_id)
);
