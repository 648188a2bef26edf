-- Fair webhook dispatch (issue 18): a claim visits each subscription with deliveries due for the
-- dispatcher (a skip scan over this index) and reads each at most a few deep, so one business's
-- backlog is one turn among many and the work per claim does not grow with it.
CREATE INDEX webhook_deliveries_dispatch_idx ON webhook_deliveries (subscription_id, next_attempt_at)
  WHERE status = 'pending' AND mode = 'dispatcher';
