-- Exact list totals without counting rows. Every insert, status change and delete of an intent,
-- order, product or webhook delivery adjusts a count per business, environment, UTC creation day
-- and status, in the statement that changes the row (so in its transaction: the counts are exact
-- at every snapshot). A list's `total` is a sum over days; a deep page starts from the day its
-- offset falls in instead of skipping every newer row.
--
-- A writer adds to the row of its own backend process (`slot` = pg_backend_pid()), so no two
-- running transactions ever write the same count row: payments of one merchant never queue on a
-- counter. The worker folds those rows into slot 0 (foldListCounts), skipping rows still locked.
CREATE TABLE list_counts (
  list         text NOT NULL,
  business_id  text NOT NULL,
  environment  text NOT NULL,
  day          date NOT NULL,
  status       text NOT NULL,
  slot         integer NOT NULL,
  n            bigint NOT NULL,
  PRIMARY KEY (list, business_id, environment, day, status, slot)
);
CREATE INDEX list_counts_unfolded_idx ON list_counts (slot) WHERE slot <> 0;

-- Paid volume per UTC day of payment, for the dashboard's chart: kept the same way.
CREATE TABLE paid_volume_days (
  business_id  text NOT NULL,
  environment  text NOT NULL,
  day          date NOT NULL,
  slot         integer NOT NULL,
  n            bigint NOT NULL,
  amount       bigint NOT NULL,
  PRIMARY KEY (business_id, environment, day, slot)
);
CREATE INDEX paid_volume_days_unfolded_idx ON paid_volume_days (slot) WHERE slot <> 0;

-- The status a row is counted under: a deleted product is counted apart, so no list shows it.
CREATE FUNCTION list_status(table_name name, status text, deleted_at timestamptz) RETURNS text
  LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN table_name = 'products' AND deleted_at IS NOT NULL THEN 'DELETED' ELSE status END
$$;

-- Inserts and deletes, once per statement (a webhook fan-out or a CSV import adds many rows).
-- TG_ARGV[0] is the list's name.
CREATE FUNCTION count_list_rows() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    IF TG_TABLE_NAME = 'products' THEN
      INSERT INTO list_counts (list, business_id, environment, day, status, slot, n)
      SELECT TG_ARGV[0], business_id, environment, (created_at AT TIME ZONE 'UTC')::date,
        list_status(TG_TABLE_NAME, status, deleted_at), pg_backend_pid(), count(*)
      FROM new_rows GROUP BY 2, 3, 4, 5
      ON CONFLICT (list, business_id, environment, day, status, slot) DO UPDATE SET n = list_counts.n + excluded.n;
    ELSE
      INSERT INTO list_counts (list, business_id, environment, day, status, slot, n)
      SELECT TG_ARGV[0], business_id, environment, (created_at AT TIME ZONE 'UTC')::date, status, pg_backend_pid(),
        count(*)
      FROM new_rows GROUP BY 2, 3, 4, 5
      ON CONFLICT (list, business_id, environment, day, status, slot) DO UPDATE SET n = list_counts.n + excluded.n;
    END IF;
  ELSE
    IF TG_TABLE_NAME = 'products' THEN
      INSERT INTO list_counts (list, business_id, environment, day, status, slot, n)
      SELECT TG_ARGV[0], business_id, environment, (created_at AT TIME ZONE 'UTC')::date,
        list_status(TG_TABLE_NAME, status, deleted_at), pg_backend_pid(), -count(*)
      FROM old_rows GROUP BY 2, 3, 4, 5
      ON CONFLICT (list, business_id, environment, day, status, slot) DO UPDATE SET n = list_counts.n + excluded.n;
    ELSE
      INSERT INTO list_counts (list, business_id, environment, day, status, slot, n)
      SELECT TG_ARGV[0], business_id, environment, (created_at AT TIME ZONE 'UTC')::date, status, pg_backend_pid(),
        -count(*)
      FROM old_rows GROUP BY 2, 3, 4, 5
      ON CONFLICT (list, business_id, environment, day, status, slot) DO UPDATE SET n = list_counts.n + excluded.n;
    END IF;
  END IF;
  -- Intents are created unpaid by the API; rows written paid (an import, a restore) count too.
  IF TG_TABLE_NAME = 'payment_intents' THEN
    IF TG_OP = 'INSERT' THEN
      INSERT INTO paid_volume_days (business_id, environment, day, slot, n, amount)
      SELECT business_id, environment, (paid_at AT TIME ZONE 'UTC')::date, pg_backend_pid(), count(*),
        sum(coalesce(amount_paid, 0))
      FROM new_rows WHERE paid_at IS NOT NULL GROUP BY 1, 2, 3
      ON CONFLICT (business_id, environment, day, slot)
      DO UPDATE SET n = paid_volume_days.n + excluded.n, amount = paid_volume_days.amount + excluded.amount;
    ELSE
      INSERT INTO paid_volume_days (business_id, environment, day, slot, n, amount)
      SELECT business_id, environment, (paid_at AT TIME ZONE 'UTC')::date, pg_backend_pid(), -count(*),
        -sum(coalesce(amount_paid, 0))
      FROM old_rows WHERE paid_at IS NOT NULL GROUP BY 1, 2, 3
      ON CONFLICT (business_id, environment, day, slot)
      DO UPDATE SET n = paid_volume_days.n + excluded.n, amount = paid_volume_days.amount + excluded.amount;
    END IF;
  END IF;
  RETURN NULL;
END $$;

