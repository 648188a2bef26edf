// Which (business entity, member) pairs are memberships (the `memberships` view, migration 022:
// owners and declared members), in one query for many records — a requirement batch checks each
// record's memberId as store/entities.ts isMemberOf checks one.
import type { Queryable } from './db.ts';

export async function membershipsAmong(db: Queryable, pairs: readonly { businessEntityId: string; memberId: string }[]): Promise<Set<string>> {
  if (pairs.length === 0) return new Set();
  const rows = await db.query<{ b: string; m: string }>(
    `SELECT DISTINCT m.business_entity_id AS b, m.member_entity_id AS m FROM memberships m
       JOIN unnest($1::uuid[], $2::uuid[]) AS p(b, m) ON p.b = m.business_entity_id AND p.m = m.member_entity_id`,
    [pairs.map((p) => p.businessEntityId), pairs.map((p) => p.memberId)],
  );
  return new Set(rows.map((r) => membershipKey(String(r.b), String(r.m))));
}

export const membershipKey = (businessEntityId: string, memberId: string) => `${businessEntityId}/${memberId}`;
