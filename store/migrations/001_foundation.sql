CREATE TABLE businesses (
  id            uuid PRIMARY KEY,
  name          text NOT NULL,
  bin_sponsored boolean NOT NULL DEFAULT false,
  created_at    timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE api_keys (
  id          uuid PRIMARY KEY,
  business_id uuid NOT NULL REFERENCES businesses(id) ON DELETE CASCADE,
  key_hash    text NOT NULL UNIQUE,
  key_prefix  text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  revoked_at  timestamptz
);

CREATE TABLE entities (
  id          uuid PRIMARY KEY,
  business_id uuid NOT NULL REFERENCES businesses(id) ON DELETE CASCADE,
  external_id text NOT NULL,
  type        text NOT NULL CHECK (type IN ('INDIVIDUAL', 'BUSINESS')),
  verified_by text,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT entities_business_external_id_key UNIQUE (business_id, external_id)
);
CREATE INDEX entities_business_created_idx ON entities (business_id, created_at, id);

CREATE TABLE entity_requirements (
  id               uuid PRIMARY KEY,
  entity_id        uuid NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
  requirement_slug text NOT NULL,
  value            jsonb NOT NULL,
  status           text NOT NULL DEFAULT 'PENDING',
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX entity_requirements_entity_idx ON entity_requirements (entity_id);

CREATE TABLE entity_features (
  entity_id  uuid NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
  feature_id uuid NOT NULL,
  enabled_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (entity_id, feature_id)
);

-- Fixed one-second windows of request counts, shared by every API process.
CREATE UNLOGGED TABLE rate_limit_windows (
  bucket       text NOT NULL,
  window_start bigint NOT NULL,
  count        integer NOT NULL,
  PRIMARY KEY (bucket, window_start)
);
