-- Retention (issue 55, decision 093): the periodic deletes read only what they delete.
-- A payment request that ended without moving money is deleted PAYMENT_REQUEST_RETENTION_DAYS
-- after it ended; the index holds only those (paid ones, kept for ever, are not in it), so its
-- size is the retention window's unpaid requests. Its statuses are UNPAID_REQUEST_ENDS
-- (db/schema/requests.ts), written as literals by the task so the planner matches the predicate.
CREATE INDEX payment_requests_unpaid_end_idx ON payment_requests (ended_at)
  WHERE status IN ('DECLINED', 'EXPIRED', 'CANCELLED', 'FAILED');
-- A wallet session ends at the latest 12 hours after it was made (walletapp/sessions.ts): the task
-- deletes by creation time. created_at never changes, so the index costs no HOT update of a touch.
CREATE INDEX wallet_sessions_created_idx ON wallet_sessions (created_at);
