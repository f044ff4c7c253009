-- A periodic task is leased to the worker running it (issue 36, item 8): moving next_run_at alone
-- let a run longer than the period overlap the next one in another worker. The claim takes the
-- lease in the same UPDATE, the run renews it, its end clears it; a dead worker's lease lapses.
ALTER TABLE periodic_tasks
  ADD COLUMN locked_by    text,
  ADD COLUMN locked_until timestamptz;
