-- Retention and erasure (issue 21). A business may keep the customer-due-diligence record of an
-- entity for a number of years after the relationship ends (AML law: five); then DELETE /entity
-- seals the entity instead of removing it, and a durable timer purges it when the period ends.
--
-- The table of every entity record is entity_records; `entities` is now a view of the ones not
-- sealed, so every query of the product (reads, writes, locks, joins) sees a sealed entity as gone
-- without a line of it changing, and its externalId is free again. Foreign keys follow the table.
-- Only the retention code (store/retention.ts), trace and evidence read entity_records. The view is
-- `SELECT *`, expanded now: a migration that adds a column to entity_records recreates the view.
ALTER TABLE entities RENAME TO entity_records;
ALTER TABLE entity_records ADD COLUMN sealed_at timestamptz, ADD COLUMN purge_after timestamptz;
ALTER TABLE entity_records DROP CONSTRAINT entities_business_external_id_key;
CREATE UNIQUE INDEX entities_business_external_id_key ON entity_records (business_id, external_id) WHERE sealed_at IS NULL;
CREATE INDEX entity_records_purge_after ON entity_records (purge_after) WHERE sealed_at IS NOT NULL;
CREATE VIEW entities AS SELECT * FROM entity_records WHERE sealed_at IS NULL;

-- none (NULL): the spec's delete, everything gone at once; else years after the relationship ends
ALTER TABLE businesses ADD COLUMN retention_years integer CHECK (retention_years BETWEEN 1 AND 100);

-- A legal hold postpones the purge of a sealed record (or of one sealed later) until it is
-- released or its `until` passes. Its reason is an operator's text and stays here, never in the
-- audit log (which keeps its SHA-256); released holds go with the record when it is purged.
CREATE TABLE legal_holds (
  id          uuid PRIMARY KEY,
  business_id uuid        NOT NULL REFERENCES businesses(id),
  entity_id   uuid        NOT NULL REFERENCES entity_records(id) ON DELETE CASCADE,
  reason      text        NOT NULL,
  until       timestamptz,
  placed_by   text        NOT NULL,
  placed_at   timestamptz NOT NULL DEFAULT now(),
  released_by text,
  released_at timestamptz
);
CREATE INDEX legal_holds_entity ON legal_holds (entity_id) WHERE released_at IS NULL;
