// What saving a KYB profile triggers: the profile and its declared owners written (store/kyb.ts
// saveProfileIn) and, when a change supersedes a submission that was waiting, that verification's
// SUPERSEDED stage (its audit entry and verification_status_change) in the same transaction.
import { kybVerificationKey } from '../domain/lifecycle-events.ts';
import type { Db } from '../store/db.ts';
import { saveProfileIn, type DeclaredOwner, type ProfileProblem, type SavedProfile } from '../store/kyb.ts';
import { recordVerificationStage } from './lifecycle-events.ts';

/** Creates or changes the profile (store/kyb.ts saveProfileIn says how); a submission it supersedes is recorded SUPERSEDED. */
export function saveProfile(
  db: Db,
  p: { mode: 'create' | 'change'; businessId: string; entityId: string; business: (current: unknown) => unknown; owners: readonly DeclaredOwner[] | undefined },
): Promise<SavedProfile | ProfileProblem> {
  return db.tx(async (tx) => {
    const saved = await saveProfileIn(tx, p);
    if ('supersededSubmissionId' in saved && saved.supersededSubmissionId) {
      await recordVerificationStage(tx, {
        businessId: p.businessId,
        entityId: p.entityId,
        ref: { path: 'universal-kyb', verificationId: saved.supersededSubmissionId },
        stage: 'SUPERSEDED',
        key: kybVerificationKey(saved.supersededSubmissionId),
        now: new Date(),
      });
    }
    return saved;
  });
}
