-- Events written by one transaction share a timestamp: a sequence keeps their order.
ALTER TABLE events ADD COLUMN seq bigint GENERATED ALWAYS AS IDENTITY;
CREATE INDEX events_subject_seq_idx ON events (subject, seq);
