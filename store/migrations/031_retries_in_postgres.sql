-- Retries cost Temporal nothing per delivery (issue 38, item 0). A delivery whose attempt failed no
-- longer gets a workflow of its own: it waits in this table for its next slot, and the dispatchers
-- that make first attempts take it up when it is due (store/deliveries.ts promoteDueDeliveries, then
-- the same fair claim as a first attempt).
--   mode 'waiting':  its attempt failed; due again at next_attempt_at (the retry schedule)
--   mode 'workflow': an earlier release's retry workflow owns it (kept only for runs started before
--                    this release; the reconciler hands such a delivery to the dispatchers once it is
--                    overdue, and a retry workflow ends at its next step when its delivery is not
--                    'workflow')
-- As a new run (keeping its place in the schedule): a retry workflow still running owns no more
-- than its old run, so it sends nothing more, and an attempt of it under way moves nothing.
UPDATE webhook_deliveries SET mode = 'waiting', run = run + 1, updated_at = now() WHERE status = 'pending' AND mode = 'workflow';
DROP INDEX webhook_deliveries_waiting_idx;
-- Promotion reads the due ones in order of their slot; what waits costs nothing until it is due.
CREATE INDEX webhook_deliveries_waiting_idx ON webhook_deliveries (next_attempt_at)
  WHERE status = 'pending' AND mode IN ('waiting', 'workflow');
