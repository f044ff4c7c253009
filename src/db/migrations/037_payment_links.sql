-- Payment links (issue 50): one link, paid by many. Each payment through a link is an intent of its
-- own, made and paid in one transaction once the payer's PIN checked out, that names its link.

CREATE TABLE payment_links (
  reference_number text PRIMARY KEY,
  -- The link's path on the pay host (/l/{slug}): random, unguessable, never reused.
  slug             text NOT NULL UNIQUE,
  business_id      text NOT NULL REFERENCES businesses(id),
  environment      text NOT NULL CHECK (environment IN ('test', 'live')),
  label            text NOT NULL,
  amount_type      text NOT NULL CHECK (amount_type IN ('FIXED', 'OPEN')),
  amount           bigint CHECK (amount > 0),
  min_amount       bigint CHECK (min_amount > 0),
  max_amount       bigint CHECK (max_amount > 0),
  max_payments     integer CHECK (max_payments > 0),
  expires_at       timestamptz,
  collect_name     boolean NOT NULL DEFAULT false,
  collect_note     boolean NOT NULL DEFAULT false,
  success_url      text,
  metadata         jsonb NOT NULL DEFAULT '{}',
  active           boolean NOT NULL DEFAULT true,
  inactive_message text,
  -- Counted by the payments themselves, in their transactions: the limit holds under races.
  payments_count   integer NOT NULL DEFAULT 0 CHECK (payments_count >= 0),
  amount_collected bigint NOT NULL DEFAULT 0 CHECK (amount_collected >= 0),
  created_at       timestamptz NOT NULL,
  updated_at       timestamptz NOT NULL,
  CHECK ((amount_type = 'FIXED') = (amount IS NOT NULL)),
  CHECK (amount_type = 'OPEN' OR (min_amount IS NULL AND max_amount IS NULL)),
  CHECK (min_amount IS NULL OR max_amount IS NULL OR min_amount <= max_amount),
  CHECK (max_payments IS NULL OR payments_count <= max_payments)
);

CREATE INDEX payment_links_list_idx ON payment_links (business_id, environment, created_at DESC, reference_number DESC);

ALTER TABLE payment_intents
  ADD COLUMN payment_link text REFERENCES payment_links(reference_number),
  ADD COLUMN payer_name text,
  ADD COLUMN payer_note text;

CREATE INDEX payment_intents_link_idx ON payment_intents (payment_link, created_at DESC, reference_number DESC)
  WHERE payment_link IS NOT NULL;
