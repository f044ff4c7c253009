-- Payouts are sent in turns, one of each business and environment per turn (decision 067): the
-- sender finds the queues by a skip scan of this index, one probe per queue, and reads each
-- queue's oldest payouts from it. It replaces the one oldest-first queue.
DROP INDEX IF EXISTS payouts_pending_idx;
CREATE INDEX payouts_pending_queue_idx ON payouts (business_id, environment, created_at, reference)
  WHERE status = 'PENDING';
-- The sender is a loop of each worker now, no longer a periodic task.
DELETE FROM periodic_tasks WHERE name = 'payout-send';
