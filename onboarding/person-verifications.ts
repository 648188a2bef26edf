// The decision on a person verified through the hosted SDK, recorded in one transaction
// (decisions.ts). The event's source key names the review round, so a repeated or stale callback
// about a decided round records nothing new.
import type { VerificationPath } from '../domain/events.ts';
import type { Decision } from '../domain/reliance.ts';
import type { Db } from '../store/db.ts';
import { applyDecision } from './decisions.ts';

export type ReviewDecision = {
  entityId: string;
  provider: string;
  applicantId: string;
  levelName: string | null;
  /** The provider's review round. */
  reviewKey: string;
  decision: Decision;
  path: VerificationPath;
  now: Date;
};

export type RecordedReview = { outcome: 'decided'; eventId: string } | { outcome: 'unchanged' } | { outcome: 'entity-gone' };

export async function recordReviewDecision(db: Db, r: ReviewDecision): Promise<RecordedReview> {
  return db.tx(async (tx) => {
    const [entity] = await tx.query<{ business_id: string }>("SELECT business_id FROM entities WHERE id = $1 AND type = 'INDIVIDUAL' FOR UPDATE", [r.entityId]);
    if (!entity) return { outcome: 'entity-gone' };
    const sourceKey = `${r.path}:${r.provider}:${r.applicantId}:${r.reviewKey}`;
    const [seen] = await tx.query('SELECT 1 FROM events WHERE source_key = $1', [sourceKey]);
    if (seen) return { outcome: 'unchanged' };
    const eventId = await applyDecision(tx, {
      businessId: entity.business_id,
      entityId: r.entityId,
      provider: r.provider,
      applicantId: r.applicantId,
      levelName: r.levelName,
      source: r.path,
      sourceRef: `${r.provider}:${r.applicantId}`,
      decision: r.decision,
      path: r.path,
      verification: {},
      eventSourceKey: sourceKey,
      now: r.now,
    });
    return { outcome: 'decided', eventId };
  });
}
