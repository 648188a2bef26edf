-- Webhook subscriptions, and the delivery of each event to each matching subscription.

-- The exact bytes delivered for an event: serialized once, identical on every attempt.
ALTER TABLE events ADD COLUMN body text;
UPDATE events SET body = payload::text WHERE body IS NULL;
ALTER TABLE events ALTER COLUMN body SET NOT NULL;
ALTER TABLE events ADD COLUMN dispatched_at timestamptz;
CREATE INDEX events_undispatched_idx ON events (created_at) WHERE dispatched_at IS NULL;

CREATE TABLE notification_subscriptions (
  id          uuid PRIMARY KEY,
  business_id uuid NOT NULL REFERENCES businesses(id) ON DELETE CASCADE,
  channel     text NOT NULL,
  types       text[] NOT NULL,
  url         text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX notification_subscriptions_business_idx ON notification_subscriptions (business_id, created_at);

-- One per (event, subscription). subscription_id has no foreign key: the log outlives a deleted subscription.
CREATE TABLE webhook_deliveries (
  id              uuid PRIMARY KEY,
  event_id        uuid NOT NULL REFERENCES events(id) ON DELETE CASCADE,
  subscription_id uuid NOT NULL,
  business_id     uuid NOT NULL REFERENCES businesses(id) ON DELETE CASCADE,
  status          text NOT NULL DEFAULT 'pending',   -- pending | delivered | failed | canceled
  attempts        integer NOT NULL DEFAULT 0,
  run             integer NOT NULL DEFAULT 1,        -- bumped by each redelivery
  last_error      text,
  delivered_at    timestamptz,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT webhook_deliveries_event_subscription_key UNIQUE (event_id, subscription_id)
);
CREATE INDEX webhook_deliveries_subscription_idx ON webhook_deliveries (subscription_id, created_at);

CREATE TABLE webhook_attempts (
  id           uuid PRIMARY KEY,
  delivery_id  uuid NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
  attempt      integer NOT NULL,
  url          text NOT NULL,
  key_id       text,
  started_at   timestamptz NOT NULL,
  latency_ms   integer,
  http_status  integer,
  error        text,
  succeeded    boolean NOT NULL
);
CREATE INDEX webhook_attempts_delivery_idx ON webhook_attempts (delivery_id, started_at);
