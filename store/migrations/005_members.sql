-- Members of a BUSINESS entity (its kyb-ubo-declaration): INDIVIDUAL entities of the same business.
CREATE TABLE entity_members (
  business_entity_id uuid NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
  member_entity_id   uuid NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
  role               text NOT NULL,
  ownership_percent  numeric,
  created_at         timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (business_entity_id, member_entity_id)
);
CREATE INDEX entity_members_member_idx ON entity_members (member_entity_id);
