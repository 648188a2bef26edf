// The decision on a person verified through the hosted SDK, recorded in one transaction: the KYC
// account (one per provider applicant, its latest decision), the entity's verifier, the feature,
// and the event with its webhook deliveries. The event's source key names the review round, so a
// repeated or stale callback about a decided round records nothing new.
import { randomUUID } from 'node:crypto';
import type { VerificationPath } from '../domain/events.ts';
import { onboardingChanges } from '../domain/onboarding.ts';
import type { Decision } from '../domain/reliance.ts';
import type { Db } from './db.ts';
import { recordEvent } from './events.ts';

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
  return db.tx(async (q) => {
    const [entity] = await q.query<{ business_id: string }>("SELECT business_id FROM entities WHERE id = $1 AND type = 'INDIVIDUAL' FOR UPDATE", [r.entityId]);
    if (!entity) return { outcome: 'entity-gone' };
    const sourceKey = `${r.path}:${r.provider}:${r.applicantId}:${r.reviewKey}`;
    const [seen] = await q.query('SELECT 1 FROM events WHERE source_key = $1', [sourceKey]);
    if (seen) return { outcome: 'unchanged' };
    const d = r.decision;
    const rejected = d.status === 'REJECTED' ? d : null;
    await q.query(
      `INSERT INTO kyc_accounts (id, entity_id, provider, applicant_id, level_name, source, source_ref, decision, reject_labels, review_reject_type, moderation_comment)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
       ON CONFLICT (provider, applicant_id) DO UPDATE SET decision = EXCLUDED.decision, reject_labels = EXCLUDED.reject_labels,
         review_reject_type = EXCLUDED.review_reject_type, moderation_comment = EXCLUDED.moderation_comment, level_name = EXCLUDED.level_name`,
      [
        randomUUID(), r.entityId, r.provider, r.applicantId, r.levelName, r.path, `${r.provider}:${r.applicantId}`, d.status,
        JSON.stringify(rejected?.rejectLabels ?? []), rejected?.reviewRejectType ?? null, rejected?.moderationComment ?? null,
      ],
    );
    await q.query('UPDATE entities SET verified_by = $2, updated_at = now() WHERE id = $1', [r.entityId, r.provider]);
    const changes = onboardingChanges(d, r.entityId, r.now, r.path);
    if (changes.feature.enabled) {
      await q.query('INSERT INTO entity_features (entity_id, feature_id) VALUES ($1, $2) ON CONFLICT DO NOTHING', [r.entityId, changes.feature.id]);
    } else {
      await q.query('DELETE FROM entity_features WHERE entity_id = $1 AND feature_id = $2', [r.entityId, changes.feature.id]);
    }
    const eventId = await recordEvent(q, { businessId: entity.business_id, entityId: r.entityId, ...changes.event, sourceKey });
    return { outcome: 'decided', eventId };
  });
}
