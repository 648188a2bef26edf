-- Endpoints that fail for days (issue 23): each subscription's health. failing_since is the start
-- of its current run of failed attempts (NULL while its last attempt succeeded); disabled_at is set
-- once it has failed continuously for WEBHOOK_DISABLE_AFTER_MS, and cleared by a success or by
-- POST /notification/{id}/enable. A disabled subscription's pending deliveries are kept with
-- mode 'held' (neither the dispatcher nor a retry workflow attempts them) until it is enabled.
ALTER TABLE notification_subscriptions ADD COLUMN failing_since timestamptz;
ALTER TABLE notification_subscriptions ADD COLUMN disabled_at timestamptz;
-- The metrics gauge counts the unhealthy ones without reading every subscription.
CREATE INDEX notification_subscriptions_unhealthy_idx ON notification_subscriptions (failing_since)
  WHERE failing_since IS NOT NULL OR disabled_at IS NOT NULL;
-- A delivery sent early because its subscription answered again (or was enabled) remembers the slot
-- it was waiting for: if that attempt fails too, it goes back to that slot, and its place in the
-- retry schedule is not spent (an early attempt is a probe).
ALTER TABLE webhook_deliveries ADD COLUMN resumed_slot timestamptz;
-- Holding, resuming and enabling read a subscription's pending deliveries only, not its history;
-- the reconciler finds held deliveries without reading the others.
CREATE INDEX webhook_deliveries_pending_idx ON webhook_deliveries (subscription_id) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_held_idx ON webhook_deliveries (subscription_id) WHERE status = 'pending' AND mode = 'held';
