// What deleting an entity triggers: the entity and everything of it gone or sealed (store/entities.ts
// deleteEntityIn), and in the same transaction the members of a business entity losing the features
// its assignments gave them (feature_access_change).
import type { Db } from '../store/db.ts';
import { deleteEntityIn } from '../store/entities.ts';
import { refreshMemberAccess } from './member-access.ts';

/**
 * Deletes (or, under a retention policy or a legal hold, seals) the entity of the business in one
 * transaction; the store keys whose bytes are to go, or the seal's purge date; null when there was no
 * such entity.
 */
export function deleteEntity(db: Db, businessId: string, id: string): Promise<{ removed: string[] } | { sealedUntil: Date } | null> {
  return db.tx(async (tx) => {
    const now = new Date();
    const deleted = await deleteEntityIn(tx, businessId, id, now);
    if (!deleted) return null;
    await refreshMemberAccess(tx, { businessId, memberIds: deleted.members, key: `entity-gone:${id}`, now });
    return deleted.ended;
  });
}
