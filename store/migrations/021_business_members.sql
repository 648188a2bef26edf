-- Members of a BUSINESS entity beyond its declared owners (interface v1.1.0, multi-member feature
-- assignments): for example the employees who hold cards of its business card program. Kept apart
-- from entity_members, which is the KYB declaration (every row an owner; saving a KYB profile
-- rewrites it). Both ends are entity records of the same business; deleting (purging) either
-- removes the link and its assignments (cascade).
CREATE TABLE business_members (
  business_entity_id uuid        NOT NULL REFERENCES entity_records(id) ON DELETE CASCADE,
  member_entity_id   uuid        NOT NULL REFERENCES entity_records(id) ON DELETE CASCADE,
  role               text        NOT NULL,
  seq                bigint      GENERATED ALWAYS AS IDENTITY,   -- declaration order (a call's people in the order given)
  declared_at        timestamptz NOT NULL DEFAULT now(),
  updated_at         timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (business_entity_id, member_entity_id)
);
CREATE INDEX business_members_member_idx ON business_members (member_entity_id);
-- the members list, in declaration order
CREATE INDEX business_members_page_idx ON business_members (business_entity_id, seq);

-- A catalog feature assigned to a member of a business entity. enabled_at is set while the
-- assignment meets the feature's requirements (the person's part and the business's), else null.
-- The member's entity_features row of the feature is on while any of its assignments is enabled.
CREATE TABLE member_feature_assignments (
  business_entity_id uuid        NOT NULL,
  feature_id         uuid        NOT NULL,
  member_entity_id   uuid        NOT NULL,
  seq                bigint      GENERATED ALWAYS AS IDENTITY,   -- assignment order (a call's members in the order given)
  assigned_at        timestamptz NOT NULL DEFAULT now(),
  enabled_at         timestamptz,
  PRIMARY KEY (business_entity_id, feature_id, member_entity_id),
  FOREIGN KEY (business_entity_id, member_entity_id) REFERENCES business_members (business_entity_id, member_entity_id) ON DELETE CASCADE
);
CREATE INDEX member_feature_assignments_member_idx ON member_feature_assignments (member_entity_id, feature_id);
CREATE INDEX member_feature_assignments_page_idx ON member_feature_assignments (business_entity_id, feature_id, seq);

-- The business cardholder feature (domain/feature-catalog.ts) is not in catalog_features: it is new,
-- and announced once (new_feature) to the businesses that subscribed.
