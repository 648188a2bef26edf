-- Back within a minute (issue 38, item 4): a subscription failing for over a minute is probed — one
-- of its waiting deliveries sent early — at most once per interval, fleet-wide. next_probe_at is when
-- it may be probed next (NULL: at once, once it qualifies); cleared when it is healthy again.
ALTER TABLE notification_subscriptions ADD COLUMN next_probe_at timestamptz;
