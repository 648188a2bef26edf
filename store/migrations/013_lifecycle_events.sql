-- The feature catalog as announced (issue 19, new_feature): a feature in the code's catalog that
-- is not in this table is new, and every business is told of it once, when it is added here. The
-- catalog's features at the time of this migration are not new.
CREATE TABLE catalog_features (
  feature_id uuid PRIMARY KEY,
  added_at   timestamptz NOT NULL DEFAULT now()
);
INSERT INTO catalog_features (feature_id) VALUES
  ('0e72185c-b3f4-4f70-9e1e-eb1940004e03'),
  ('66c82cfd-1b04-4a2d-a7d5-73e15c2ce858');

-- A person's latest decision event (the hosted SDK's round, store/lifecycle-events.ts lastDecisionEventOf).
CREATE INDEX events_entity_type_created_idx ON events (entity_id, event_type, created_at DESC);
