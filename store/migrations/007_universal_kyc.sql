-- Universal KYC (interface 2.7, 4.5): a submission opens with the canonical KYC data and waits for
-- an identity document file until its deadline; then it is decided (or decided as incomplete).
CREATE TABLE ukyc_submissions (
  id           uuid PRIMARY KEY,
  business_id  uuid NOT NULL REFERENCES businesses(id) ON DELETE CASCADE,
  entity_id    uuid NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
  status       text NOT NULL DEFAULT 'waiting',      -- waiting | decided | expired
  deadline_at  timestamptz NOT NULL,
  decision     text,                                 -- APPROVED | REJECTED, once settled
  event_id     uuid,
  created_at   timestamptz NOT NULL DEFAULT now(),
  settled_at   timestamptz
);
-- at most one open submission per person
CREATE UNIQUE INDEX ukyc_submissions_open_idx ON ukyc_submissions (entity_id) WHERE status = 'waiting';

-- Uploaded files: metadata only; the bytes are in the file store under storage_key.
CREATE TABLE files (
  id            uuid PRIMARY KEY,
  business_id   uuid NOT NULL REFERENCES businesses(id) ON DELETE CASCADE,
  entity_id     uuid NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
  slug          text NOT NULL,                       -- the requirement (or document kind) it was uploaded for
  document_type text,
  submission_id uuid REFERENCES ukyc_submissions(id) ON DELETE SET NULL,
  file_name     text,
  content_type  text NOT NULL,
  size          integer NOT NULL,
  sha256        text NOT NULL,
  storage_key   text NOT NULL,
  uploaded_at   timestamptz NOT NULL DEFAULT now(),
  retired_at    timestamptz
);
CREATE INDEX files_entity_idx ON files (entity_id, slug, uploaded_at);

-- A submitted requirement may belong to a universal KYC submission, and a FILE requirement names its file.
ALTER TABLE entity_requirements ADD COLUMN submission_id uuid REFERENCES ukyc_submissions(id) ON DELETE SET NULL;
ALTER TABLE entity_requirements ADD COLUMN file_id uuid REFERENCES files(id) ON DELETE CASCADE;
CREATE INDEX entity_requirements_submission_idx ON entity_requirements (submission_id);
