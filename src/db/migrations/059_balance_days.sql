-- A statement's figures from day totals (issue 55, decision 097). The opening balance summed every
-- balance transaction of the owner before the period, so a month's statement cost grew with the
-- merchant's whole history, and an archived (detached) month would drop out of every later
-- statement. balance_days keeps, per owner (the business's own rows: seller_id ''; a seller's:
-- its id), UTC day and type, the count and the sums of amount, fee and net, exactly, in the
-- statement that writes the rows (so in its transaction), the way list_counts does (018): a writer
-- adds to its own backend's `slot`, so no two payments queue on one total, and the worker folds
-- the slots into slot 0 (foldBalanceDays). Detaching a month fires no trigger: its totals stay.
CREATE TABLE balance_days (
  business_id  text NOT NULL,
  environment  text NOT NULL,
  seller_id    text NOT NULL,
  day          date NOT NULL,
  type         text NOT NULL,
  slot         integer NOT NULL,
  n            bigint NOT NULL,
  amount       bigint NOT NULL,
  fee          bigint NOT NULL,
  net          bigint NOT NULL,
  PRIMARY KEY (business_id, environment, seller_id, day, type, slot)
);
CREATE INDEX balance_days_unfolded_idx ON balance_days (slot) WHERE slot <> 0;

-- Inserts (once per statement: a payment writes several rows) and deletes (none in the service;
-- a test may). TG_ARGV[0] is 1 for rows added, -1 for rows removed.
CREATE FUNCTION sum_balance_days() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO balance_days (business_id, environment, seller_id, day, type, slot, n, amount, fee, net)
    SELECT business_id, environment, coalesce(seller_id, ''), (created_at AT TIME ZONE 'UTC')::date, type,
      pg_backend_pid(), count(*), sum(amount), sum(fee), sum(net)
    FROM new_rows GROUP BY 1, 2, 3, 4, 5
    ON CONFLICT (business_id, environment, seller_id, day, type, slot) DO UPDATE SET n = balance_days.n + excluded.n,
      amount = balance_days.amount + excluded.amount, fee = balance_days.fee + excluded.fee,
      net = balance_days.net + excluded.net;
  ELSE
    INSERT INTO balance_days (business_id, environment, seller_id, day, type, slot, n, amount, fee, net)
    SELECT business_id, environment, coalesce(seller_id, ''), (created_at AT TIME ZONE 'UTC')::date, type,
      pg_backend_pid(), -count(*), -sum(amount), -sum(fee), -sum(net)
    FROM old_rows GROUP BY 1, 2, 3, 4, 5
    ON CONFLICT (business_id, environment, seller_id, day, type, slot) DO UPDATE SET n = balance_days.n + excluded.n,
      amount = balance_days.amount + excluded.amount, fee = balance_days.fee + excluded.fee,
      net = balance_days.net + excluded.net;
  END IF;
  RETURN NULL;
END $$;

-- The service never changes a summed column (it sets balance_after, applied_order, settled_by);
-- a test backdates rows. A BEFORE row trigger, since it also fires for an update that moves the
-- row to another month's partition (an AFTER UPDATE row trigger would not); its WHEN keeps the
-- fold's and the payouts' updates free of it.
CREATE FUNCTION move_balance_day() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- Two statements: the row may stay on the same total (a move within a day).
  INSERT INTO balance_days (business_id, environment, seller_id, day, type, slot, n, amount, fee, net)
  VALUES (OLD.business_id, OLD.environment, coalesce(OLD.seller_id, ''), (OLD.created_at AT TIME ZONE 'UTC')::date,
    OLD.type, pg_backend_pid(), -1, -OLD.amount, -OLD.fee, -OLD.net)
  ON CONFLICT (business_id, environment, seller_id, day, type, slot) DO UPDATE SET n = balance_days.n + excluded.n,
    amount = balance_days.amount + excluded.amount, fee = balance_days.fee + excluded.fee,
    net = balance_days.net + excluded.net;
  INSERT INTO balance_days (business_id, environment, seller_id, day, type, slot, n, amount, fee, net)
  VALUES (NEW.business_id, NEW.environment, coalesce(NEW.seller_id, ''), (NEW.created_at AT TIME ZONE 'UTC')::date,
    NEW.type, pg_backend_pid(), 1, NEW.amount, NEW.fee, NEW.net)
  ON CONFLICT (business_id, environment, seller_id, day, type, slot) DO UPDATE SET n = balance_days.n + excluded.n,
    amount = balance_days.amount + excluded.amount, fee = balance_days.fee + excluded.fee,
    net = balance_days.net + excluded.net;
  RETURN NEW;
END $$;

CREATE TRIGGER balance_transactions_day_insert AFTER INSERT ON balance_transactions
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION sum_balance_days();
CREATE TRIGGER balance_transactions_day_delete AFTER DELETE ON balance_transactions
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION sum_balance_days();
CREATE TRIGGER balance_transactions_day_change BEFORE UPDATE ON balance_transactions
  FOR EACH ROW WHEN (OLD.created_at IS DISTINCT FROM NEW.created_at OR OLD.type IS DISTINCT FROM NEW.type
    OR OLD.amount IS DISTINCT FROM NEW.amount OR OLD.fee IS DISTINCT FROM NEW.fee OR OLD.net IS DISTINCT FROM NEW.net
    OR OLD.business_id IS DISTINCT FROM NEW.business_id OR OLD.environment IS DISTINCT FROM NEW.environment
    OR OLD.seller_id IS DISTINCT FROM NEW.seller_id)
  EXECUTE FUNCTION move_balance_day();

-- What exists already, summed once (archived months are detached: their rows are not here, and
-- no statement read them before this either).
INSERT INTO balance_days (business_id, environment, seller_id, day, type, slot, n, amount, fee, net)
SELECT business_id, environment, coalesce(seller_id, ''), (created_at AT TIME ZONE 'UTC')::date, type, 0,
  count(*), sum(amount), sum(fee), sum(net)
FROM balance_transactions GROUP BY 1, 2, 3, 4, 5;
