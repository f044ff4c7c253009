-- List totals that do not grow with a business's history (issue 55, decision 096). The events
-- list counted every readable event of the business for its `total`, and the delivery log did for
-- every key that may not read every event (a default secret key cannot read the api_key events):
-- both now sum counts kept like the other lists' (018, 020), in the statement that writes the row.
--
-- 'events': per business, environment, UTC creation day and event name (the name stands for the
-- status). A dropped events month fires no DELETE trigger: the retention task deletes the month's
-- counts in the transaction that drops it (db/partitions.ts).
--
-- 'delivery events': the webhook deliveries per status and event name, the status written as
-- 'STATUS event.name' (delivery_event_count_key): a key that reads some events sums the pairs of
-- the statuses shown and the events it reads. 'deliveries' (per status alone) stays for the keys
-- that read every event, whose pages also show deliveries of names no longer in the catalog.
CREATE FUNCTION count_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO list_counts (list, business_id, environment, day, status, slot, n)
    SELECT 'events', business_id, environment, (created_at AT TIME ZONE 'UTC')::date, event, pg_backend_pid(), count(*)
    FROM new_rows GROUP BY 2, 3, 4, 5
    ON CONFLICT (list, business_id, environment, day, status, slot) DO UPDATE SET n = list_counts.n + excluded.n;
  ELSE
    INSERT INTO list_counts (list, business_id, environment, day, status, slot, n)
    SELECT 'events', business_id, environment, (created_at AT TIME ZONE 'UTC')::date, event, pg_backend_pid(), -count(*)
    FROM old_rows GROUP BY 2, 3, 4, 5
    ON CONFLICT (list, business_id, environment, day, status, slot) DO UPDATE SET n = list_counts.n + excluded.n;
  END IF;
  RETURN NULL;
END $$;

-- On the partitioned parent, as balance_transactions' (056): it fires for rows of every partition.
CREATE TRIGGER events_counted_insert AFTER INSERT ON events
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION count_events();
CREATE TRIGGER events_counted_delete AFTER DELETE ON events
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION count_events();

CREATE FUNCTION delivery_event_count_key(status text, event text) RETURNS text
  LANGUAGE sql IMMUTABLE AS $$ SELECT status || ' ' || event $$;

-- Inserts, deletes and status changes of one statement: every row taken off the count of its old
-- status and added to its new one (unchanged rows cancel out, as in 020).
CREATE FUNCTION count_delivery_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO list_counts (list, business_id, environment, day, status, slot, n)
    SELECT 'delivery events', business_id, environment, (created_at AT TIME ZONE 'UTC')::date,
      delivery_event_count_key(status, event), pg_backend_pid(), count(*)
    FROM new_rows GROUP BY 2, 3, 4, 5
    ON CONFLICT (list, business_id, environment, day, status, slot) DO UPDATE SET n = list_counts.n + excluded.n;
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO list_counts (list, business_id, environment, day, status, slot, n)
    SELECT 'delivery events', business_id, environment, (created_at AT TIME ZONE 'UTC')::date,
      delivery_event_count_key(status, event), pg_backend_pid(), -count(*)
    FROM old_rows GROUP BY 2, 3, 4, 5
    ON CONFLICT (list, business_id, environment, day, status, slot) DO UPDATE SET n = list_counts.n + excluded.n;
  ELSE
    INSERT INTO list_counts (list, business_id, environment, day, status, slot, n)
    SELECT 'delivery events', business_id, environment, day, status, pg_backend_pid(), sum(n)
    FROM (
      SELECT business_id, environment, (created_at AT TIME ZONE 'UTC')::date AS day,
        delivery_event_count_key(status, event) AS status, -1 AS n
      FROM old_rows
      UNION ALL
      SELECT business_id, environment, (created_at AT TIME ZONE 'UTC')::date,
        delivery_event_count_key(status, event), 1
      FROM new_rows
    ) changes
    GROUP BY business_id, environment, day, status
    HAVING sum(n) <> 0
    ON CONFLICT (list, business_id, environment, day, status, slot) DO UPDATE SET n = list_counts.n + excluded.n;
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER webhook_deliveries_event_counted_insert AFTER INSERT ON webhook_deliveries
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION count_delivery_events();
CREATE TRIGGER webhook_deliveries_event_counted_delete AFTER DELETE ON webhook_deliveries
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION count_delivery_events();
CREATE TRIGGER webhook_deliveries_event_counted_changes AFTER UPDATE ON webhook_deliveries
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT
  EXECUTE FUNCTION count_delivery_events();

-- What exists already, counted once.
INSERT INTO list_counts (list, business_id, environment, day, status, slot, n)
SELECT 'events', business_id, environment, (created_at AT TIME ZONE 'UTC')::date, event, 0, count(*)
FROM events GROUP BY 2, 3, 4, 5
UNION ALL
SELECT 'delivery events', business_id, environment, (created_at AT TIME ZONE 'UTC')::date,
  delivery_event_count_key(status, event), 0, count(*)
FROM webhook_deliveries GROUP BY 2, 3, 4, 5;
