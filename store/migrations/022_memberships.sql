-- Every membership of a person in a business entity, in one place (issue 22's review): a declared
-- owner (entity_members: kyb-ubo-declaration, the KYB profile) or a member declared with
-- POST /entity/{entityId}/members (business_members). `memberId` accepts both; deleting or purging
-- a person locks the business entities of both first. Readers ask this view, not the two tables.
CREATE VIEW memberships AS
  SELECT business_entity_id, member_entity_id FROM entity_members
  UNION ALL
  SELECT business_entity_id, member_entity_id FROM business_members;
