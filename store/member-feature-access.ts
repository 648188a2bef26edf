// The rows of the access a member's assignments give (domain/business-members.ts): each assignment
// enabled while its business entity has the feature's business part (business-card-program: KYB
// approved) and the person has its person part (card-issuance-api-access: its own decision approved,
// any path); the member's entity_features row of the feature on while any of its assignments is.
// Applied set-based for any number of members (one statement). What a change of access triggers (its
// audit entries, feature_access_change) is onboarding/member-access.ts, which calls this.
//
// Lock order: the caller holds the row of every member named (lockMembers, after the business
// entity when it holds one — a business entity before its members, as everywhere), so two changes
// of one member's access never interleave, whichever business entities they come from.
import { ASSIGNABLE_FEATURES } from '../domain/business-members.ts';
import type { Queryable, Tx } from './db.ts';

/** Locks the rows of these entities (in id order, for the transaction), of `businessId` when given; returns the ids that exist. */
export async function lockMembers(db: Queryable, ids: readonly string[], businessId?: string): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await db.query<{ id: string }>(
    `SELECT id FROM entities WHERE id = ANY ($1::uuid[])${businessId ? ' AND business_id = $2' : ''} ORDER BY id FOR NO KEY UPDATE`,
    businessId ? [ids, businessId] : [ids],
  );
  return rows.map((r) => String(r.id));
}

/**
 * Whether any of these entities has an assignment or an assignable feature: when none has either,
 * the rule has nothing to change for them. One cheap statement (prepared: the same text every time)
 * instead of the full one below, which takes a millisecond to plan, for the many people decided who
 * are no business's assigned members.
 */
async function mayHoldAssignedAccess(db: Queryable, ids: readonly string[]): Promise<boolean> {
  const [r] = await db.query<{ any: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM member_feature_assignments WHERE member_entity_id = ANY ($1::uuid[]))
         OR EXISTS (SELECT 1 FROM entity_features WHERE entity_id = ANY ($1::uuid[]) AND feature_id = ANY ($2::uuid[])) AS any`,
    [ids, ASSIGNABLE_FEATURES.map((a) => a.feature.id)],
  );
  return r!.any;
}

export type AccessChange = { memberId: string; featureId: string; enabled: boolean };

/**
 * Brings the assignments of these members, and their entities' assignable features, in line with
 * the rule. Returns what changed: each member's feature turned on or off.
 */
export async function alignMemberAccess(tx: Tx, c: { memberIds: readonly string[]; now: Date }): Promise<AccessChange[]> {
  if (c.memberIds.length === 0 || ASSIGNABLE_FEATURES.length === 0) return [];
  if (!(await mayHoldAssignedAccess(tx, c.memberIds))) return []; // most people decided are members of no business: nothing to bring in line
  const changed = await tx.query<{ entity_id: string; feature_id: string; enabled: boolean }>(
    `WITH m AS (SELECT DISTINCT unnest($1::uuid[]) AS id),
     f AS (SELECT * FROM unnest($2::uuid[], $3::uuid[], $4::uuid[]) AS f(feature_id, person_feature_id, business_feature_id)),
     calc AS (
       SELECT a.business_entity_id, a.feature_id, a.member_entity_id, a.enabled_at IS NOT NULL AS was,
              (EXISTS (SELECT 1 FROM entities b WHERE b.id = a.business_entity_id)
               AND EXISTS (SELECT 1 FROM entity_features x WHERE x.entity_id = a.business_entity_id AND x.feature_id = f.business_feature_id)
               AND EXISTS (SELECT 1 FROM entity_features y WHERE y.entity_id = a.member_entity_id AND y.feature_id = f.person_feature_id)) AS want
         FROM member_feature_assignments a JOIN f USING (feature_id)
        WHERE a.member_entity_id IN (SELECT id FROM m)
     ),
     upd AS (
       UPDATE member_feature_assignments t SET enabled_at = CASE WHEN c.want THEN $5::timestamptz END
         FROM calc c
        WHERE t.business_entity_id = c.business_entity_id AND t.feature_id = c.feature_id AND t.member_entity_id = c.member_entity_id AND c.want <> c.was
     ),
     wanted AS (SELECT member_entity_id, feature_id, bool_or(want) AS want FROM calc GROUP BY member_entity_id, feature_id),
     agg AS (
       SELECT m.id AS entity_id, f.feature_id, coalesce(w.want, false) AS want
         FROM m CROSS JOIN f LEFT JOIN wanted w ON w.member_entity_id = m.id AND w.feature_id = f.feature_id
        WHERE EXISTS (SELECT 1 FROM entities e WHERE e.id = m.id)
     ),
     ins AS (
       INSERT INTO entity_features (entity_id, feature_id, enabled_at)
       SELECT entity_id, feature_id, $5 FROM agg WHERE want ORDER BY entity_id
       ON CONFLICT DO NOTHING RETURNING entity_id, feature_id
     ),
     del AS (
       DELETE FROM entity_features e USING agg
        WHERE e.entity_id = agg.entity_id AND e.feature_id = agg.feature_id AND NOT agg.want RETURNING e.entity_id, e.feature_id
     )
     SELECT entity_id, feature_id, true AS enabled FROM ins UNION ALL SELECT entity_id, feature_id, false AS enabled FROM del ORDER BY 1, 2`,
    [
      c.memberIds,
      ASSIGNABLE_FEATURES.map((a) => a.feature.id),
      ASSIGNABLE_FEATURES.map((a) => a.personFeature.id),
      ASSIGNABLE_FEATURES.map((a) => a.businessFeature.id),
      c.now,
    ],
  );
  return changed.map((r) => ({ memberId: String(r.entity_id), featureId: String(r.feature_id), enabled: r.enabled }));
}
