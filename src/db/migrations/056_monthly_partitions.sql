-- The four tables that grow with traffic become monthly RANGE partitions (issue 55, decision 091):
-- ledger_postings, balance_transactions and events by created_at, webhook_attempts by started_at.
-- Each gets one partition per UTC month (<table>_yYYYYmMM) from its oldest row's month to two
-- months ahead, and a DEFAULT partition that catches a row no month holds yet (the worker's
-- partitions-ahead task moves such rows into their month once it creates it). Every row is
-- copied; ids, sequences, indexes, triggers and constraints are the same as before, except that
-- a primary key must include the partition key (the ids stay unique: ledger ids come from one
-- sequence, the others are random) and webhook_deliveries.event_id no longer references events
-- (decision 092).

-- Writers wait for the copy: a row committed after a table's INSERT ... SELECT read it would be
-- dropped with the old table (a process of the previous release still running during a rolling
-- start). SHARE ROW EXCLUSIVE lets reads go on and stops every write until this commits.
LOCK TABLE ledger_postings, balance_transactions, events, webhook_attempts, webhook_deliveries
  IN SHARE ROW EXCLUSIVE MODE;

-- A posting may be moved out of the default partition into its month (partitions.ts): the only
-- delete the immutability trigger lets through, and only in a transaction that says so.
CREATE OR REPLACE FUNCTION ledger_postings_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' AND current_setting('devapi.moving_partition_rows', true) = 'on'
    AND TG_TABLE_NAME = 'ledger_postings_default' THEN
    RETURN OLD;
  END IF;
  RAISE EXCEPTION 'ledger postings are immutable';
END $$;

