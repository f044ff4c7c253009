-- The claim of an idempotency key (src/http/idempotency.ts): the key's transaction-scoped lock
-- first, then its committed row, read after the lock with a snapshot of its own. A VOLATILE
-- function's statements each take a fresh snapshot under READ COMMITTED, so a request that
-- committed the key (and so released the lock) before this call took the lock is always seen.
-- Read in the same plain statement as the lock, the row came from the statement's snapshot, taken
-- before the lock: a commit in between was missed and the write ran against its effects.
-- `lock_name` is the scope and key as one text, hashed to the 64-bit lock id.
CREATE FUNCTION idempotency_claim(lock_name text, business text, env text, key_text text, retention_hours int)
RETURNS TABLE (
  held boolean,
  existing_id bigint,
  fingerprint text,
  response_status int,
  response_body text,
  expired boolean
) LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
BEGIN
  IF NOT pg_try_advisory_xact_lock(hashtextextended(lock_name, 0)) THEN
    RETURN QUERY SELECT false, NULL::bigint, NULL::text, NULL::int, NULL::text, NULL::boolean;
    RETURN;
  END IF;
  RETURN QUERY
    SELECT true, k.id, k.fingerprint, k.response_status, k.response_body,
      k.created_at < now() - make_interval(hours => retention_hours)
    FROM (SELECT 1) AS one
    LEFT JOIN idempotency_keys AS k
      ON k.business_id = business AND k.environment = env AND k.idempotency_key = key_text;
END $$;
