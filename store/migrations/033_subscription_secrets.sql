-- A secret per subscription (issue 38, item 2): the whsec_ secret whose `v1,` HMAC-SHA256 signs each
-- delivery, stored sealed (domain/secret-box.ts: AES-256-GCM under a key derived from the payload
-- codec ring, bound to the subscription's id), never in the clear. A rotation keeps the secret it
-- replaces signing beside the new one until previous_secret_until. Subscriptions made before this
-- release get theirs from the reconciler (within a minute) or at their first GET …/secret.
ALTER TABLE notification_subscriptions
  ADD COLUMN secret_sealed text,
  ADD COLUMN previous_secret_sealed text,
  ADD COLUMN previous_secret_until timestamptz;
CREATE INDEX notification_subscriptions_unsealed_idx ON notification_subscriptions (id) WHERE secret_sealed IS NULL;
