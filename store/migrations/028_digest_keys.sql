-- Digests that cannot be guessed back (issue 37). The audit log named low-entropy values — an
-- externalId, a hold's reason, a requirement's value, a person's data — by their plain SHA-256:
-- after a purge anyone could hash guesses ("SAR-2026-114", a date of birth) and compare. They are
-- now HMAC-SHA256 under a key of the entity's own, kept here (outside the audit tables) and made
-- when its first keyed entry is written. The key goes with the entity's record (a delete, or the
-- purge at the end of its retention): afterwards nothing can tie a guess to an entry, by anyone,
-- the service's own credentials included. Until then whoever holds the key checks the digests —
-- the evidence bundle carries it for the entity it exports.
CREATE TABLE entity_digest_keys (
  entity_id  uuid        PRIMARY KEY REFERENCES entity_records(id) ON DELETE CASCADE,
  key        bytea       NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
