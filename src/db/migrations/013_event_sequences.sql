-- The Events API and per-object ordering.
-- `sequence` numbers the events of one object (intent, order, product, endpoint) from 1, assigned by
-- the statement that writes the event: the counter row of the object is bumped in the event's own
-- transaction, so racing writers of one object queue on that row and never share a number.
CREATE TABLE event_sequences (
  business_id    text NOT NULL,
  environment    text NOT NULL,
  subject        text NOT NULL,
  last_sequence  bigint NOT NULL,
  PRIMARY KEY (business_id, environment, subject)
);

ALTER TABLE events ADD COLUMN sequence bigint;
UPDATE events e SET sequence = numbered.n
FROM (
  SELECT id, row_number() OVER (PARTITION BY business_id, environment, subject ORDER BY seq) AS n FROM events
) AS numbered
WHERE numbered.id = e.id;
INSERT INTO event_sequences (business_id, environment, subject, last_sequence)
SELECT business_id, environment, subject, max(sequence) FROM events GROUP BY business_id, environment, subject;
ALTER TABLE events ALTER COLUMN sequence SET NOT NULL;

-- The writing transaction's id. A polling reader (`?after=`) reads only events of transactions
-- older than every transaction still running, in (txid, seq) order: an event committed late by a
-- long transaction can never land behind a cursor that already moved past it.
ALTER TABLE events ADD COLUMN txid bigint NOT NULL DEFAULT 0;
ALTER TABLE events ALTER COLUMN txid SET DEFAULT (pg_current_xact_id()::text::bigint);

CREATE INDEX events_feed_idx ON events (business_id, environment, txid, seq);
CREATE INDEX events_recent_idx ON events (business_id, environment, seq);
