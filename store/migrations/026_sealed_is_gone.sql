-- Sealed means gone on every path (issue 37). Migration 016 made `entities` a view of the records
-- not sealed, but the rows that belong to an entity (its members' links, KYC accounts and person
-- data, requirements, files, submissions, features) were still read straight from their tables: a
-- sealed person was reachable through a business that declared them (`memberId`, owners, member
-- lists). A sealed entity must look exactly as a deleted one does, whose rows are gone by cascade.
--
-- So each table of those rows is renamed record_<name> and the product reads the view <name>: the
-- rows whose entities are all visible. The rule is written once, below. Visible means not sealed;
-- a reader of the record (trace, evidence export, retention: store/record-reader.ts) sets
-- vouch.include_sealed = 'on' for its own transaction (SET LOCAL) and sees sealed rows too, through
-- the same views. The views are simple, so INSERT, UPDATE, DELETE, ON CONFLICT and FOR UPDATE go
-- through them to the table; a write through a view never reaches a sealed entity's row, and a row
-- written through one for a sealed entity is refused (CHECK OPTION), as a deleted entity's would be.
CREATE OR REPLACE VIEW entities AS
  SELECT * FROM entity_records WHERE sealed_at IS NULL OR current_setting('vouch.include_sealed', true) = 'on';

DROP VIEW memberships;

-- The rule, once: the SQL condition that the entity named by a column is visible. Views here and in
-- later migrations are made with it (EXECUTE format(…, visible_entity('r.entity_id'))).
CREATE FUNCTION visible_entity(id_column text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT format('EXISTS (SELECT 1 FROM entity_records e WHERE e.id = %s AND (e.sealed_at IS NULL OR current_setting(''vouch.include_sealed'', true) = ''on''))', id_column)
$$;

DO $$
DECLARE
  t record;
BEGIN
  FOR t IN SELECT * FROM (VALUES
      ('entity_features', ARRAY['entity_id']),
      ('entity_requirements', ARRAY['entity_id']),
      ('files', ARRAY['entity_id']),
      ('kyb_profiles', ARRAY['entity_id']),
      ('kyb_submissions', ARRAY['entity_id']),
      ('kyc_accounts', ARRAY['entity_id']),
      ('kyc_persons', ARRAY['entity_id']),
      ('sandbox_reviews', ARRAY['entity_id']),
      ('ukyc_submissions', ARRAY['entity_id']),
      ('entity_members', ARRAY['business_entity_id', 'member_entity_id']),
      ('business_members', ARRAY['business_entity_id', 'member_entity_id']),
      ('member_feature_assignments', ARRAY['business_entity_id', 'member_entity_id'])
    ) AS v(name, cols)
  LOOP
    EXECUTE format('ALTER TABLE %I RENAME TO %I', t.name, 'record_' || t.name);
    EXECUTE format('CREATE VIEW %I AS SELECT * FROM %I r WHERE %s WITH CASCADED CHECK OPTION', t.name, 'record_' || t.name,
      (SELECT string_agg(visible_entity('r.' || quote_ident(c)), ' AND ') FROM unnest(t.cols) AS c));
  END LOOP;
END $$;

-- Every membership of a person in a business entity (migration 022), over the views: a sealed
-- owner or member, or a sealed business entity, is no membership.
CREATE VIEW memberships AS
  SELECT business_entity_id, member_entity_id FROM entity_members
  UNION ALL
  SELECT business_entity_id, member_entity_id FROM business_members;

-- A card processor token held by a sealed entity is free again, as its externalId is: else a new
-- entity's import would be refused for a token only a deleted person holds.
DROP INDEX entities_card_processor_token_key;
CREATE UNIQUE INDEX entities_card_processor_token_key ON entity_records (business_id, card_processor_public_token)
  WHERE card_processor_public_token IS NOT NULL AND sealed_at IS NULL;
