-- The compliance record (issue 21): every change to a business's data and every read of a person's
-- data, one entry each, written in the transaction of what it records. Entries carry ids and
-- hashes, never personal data, so they outlive a purge. The entries of a business form a hash
-- chain (domain/audit-chain.ts): each entry's hash covers its fields and the hash before it, and
-- audit_heads holds the last seq and hash, so a changed, removed, reordered or cut-off entry is
-- found by `vouch audit verify`. No foreign keys: the log outlives what it names.
CREATE TABLE audit_log (
  business_id  uuid        NOT NULL,
  seq          bigint      NOT NULL,
  id           uuid        NOT NULL UNIQUE,
  occurred_at  timestamptz NOT NULL,
  actor_type   text        NOT NULL,
  actor_id     text        NOT NULL,
  run_id       text,
  request_id   text,
  action       text        NOT NULL,
  entity_id    uuid,
  subject_type text,
  subject_id   text,
  -- canonical JSON (RFC 8785) of ids and hashes, kept as text so the hashed bytes are the stored bytes
  details      text        NOT NULL,
  outcome      text        NOT NULL,
  prev_hash    text        NOT NULL,
  hash         text        NOT NULL,
  PRIMARY KEY (business_id, seq)
);
CREATE INDEX audit_log_entity ON audit_log (business_id, entity_id, seq) WHERE entity_id IS NOT NULL;
CREATE INDEX audit_log_time ON audit_log (business_id, occurred_at);

CREATE TABLE audit_heads (
  business_id uuid   PRIMARY KEY,
  seq         bigint NOT NULL,
  hash        text   NOT NULL
);

-- Append-only: the service never changes or removes an entry. Whoever wants to must first switch
-- this trigger off (a superuser's act), and the chain shows what they did.
CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'audit_log is append-only' USING ERRCODE = 'insufficient_privilege';
END $$;
CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON audit_log
  FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only();
