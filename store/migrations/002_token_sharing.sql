-- Token-sharing imports: batches and their rows, sync requests, KYC accounts, events.

ALTER TABLE entities ADD COLUMN card_processor_public_token text;
CREATE UNIQUE INDEX entities_card_processor_token_key ON entities (business_id, card_processor_public_token)
  WHERE card_processor_public_token IS NOT NULL;

-- One per applicant imported for an entity (a renewal shares again: a new account row).
CREATE TABLE kyc_accounts (
  id                 uuid PRIMARY KEY,
  entity_id          uuid NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
  provider           text NOT NULL,
  applicant_id       text NOT NULL,
  level_name         text,
  source             text NOT NULL,            -- 'batch' | 'sync'
  source_ref         text NOT NULL,            -- batch row key or sync request id
  decision           text NOT NULL,            -- 'APPROVED' | 'REJECTED'
  reject_labels      jsonb NOT NULL DEFAULT '[]',
  review_reject_type text,
  moderation_comment text,
  created_at         timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT kyc_accounts_provider_applicant_key UNIQUE (provider, applicant_id),
  CONSTRAINT kyc_accounts_source_key UNIQUE (source, source_ref)
);
CREATE INDEX kyc_accounts_entity_idx ON kyc_accounts (entity_id, created_at);

CREATE TABLE import_batches (
  id                 uuid PRIMARY KEY,
  business_id        uuid NOT NULL REFERENCES businesses(id) ON DELETE CASCADE,
  provider           text NOT NULL,
  idempotency_key    text NOT NULL,
  content_sha256     text NOT NULL,
  file_name          text,
  status             text NOT NULL DEFAULT 'pending',
  total_records      integer NOT NULL,
  successful_records integer NOT NULL DEFAULT 0,
  failed_records     integer NOT NULL DEFAULT 0,
  failure_reason     text,
  run                integer NOT NULL DEFAULT 1,   -- bumped by each retry of failed rows
  created_at         timestamptz NOT NULL DEFAULT now(),
  updated_at         timestamptz NOT NULL DEFAULT now(),
  started_at         timestamptz,
  completed_at       timestamptz,
  canceled_at        timestamptz,
  CONSTRAINT import_batches_idempotency_key UNIQUE (business_id, idempotency_key),
  CONSTRAINT import_batches_content_key UNIQUE (business_id, content_sha256)
);

CREATE TABLE import_records (
  batch_id                    uuid NOT NULL REFERENCES import_batches(id) ON DELETE CASCADE,
  row_number                  integer NOT NULL,
  external_id                 text NOT NULL,
  share_token                 text NOT NULL,
  applicant_level             text,
  card_processor_public_token text,
  status                      text NOT NULL DEFAULT 'pending',   -- pending | succeeded | failed
  entity_id                   uuid,
  applicant_id                text,
  decision                    jsonb,
  error_category              text,
  error_message               text,
  retryable                   boolean,
  updated_at                  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (batch_id, row_number)
);
CREATE INDEX import_records_pending_idx ON import_records (batch_id, row_number) WHERE status = 'pending';

CREATE TABLE sync_imports (
  request_id                  uuid PRIMARY KEY,
  business_id                 uuid NOT NULL REFERENCES businesses(id) ON DELETE CASCADE,
  external_id                 text NOT NULL,
  share_token                 text NOT NULL,
  card_processor_public_token text,
  status                      text NOT NULL DEFAULT 'pending',   -- pending | succeeded | failed
  entity_id                   uuid,
  applicant_id                text,
  decision                    jsonb,
  error_category              text,
  error_message               text,
  retryable                   boolean,
  created_at                  timestamptz NOT NULL DEFAULT now(),
  updated_at                  timestamptz NOT NULL DEFAULT now()
);

-- Events for the webhook pipeline; source_key makes recording idempotent under activity retries.
CREATE TABLE events (
  id          uuid PRIMARY KEY,
  business_id uuid NOT NULL REFERENCES businesses(id) ON DELETE CASCADE,
  entity_id   uuid,
  event_name  text NOT NULL,
  event_type  text NOT NULL,
  payload     jsonb NOT NULL,
  source_key  text NOT NULL UNIQUE,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX events_business_created_idx ON events (business_id, created_at);
