// The access a member's assignments give (domain/business-members.ts): each assignment enabled while
// its business entity has the feature's business part (business-card-program: KYB approved) and the
// person has its person part (card-issuance-api-access: its own decision approved, any path); the
// member's entity_features row of the feature on while any of its assignments is. Applied set-based
// for any number of members (one statement), in the transaction of the change that may have moved it:
// a person's decision, a KYB decision, an assignment or a member added or removed, a business entity
// deleted. Each change of an entity's features is audited and sent once as feature_access_change.
//
// Lock order: the caller holds the row of every member named (lockMembers, after the business
// entity when it holds one — a business entity before its members, as everywhere), so two changes
// of one member's access never interleave, whichever business entities they come from.
import { ASSIGNABLE_FEATURES } from '../domain/business-members.ts';
import { FEATURE_ACCESS_EVENT, featureAccessEvent } from '../domain/lifecycle-events.ts';
import { recordAudit } from './audit-log.ts';
import type { Queryable, Tx } from './db.ts';
import { recordEvents } from './events.ts';
import { subscribesTo } from './subscriptions.ts';

/** Locks the rows of these entities (in id order, for the transaction), of `businessId` when given; returns the ids that exist. */
export async function lockMembers(q: Queryable, ids: readonly string[], businessId?: string): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await q.query<{ id: string }>(
    `SELECT id FROM entities WHERE id = ANY ($1::uuid[])${businessId ? ' AND business_id = $2' : ''} ORDER BY id FOR NO KEY UPDATE`,
    businessId ? [ids, businessId] : [ids],
  );
  return rows.map((r) => String(r.id));
}

const byId = new Map(ASSIGNABLE_FEATURES.map((a) => [a.feature.id, a.feature]));

/**
 * Whether any of these entities has an assignment or an assignable feature: when none has either,
 * the rule has nothing to change for them. One cheap statement (prepared: the same text every time)
 * instead of the full one below, which takes a millisecond to plan, for the many people decided who
 * are no business's assigned members.
 */
async function mayHoldAssignedAccess(q: Queryable, ids: readonly string[]): Promise<boolean> {
  const [r] = await q.query<{ any: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM member_feature_assignments WHERE member_entity_id = ANY ($1::uuid[]))
         OR EXISTS (SELECT 1 FROM entity_features WHERE entity_id = ANY ($1::uuid[]) AND feature_id = ANY ($2::uuid[])) AS any`,
    [ids, ASSIGNABLE_FEATURES.map((a) => a.feature.id)],
  );
  return r!.any;
}

/**
 * Brings the assignments of these members, and their entities' assignable features, in line with
 * the rule; records what changed. `key` names the change (a decision's source key, a request):
 * one feature_access_change per member, feature and key. Returns the members whose features changed.
 */
export async function refreshMemberAccess(
  q: Tx,
  c: { businessId: string; memberIds: readonly string[]; key: string; now: Date },
): Promise<{ memberId: string; featureId: string; enabled: boolean }[]> {
  if (c.memberIds.length === 0 || ASSIGNABLE_FEATURES.length === 0) return [];
  if (!(await mayHoldAssignedAccess(q, c.memberIds))) return []; // most people decided are members of no business: nothing to bring in line
  const changed = await q.query<{ entity_id: string; feature_id: string; enabled: boolean }>(
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
  if (changed.length === 0) return [];
  const out = changed.map((r) => ({ memberId: String(r.entity_id), featureId: String(r.feature_id), enabled: r.enabled }));
  for (const x of out) {
    const feature = byId.get(x.featureId)!;
    recordAudit(q, {
      businessId: c.businessId,
      action: x.enabled ? 'feature.enabled' : 'feature.removed',
      entityId: x.memberId,
      subject: { type: 'feature', id: feature.id },
      details: { featureId: feature.id, slug: feature.slug },
    });
  }
  if (await subscribesTo(q, c.businessId, FEATURE_ACCESS_EVENT.eventType)) {
    await recordEvents(
      q,
      out.map((x) => {
        const feature = byId.get(x.featureId)!;
        return {
          businessId: c.businessId,
          entityId: x.memberId,
          ...FEATURE_ACCESS_EVENT,
          payload: (eventId: string) => featureAccessEvent({ eventId, entityId: x.memberId, timestamp: c.now.toISOString(), feature, enabled: x.enabled }),
          sourceKey: `feature-access:${c.key}:${x.memberId}:${feature.id}`,
        };
      }),
    );
  }
  return out;
}
