-- A payment is a row of its own (issue 48): one per attempt to pay an intent or an order, with its
-- method, its outcome, the commission it was charged under and the settlement lines it credited.
-- The intent's and the order's own payment columns stay what integrators read; this table is the
-- record of every attempt, failed ones included.

CREATE TABLE payments (
  id                    text PRIMARY KEY,
  -- The business of its intent or order (whose reference is checked): a check of its own cost a
  -- trigger query on every payment (issue 48's benchmark).
  business_id           text NOT NULL,
  environment           text NOT NULL CHECK (environment IN ('test', 'live')),
  intent_id             bigint REFERENCES payment_intents(id),
  order_id              bigint REFERENCES orders(id),
  method                text NOT NULL CHECK (method IN ('WALLET_PIN', 'SANDBOX')),
  status                text NOT NULL CHECK (status IN ('PROCESSING', 'SUCCEEDED', 'FAILED')),
  amount                bigint NOT NULL CHECK (amount > 0),
  payer_phone           text,
  payer_wallet_id       text,
  -- The fee snapshot (the `commission` object of events) and the credited lines, once SUCCEEDED.
  commission            jsonb,
  settlement            jsonb NOT NULL DEFAULT '[]',
  failure_code          text,
  failure_message       text,
  ledger_transaction_id text,
  created_at            timestamptz NOT NULL,
  settled_at            timestamptz,
  updated_at            timestamptz NOT NULL,
  CHECK ((intent_id IS NULL) <> (order_id IS NULL)),
  CHECK ((status = 'FAILED') = (failure_code IS NOT NULL)),
  CHECK ((status = 'SUCCEEDED') = (settled_at IS NOT NULL))
);

CREATE INDEX payments_intent_idx ON payments (intent_id, created_at DESC, id DESC) WHERE intent_id IS NOT NULL;
CREATE INDEX payments_order_idx ON payments (order_id, created_at DESC, id DESC) WHERE order_id IS NOT NULL;
-- The periodic task that ends payments left waiting reads only these.
CREATE INDEX payments_processing_idx ON payments (created_at) WHERE status = 'PROCESSING';
