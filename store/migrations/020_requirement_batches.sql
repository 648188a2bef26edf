-- Batch requirement submissions (interface v1.1.0): one upload of JSON Lines records, each naming an
-- entity (or a member of a business entity), a requirement slug and its value. The batch's counters
-- are counted from its records when read (no row every record's transaction would have to update).
CREATE TABLE requirement_batches (
  id                 uuid PRIMARY KEY,
  business_id        uuid NOT NULL REFERENCES businesses(id) ON DELETE CASCADE,
  idempotency_key    text NOT NULL,
  content_sha256     text NOT NULL,
  file_name          text,
  status             text NOT NULL DEFAULT 'pending',   -- pending | in_progress | completed | failed | canceled
  total_records      integer NOT NULL,
  failure_reason     text,
  run                integer NOT NULL DEFAULT 1,        -- bumped by each retry of failed records
  created_at         timestamptz NOT NULL DEFAULT now(),
  updated_at         timestamptz NOT NULL DEFAULT now(),
  started_at         timestamptz,
  completed_at       timestamptz,
  canceled_at        timestamptz,
  CONSTRAINT requirement_batches_idempotency_key UNIQUE (business_id, idempotency_key),
  CONSTRAINT requirement_batches_content_key UNIQUE (business_id, content_sha256)
);

CREATE TABLE requirement_batch_records (
  batch_id         uuid NOT NULL REFERENCES requirement_batches(id) ON DELETE CASCADE,
  row_number       integer NOT NULL,                  -- the line of the file (1-based)
  -- the record as sent (echoed in summary.errors and the failed-records CSV)
  given_entity_id  text,
  external_id      text,
  member_id        text,
  requirement_slug text,
  -- the value as JSON text: kept until the record is handled (then it lives in entity_requirements)
  -- or, for a failed record, until its entity is deleted
  value            text,
  -- the entity the value is about (the member, when memberId names one), resolved at upload
  target_entity_id uuid REFERENCES entity_records(id) ON DELETE SET NULL,
  status           text NOT NULL DEFAULT 'pending',   -- pending | succeeded | failed
  -- what a succeeded record did: decided (its submission was complete), waiting (for an identity document), stored
  outcome          text,
  submission_id    uuid,
  -- whether the submission's workflow must be told (waiting, or a submission that was open before)
  wake             boolean NOT NULL DEFAULT false,
  error_category   text,
  error_message    text,
  error_path       text,
  retryable        boolean,
  updated_at       timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (batch_id, row_number)
);
CREATE INDEX requirement_batch_records_pending_idx ON requirement_batch_records (batch_id, row_number) WHERE status = 'pending';
CREATE INDEX requirement_batch_records_target_idx ON requirement_batch_records (target_entity_id) WHERE target_entity_id IS NOT NULL;

-- What is deleted is gone: an entity's deletion (or purge) takes the values its batch records still
-- hold (failed or not yet handled) with it; the record keeps its row number and its error.
CREATE FUNCTION requirement_batch_records_forget_entity() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE requirement_batch_records SET value = NULL WHERE target_entity_id = OLD.id AND value IS NOT NULL;
  RETURN OLD;
END $$;
CREATE TRIGGER entities_forget_requirement_batch_values BEFORE DELETE ON entity_records
  FOR EACH ROW EXECUTE FUNCTION requirement_batch_records_forget_entity();
