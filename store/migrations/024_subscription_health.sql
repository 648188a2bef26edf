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
