-- Webhook delivery pipeline, second design: an event's deliveries are created in the transaction
-- that records the event (no separate dispatch step that a crash could lose); first attempts are
-- claimed in batches by dispatcher activities; a delivery that must wait for a retry is handed to a
-- workflow of its own.
--   mode            'dispatcher': due for an attempt by the dispatcher at next_attempt_at
--                   'workflow':   a retry workflow owns it and attempts it at next_attempt_at
--   lease_until     a dispatcher's claim; another may claim the delivery only once it has passed
--   run_attempts    attempts in the current run (a redelivery starts a new run at 0); the retry
--                   schedule is indexed by it, while `attempts` counts every attempt ever made
ALTER TABLE webhook_deliveries ADD COLUMN mode text NOT NULL DEFAULT 'dispatcher';
ALTER TABLE webhook_deliveries ADD COLUMN next_attempt_at timestamptz NOT NULL DEFAULT now();
ALTER TABLE webhook_deliveries ADD COLUMN lease_until timestamptz;
ALTER TABLE webhook_deliveries ADD COLUMN run_attempts integer NOT NULL DEFAULT 0;
UPDATE webhook_deliveries SET run_attempts = attempts;
-- Pending deliveries of the earlier design each had a workflow of their own.
UPDATE webhook_deliveries SET mode = 'workflow' WHERE status = 'pending';

CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'pending' AND mode = 'dispatcher';
CREATE INDEX webhook_deliveries_waiting_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'pending' AND mode = 'workflow';

-- Events the earlier design had recorded but not yet dispatched get their deliveries now.
INSERT INTO webhook_deliveries (id, event_id, subscription_id, business_id)
SELECT gen_random_uuid(), e.id, s.id, s.business_id
  FROM events e JOIN notification_subscriptions s ON s.business_id = e.business_id AND e.event_type = ANY (s.types)
 WHERE e.dispatched_at IS NULL
ON CONFLICT (event_id, subscription_id) DO NOTHING;
DROP INDEX IF EXISTS events_undispatched_idx;
ALTER TABLE events DROP COLUMN dispatched_at;

-- Sync imports: an optional Idempotency-Key and the hash of the request it was first used with.
ALTER TABLE sync_imports ADD COLUMN idempotency_key text;
ALTER TABLE sync_imports ADD COLUMN request_sha256 text;
CREATE UNIQUE INDEX sync_imports_idempotency_key ON sync_imports (business_id, idempotency_key) WHERE idempotency_key IS NOT NULL;

-- Import requests sent to the provider for a record (counted before each is sent): after "token
-- already used", only a record with an earlier attempt of ours can have used it itself.
ALTER TABLE import_records ADD COLUMN import_attempts integer NOT NULL DEFAULT 0;
ALTER TABLE sync_imports ADD COLUMN import_attempts integer NOT NULL DEFAULT 0;

-- Batches the reconciler looks at: unfinished ones.
CREATE INDEX import_batches_unfinished_idx ON import_batches (updated_at) WHERE status IN ('pending', 'in_progress');