-- Creates `parent`'s month partitions from the month of its oldest row (or this month) to two
-- months ahead, and its default partition. Used by this migration only; the worker's task runs
-- its own statements under a lock timeout (src/db/partitions.ts).
CREATE OR REPLACE FUNCTION pg_temp.partition_by_month(parent text, source text, key text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  oldest timestamptz;
  month date;
BEGIN
  EXECUTE format('SELECT min(%I) FROM %I', key, source) INTO oldest;
  month := date_trunc('month', least(coalesce(oldest, now()), now()) AT TIME ZONE 'UTC')::date;
  WHILE month <= (date_trunc('month', now() AT TIME ZONE 'UTC') + interval '2 months')::date LOOP
    EXECUTE format(
      'CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)',
      format('%s_y%sm%s', parent, to_char(month, 'YYYY'), to_char(month, 'MM')),
      parent || '_partitioned',
      month::text || ' 00:00:00+00',
      (month + interval '1 month')::date::text || ' 00:00:00+00');
    month := (month + interval '1 month')::date;
  END LOOP;
  EXECUTE format('CREATE TABLE %I PARTITION OF %I DEFAULT', parent || '_default', parent || '_partitioned');
END $$;

-- ledger_postings ------------------------------------------------------------------------------
CREATE TABLE ledger_postings_partitioned (
  id bigint GENERATED ALWAYS AS IDENTITY,
  transaction_id text NOT NULL,
  account_id text NOT NULL,
  amount bigint NOT NULL CONSTRAINT ledger_postings_amount_check CHECK (amount <> 0),
  kind text NOT NULL CONSTRAINT ledger_postings_kind_check CHECK (kind IN ('payment', 'refund', 'credit', 'payout')),
  reference text NOT NULL,
  created_at timestamptz NOT NULL
) PARTITION BY RANGE (created_at);
SELECT pg_temp.partition_by_month('ledger_postings', 'ledger_postings', 'created_at');
INSERT INTO ledger_postings_partitioned OVERRIDING SYSTEM VALUE
  SELECT id, transaction_id, account_id, amount, kind, reference, created_at FROM ledger_postings;
-- The next id follows the old identity's last one, used or not.
SELECT setval(pg_get_serial_sequence('ledger_postings_partitioned', 'id'), last_value, is_called)
  FROM ledger_postings_id_seq;
DROP TABLE ledger_postings;
ALTER TABLE ledger_postings_partitioned RENAME TO ledger_postings;
ALTER SEQUENCE ledger_postings_partitioned_id_seq RENAME TO ledger_postings_id_seq;
ALTER TABLE ledger_postings ADD CONSTRAINT ledger_postings_pkey PRIMARY KEY (id, created_at);
CREATE INDEX ledger_postings_account_idx ON ledger_postings (account_id, id);
CREATE INDEX ledger_postings_transaction_idx ON ledger_postings (transaction_id);
CREATE TRIGGER ledger_postings_no_change BEFORE UPDATE OR DELETE ON ledger_postings
  FOR EACH ROW EXECUTE FUNCTION ledger_postings_immutable();

-- balance_transactions -------------------------------------------------------------------------
CREATE TABLE balance_transactions_partitioned (
  id text NOT NULL,
  business_id text NOT NULL,
  environment text NOT NULL CONSTRAINT balance_transactions_environment_check CHECK (environment IN ('test', 'live')),
  type text NOT NULL,
  amount bigint NOT NULL,
  fee bigint NOT NULL,
  net bigint NOT NULL,
  source_reference text NOT NULL,
  source_kind text NOT NULL
    CONSTRAINT balance_transactions_source_kind_check CHECK (source_kind IN ('payment_intent', 'order', 'payout')),
  ledger_transaction_id text NOT NULL,
  balance_after bigint,
  created_at timestamptz NOT NULL,
  settled_by text,
  seller_id text,
  applied_order bigint NOT NULL DEFAULT nextval('balance_transactions_applied_order_seq'),
  detail jsonb NOT NULL DEFAULT '{}'::jsonb,
  CONSTRAINT balance_transactions_check CHECK (amount - fee = net)
) PARTITION BY RANGE (created_at);
SELECT pg_temp.partition_by_month('balance_transactions', 'balance_transactions', 'created_at');
-- Before the list-count trigger exists: these rows are counted already.
INSERT INTO balance_transactions_partitioned
  SELECT id, business_id, environment, type, amount, fee, net, source_reference, source_kind, ledger_transaction_id,
    balance_after, created_at, settled_by, seller_id, applied_order, detail
  FROM balance_transactions;
-- The sequence would go with the table that owns it.
ALTER SEQUENCE balance_transactions_applied_order_seq OWNED BY balance_transactions_partitioned.applied_order;
DROP TABLE balance_transactions;
ALTER TABLE balance_transactions_partitioned RENAME TO balance_transactions;
ALTER TABLE balance_transactions ADD CONSTRAINT balance_transactions_pkey PRIMARY KEY (id, created_at);
ALTER TABLE balance_transactions ADD CONSTRAINT balance_transactions_seller_id_fkey
  FOREIGN KEY (seller_id) REFERENCES sellers (id);
CREATE INDEX balance_transactions_applied_idx ON balance_transactions (business_id, environment, applied_order)
  WHERE seller_id IS NULL;
CREATE INDEX balance_transactions_list_idx ON balance_transactions (business_id, environment, created_at DESC, id DESC);
CREATE INDEX balance_transactions_seller_applied_idx ON balance_transactions (seller_id, applied_order)
  WHERE seller_id IS NOT NULL;
CREATE INDEX balance_transactions_seller_idx ON balance_transactions (seller_id, created_at DESC, id DESC)
  WHERE seller_id IS NOT NULL;
CREATE INDEX balance_transactions_settled_idx ON balance_transactions (settled_by, created_at DESC, id DESC)
  WHERE settled_by IS NOT NULL;
CREATE INDEX balance_transactions_source_idx
  ON balance_transactions (business_id, environment, source_reference, created_at DESC, id DESC);
CREATE INDEX balance_transactions_type_idx ON balance_transactions (business_id, environment, type, created_at DESC, id DESC);
CREATE INDEX balance_transactions_unsettled_idx ON balance_transactions (business_id, environment)
  WHERE settled_by IS NULL AND source_kind <> 'payout';
CREATE TRIGGER balance_transactions_counted_insert AFTER INSERT ON balance_transactions
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION count_balance_transactions();

-- events ---------------------------------------------------------------------------------------
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_event_id_fkey;
CREATE TABLE events_partitioned (
  id text NOT NULL,
  business_id text NOT NULL,
  environment text NOT NULL CONSTRAINT events_environment_check CHECK (environment IN ('test', 'live')),
  event text NOT NULL,
  subject text NOT NULL,
  body text NOT NULL,
  created_at timestamptz NOT NULL,
  seq bigint GENERATED ALWAYS AS IDENTITY,
  sequence bigint NOT NULL,
  txid bigint NOT NULL DEFAULT (pg_current_xact_id()::text)::bigint
) PARTITION BY RANGE (created_at);
SELECT pg_temp.partition_by_month('events', 'events', 'created_at');
INSERT INTO events_partitioned OVERRIDING SYSTEM VALUE
  SELECT id, business_id, environment, event, subject, body, created_at, seq, sequence, txid FROM events;
SELECT setval(pg_get_serial_sequence('events_partitioned', 'seq'), last_value, is_called) FROM events_seq_seq;
DROP TABLE events;
ALTER TABLE events_partitioned RENAME TO events;
ALTER SEQUENCE events_partitioned_seq_seq RENAME TO events_seq_seq;
ALTER TABLE events ADD CONSTRAINT events_pkey PRIMARY KEY (id, created_at);
ALTER TABLE events ADD CONSTRAINT events_business_id_fkey FOREIGN KEY (business_id) REFERENCES businesses (id);
CREATE INDEX events_business_idx ON events (business_id, environment, created_at);
CREATE INDEX events_feed_idx ON events (business_id, environment, txid, seq);
CREATE INDEX events_recent_idx ON events (business_id, environment, seq);
-- Not rebuilt: events_subject_idx (subject, created_at). Every lookup by subject is served by
-- (subject, seq), and the growth bench measured it at 155 MB per 5 million postings, never read.
CREATE INDEX events_subject_seq_idx ON events (subject, seq);

-- webhook_attempts -----------------------------------------------------------------------------
CREATE TABLE webhook_attempts_partitioned (
  delivery_id text NOT NULL,
  attempt integer NOT NULL,
  started_at timestamptz NOT NULL,
  status_code integer,
  duration_ms integer,
  error text,
  response_body text,
  error_class text,
  request_headers jsonb,
  response_headers jsonb
) PARTITION BY RANGE (started_at);
SELECT pg_temp.partition_by_month('webhook_attempts', 'webhook_attempts', 'started_at');
INSERT INTO webhook_attempts_partitioned SELECT delivery_id, attempt, started_at, status_code, duration_ms, error,
  response_body, error_class, request_headers, response_headers FROM webhook_attempts;
DROP TABLE webhook_attempts;
ALTER TABLE webhook_attempts_partitioned RENAME TO webhook_attempts;
-- (delivery_id, attempt) stays unique: a delivery's attempt number is taken from its own row,
-- under the claim's row lock (webhooks/delivery/claim.ts).
ALTER TABLE webhook_attempts ADD CONSTRAINT webhook_attempts_pkey PRIMARY KEY (delivery_id, attempt, started_at);
ALTER TABLE webhook_attempts ADD CONSTRAINT webhook_attempts_delivery_id_fkey
  FOREIGN KEY (delivery_id) REFERENCES webhook_deliveries (id);

-- What an archived month of money records held (admin partitions archive): `ledger check` adds
-- these totals once the month's partition is detached. owner_id is the ledger account
-- (ledger_postings) or the business (balance_transactions); total is the sum of amount or of net.
CREATE TABLE archived_month_totals (
  table_name text NOT NULL CHECK (table_name IN ('ledger_postings', 'balance_transactions')),
  month date NOT NULL,
  owner_id text NOT NULL,
  environment text NOT NULL CHECK (environment IN ('test', 'live')),
  rows bigint NOT NULL,
  total bigint NOT NULL,
  archived_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (table_name, month, owner_id, environment)
);
