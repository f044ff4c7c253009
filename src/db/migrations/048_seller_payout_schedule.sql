-- A seller's daily automatic payout (issue 52 item 4, decision 082): `payout_schedule` on the
-- seller, and one row per seller and UTC day that the worker's 'seller-payouts' task considered
-- it. The primary key is what makes the task idempotent: two workers, or a rerun the same day,
-- cannot both claim the day, so a seller is never paid twice for one day.
ALTER TABLE sellers ADD COLUMN payout_schedule text NOT NULL DEFAULT 'MANUAL'
  CHECK (payout_schedule IN ('MANUAL', 'DAILY'));

CREATE TABLE seller_payout_days (
  seller_id        text NOT NULL REFERENCES sellers(id),
  -- The UTC day the payout is for.
  day              date NOT NULL,
  -- The payout made; null when the balance could not cover the payout fee and leave more than 0
  -- (a negative balance included): that day is skipped, and the next day looks again.
  payout_reference text REFERENCES payouts(reference),
  created_at       timestamptz NOT NULL,
  PRIMARY KEY (seller_id, day)
);

-- The task's search: the ACTIVE DAILY sellers, whatever their business.
CREATE INDEX sellers_daily_payout_idx ON sellers (id) WHERE payout_schedule = 'DAILY' AND status = 'ACTIVE';