-- A row whose counted status or creation day changes moves from one count to another.
CREATE FUNCTION count_list_change() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  old_status text;
  new_status text;
  old_day date := (OLD.created_at AT TIME ZONE 'UTC')::date;
  new_day date := (NEW.created_at AT TIME ZONE 'UTC')::date;
BEGIN
  IF TG_TABLE_NAME = 'products' THEN
    old_status := list_status(TG_TABLE_NAME, OLD.status, OLD.deleted_at);
    new_status := list_status(TG_TABLE_NAME, NEW.status, NEW.deleted_at);
  ELSE
    old_status := OLD.status;
    new_status := NEW.status;
  END IF;
  IF old_status IS DISTINCT FROM new_status OR old_day IS DISTINCT FROM new_day THEN
    INSERT INTO list_counts (list, business_id, environment, day, status, slot, n)
    VALUES (TG_ARGV[0], OLD.business_id, OLD.environment, old_day, old_status, pg_backend_pid(), -1),
      (TG_ARGV[0], NEW.business_id, NEW.environment, new_day, new_status, pg_backend_pid(), 1)
    ON CONFLICT (list, business_id, environment, day, status, slot) DO UPDATE SET n = list_counts.n + excluded.n;
  END IF;
  -- Nested: a condition naming paid_at cannot even be read for a table without that column.
  IF TG_TABLE_NAME = 'payment_intents' THEN
    IF OLD.paid_at IS NULL AND NEW.paid_at IS NOT NULL THEN
      INSERT INTO paid_volume_days (business_id, environment, day, slot, n, amount)
      VALUES (NEW.business_id, NEW.environment, (NEW.paid_at AT TIME ZONE 'UTC')::date, pg_backend_pid(), 1,
        coalesce(NEW.amount_paid, 0))
      ON CONFLICT (business_id, environment, day, slot)
      DO UPDATE SET n = paid_volume_days.n + 1, amount = paid_volume_days.amount + excluded.amount;
    END IF;
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER payment_intents_counted_insert AFTER INSERT ON payment_intents
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION count_list_rows('intents');
CREATE TRIGGER payment_intents_counted_delete AFTER DELETE ON payment_intents
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION count_list_rows('intents');
CREATE TRIGGER payment_intents_counted_change AFTER UPDATE ON payment_intents
  FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.created_at IS DISTINCT FROM NEW.created_at
    OR (OLD.paid_at IS NULL AND NEW.paid_at IS NOT NULL))
  EXECUTE FUNCTION count_list_change('intents');

CREATE TRIGGER orders_counted_insert AFTER INSERT ON orders
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION count_list_rows('orders');
CREATE TRIGGER orders_counted_delete AFTER DELETE ON orders
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION count_list_rows('orders');
CREATE TRIGGER orders_counted_change AFTER UPDATE ON orders
  FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.created_at IS DISTINCT FROM NEW.created_at)
  EXECUTE FUNCTION count_list_change('orders');

CREATE TRIGGER products_counted_insert AFTER INSERT ON products
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION count_list_rows('products');
CREATE TRIGGER products_counted_delete AFTER DELETE ON products
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION count_list_rows('products');
CREATE TRIGGER products_counted_change AFTER UPDATE ON products
  FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.deleted_at IS DISTINCT FROM NEW.deleted_at
    OR OLD.created_at IS DISTINCT FROM NEW.created_at)
  EXECUTE FUNCTION count_list_change('products');

CREATE TRIGGER webhook_deliveries_counted_insert AFTER INSERT ON webhook_deliveries
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION count_list_rows('deliveries');
CREATE TRIGGER webhook_deliveries_counted_delete AFTER DELETE ON webhook_deliveries
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION count_list_rows('deliveries');
CREATE TRIGGER webhook_deliveries_counted_change AFTER UPDATE ON webhook_deliveries
  FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.created_at IS DISTINCT FROM NEW.created_at)
  EXECUTE FUNCTION count_list_change('deliveries');

-- A status filter reads the rows of that status in the list's order (intents have had this
-- index since 002): a rare status is otherwise found by reading every newer row of the others.
CREATE INDEX orders_status_list_idx ON orders (business_id, environment, status, created_at DESC, reference_number DESC);
CREATE INDEX webhook_deliveries_status_list_idx
  ON webhook_deliveries (business_id, environment, status, created_at DESC, id DESC);

-- What exists already, counted once.
INSERT INTO list_counts (list, business_id, environment, day, status, slot, n)
SELECT 'intents', business_id, environment, (created_at AT TIME ZONE 'UTC')::date, status, 0, count(*)
FROM payment_intents GROUP BY 2, 3, 4, 5
UNION ALL
SELECT 'orders', business_id, environment, (created_at AT TIME ZONE 'UTC')::date, status, 0, count(*)
FROM orders GROUP BY 2, 3, 4, 5
UNION ALL
SELECT 'products', business_id, environment, (created_at AT TIME ZONE 'UTC')::date,
  list_status('products', status, deleted_at), 0, count(*)
FROM products GROUP BY 2, 3, 4, 5
UNION ALL
SELECT 'deliveries', business_id, environment, (created_at AT TIME ZONE 'UTC')::date, status, 0, count(*)
FROM webhook_deliveries GROUP BY 2, 3, 4, 5;

INSERT INTO paid_volume_days (business_id, environment, day, slot, n, amount)
SELECT business_id, environment, (paid_at AT TIME ZONE 'UTC')::date, 0, count(*), sum(coalesce(amount_paid, 0))
FROM payment_intents WHERE paid_at IS NOT NULL GROUP BY 1, 2, 3;
