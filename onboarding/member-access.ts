// What a change of a member's access triggers: the access a member's assignments give brought in line
// (store/member-feature-access.ts, set-based), then for each feature turned on or off its audit entry
// (feature.enabled / feature.removed) and, for a business that subscribed, its feature_access_change.
// Called in the transaction of the change that may have moved it: a person's decision, a KYB decision,
// an assignment or a member added or removed, a business entity deleted — each holding the members'
// rows first (lockMembers).
import { ASSIGNABLE_FEATURES } from '../domain/business-members.ts';
import { FEATURE_ACCESS_EVENT, featureAccessEvent } from '../domain/lifecycle-events.ts';
import { recordAudit } from '../store/audit-log.ts';
import type { Tx } from '../store/db.ts';
import { recordEvents } from '../store/events.ts';
import { alignMemberAccess, type AccessChange } from '../store/member-feature-access.ts';
import { subscribesTo } from '../store/subscriptions.ts';

const byId = new Map(ASSIGNABLE_FEATURES.map((a) => [a.feature.id, a.feature]));

/**
 * Brings the assignments of these members, and their entities' assignable features, in line with
 * the rule; records what changed. `key` names the change (a decision's source key, a request):
 * one feature_access_change per member, feature and key. Returns the members whose features changed.
 */
export async function refreshMemberAccess(
  tx: Tx,
  change: { businessId: string; memberIds: readonly string[]; key: string; now: Date },
): Promise<AccessChange[]> {
  const changed = await alignMemberAccess(tx, change);
  if (changed.length === 0) return [];
  for (const x of changed) {
    const feature = byId.get(x.featureId)!;
    recordAudit(tx, {
      businessId: change.businessId,
      action: x.enabled ? 'feature.enabled' : 'feature.removed',
      entityId: x.memberId,
      subject: { type: 'feature', id: feature.id },
      details: { featureId: feature.id, slug: feature.slug },
    });
  }
  if (await subscribesTo(tx, change.businessId, FEATURE_ACCESS_EVENT.eventType)) {
    await recordEvents(
      tx,
      changed.map((x) => {
        const feature = byId.get(x.featureId)!;
        return {
          businessId: change.businessId,
          entityId: x.memberId,
          ...FEATURE_ACCESS_EVENT,
          payload: (eventId: string) => featureAccessEvent({ eventId, entityId: x.memberId, timestamp: change.now.toISOString(), feature, enabled: x.enabled }),
          sourceKey: `feature-access:${change.key}:${x.memberId}:${feature.id}`,
        };
      }),
    );
  }
  return changed;
}
