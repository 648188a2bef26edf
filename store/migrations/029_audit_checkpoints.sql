-- Signed checkpoints of each business's audit chain (issue 37). The chain proves itself only up to
-- its head, and the head is in the same database as the entries: whoever holds the service's own
-- credentials could cut entries and move the head back. A checkpoint — a head's seq and hash, when,
-- signed with an Ed25519 key the database does not hold (domain/audit-checkpoint.ts) — is written to
-- the file store (S3 with Object Lock where configured), where the database's role cannot reach,
-- and listed here for GET /audit-log/checkpoints. `vouch audit verify` holds the chain against every
-- checkpoint it finds in either place, each checked by its signature; a row whose object is gone
-- from the store is reported too. Append-only, as the log is.
CREATE TABLE audit_checkpoints (
  business_id uuid        NOT NULL,
  seq         bigint      NOT NULL,
  hash        text        NOT NULL,
  at          text        NOT NULL,   -- ISO 8601 as signed (the text signed is the text stored)
  key_id      text        NOT NULL,
  signature   text        NOT NULL,
  object_key  text        NOT NULL UNIQUE,
  written_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (business_id, seq, at)
);
CREATE TRIGGER audit_checkpoints_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON audit_checkpoints
  FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only();
-- the entries that name an entity as their subject and another as their entity (a member's link to
-- its business entity): trace and evidence read them with the entity's own, within the business
CREATE INDEX audit_log_member_subject ON audit_log (business_id, subject_id, seq)
  WHERE subject_type = 'entity' AND entity_id::text IS DISTINCT FROM subject_id;
