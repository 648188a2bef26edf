// What a change of a business entity's members or assignments triggers: the write (store/
// business-members.ts, under the business entity's lock, then its members'), then the members' access
// brought in line in the same transaction (onboarding/member-access.ts: feature_access_change for each
// feature turned on or off). A member removed takes the features its assignments gave with it.
import { randomUUID } from 'node:crypto';
import type { AssignableFeature } from '../domain/business-members.ts';
import { assignFeatureIn, assignmentsOf, removeMemberIn, unassignFeatureIn, type AssignmentState, type MemberProblem } from '../store/business-members.ts';
import type { Db } from '../store/db.ts';
import { refreshMemberAccess } from './member-access.ts';

/** Removes a member with its assignments; the features they gave are removed. 'not-member' when it was not declared (by this list). */
export function removeMember(
  db: Db,
  r: { businessId: string; entityId: string; memberId: string; now: Date },
): Promise<'removed' | 'not-member' | MemberProblem<never>> {
  return db.tx(async (tx) => {
    const removed = await removeMemberIn(tx, r);
    if (removed === 'removed') {
      await refreshMemberAccess(tx, { businessId: r.businessId, memberIds: [r.memberId], key: `member-removed:${randomUUID()}`, now: r.now });
    }
    return removed;
  });
}

/**
 * Assigns the feature to these declared members (already assigned ones stay as they are) and enables
 * it for each that meets its requirements. Returns the listed assignments in the order given, and how
 * many were new.
 */
export function assignFeature<P>(
  db: Db,
  a: { businessId: string; entityId: string; feature: AssignableFeature; memberIds: readonly string[]; now: Date; check(declared: Set<string>): P | null },
): Promise<(AssignmentState & { assigned: number }) | MemberProblem<P>> {
  return db.tx(async (tx) => {
    const added = await assignFeatureIn(tx, a);
    if (!('assigned' in added)) return added;
    await refreshMemberAccess(tx, { businessId: a.businessId, memberIds: a.memberIds, key: `assigned:${randomUUID()}`, now: a.now });
    return { assigned: added.assigned, ...(await assignmentsOf(tx, a)) };
  });
}

/** Removes the feature's assignment from a member; its access goes with it. */
export function unassignFeature(
  db: Db,
  a: { businessId: string; entityId: string; feature: AssignableFeature; memberId: string; now: Date },
): Promise<'removed' | 'not-assigned' | MemberProblem<never>> {
  return db.tx(async (tx) => {
    const removed = await unassignFeatureIn(tx, a);
    if (removed === 'removed') {
      await refreshMemberAccess(tx, { businessId: a.businessId, memberIds: [a.memberId], key: `unassigned:${randomUUID()}`, now: a.now });
    }
    return removed;
  });
}
