-- Universal KYB (interface 2.9, 4.7): a BUSINESS entity's profile, its declared owners (INDIVIDUAL
-- entities, in entity_members), its documents (files) and its submissions, each decided once.
CREATE TABLE kyb_profiles (
  entity_id   uuid PRIMARY KEY REFERENCES entities(id) ON DELETE CASCADE,
  business_id uuid NOT NULL REFERENCES businesses(id) ON DELETE CASCADE,
  profile     jsonb NOT NULL,                          -- the `business` part as last saved
  status      text NOT NULL DEFAULT 'DRAFT',           -- DRAFT | IN_REVIEW | APPROVED | REJECTED
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);

-- What the profile declares of each owner (names, date of birth, nationality, roles) and the
-- client's reference for them; members declared with POST /entity keep these null.
ALTER TABLE entity_members ADD COLUMN external_id text;
ALTER TABLE entity_members ADD COLUMN declared jsonb;
ALTER TABLE entity_members ADD COLUMN position integer NOT NULL DEFAULT 0;

CREATE TABLE kyb_submissions (
  id          uuid PRIMARY KEY,
  business_id uuid NOT NULL REFERENCES businesses(id) ON DELETE CASCADE,
  entity_id   uuid NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
  owners      uuid[] NOT NULL,                         -- the declared owners when submitted
  status      text NOT NULL DEFAULT 'waiting',         -- waiting | decided | expired | superseded
  deadline_at timestamptz NOT NULL,
  decision    text,                                    -- APPROVED | REJECTED, once settled
  event_id    uuid,
  created_at  timestamptz NOT NULL DEFAULT now(),
  settled_at  timestamptz
);
-- at most one open submission per business entity
CREATE UNIQUE INDEX kyb_submissions_open_idx ON kyb_submissions (entity_id) WHERE status = 'waiting';
CREATE INDEX kyb_submissions_owners_idx ON kyb_submissions USING gin (owners) WHERE status = 'waiting';
CREATE INDEX kyb_submissions_entity_idx ON kyb_submissions (entity_id, created_at DESC);

-- an owner's live document of one kind, and a business's documents by slug
CREATE INDEX files_entity_kind_idx ON files (entity_id, slug, document_type) WHERE retired_at IS NULL;
