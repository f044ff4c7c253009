-- Workers LISTEN on webhook_wake. A statement that adds deliveries notifies it, so the notice goes
-- out when its transaction commits (never before, and not at all on rollback) and a worker claims
-- them at once instead of at its next poll. Many notices in one transaction arrive as one; a
-- statement that adds none (an event nobody subscribes to) sends none.
CREATE FUNCTION notify_webhook_workers() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM new_rows) THEN
    PERFORM pg_notify('webhook_wake', '');
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER webhook_deliveries_wake AFTER INSERT ON webhook_deliveries
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION notify_webhook_workers();
