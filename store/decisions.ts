// What every onboarding decision writes, whichever path made it (token sharing, hosted SDK, …), in
// the caller's transaction: the KYC account (one per provider applicant, holding its latest
// decision), the entity's verifier (and card processor token), the card-issuance feature, and the
// event with its webhook deliveries (once per source key).
import { randomUUID } from 'node:crypto';
import type { VerificationPath } from '../domain/events.ts';
import type { KybDecision } from '../domain/kyb.ts';
import { kybOnboardingChanges, onboardingChanges } from '../domain/onboarding.ts';
import type { Decision } from '../domain/reliance.ts';
import type { Queryable } from './db.ts';
import { recordEvent } from './events.ts';

export type AppliedDecision = {
  businessId: string;
  entityId: string;
  provider: string;
  applicantId: string;
  levelName: string | null;
  /** Where the account came from (`batch`, `sync`, `hosted-sdk`) and which request or round. */
  source: string;
  sourceRef: string;
  decision: Decision;
  path: VerificationPath;
  /** Makes the event (and so the webhook) once-only. */
  eventSourceKey: string;
  cardProcessorPublicToken?: string | null;
  now: Date;
};

/** Applies the decision; returns the event's id. A unique violation on the card processor token propagates. */
export async function applyDecision(q: Queryable, a: AppliedDecision): Promise<string> {
  const d = a.decision;
  const rejected = d.status === 'REJECTED' ? d : null;
  await q.query(
    `INSERT INTO kyc_accounts (id, entity_id, provider, applicant_id, level_name, source, source_ref, decision, reject_labels, review_reject_type, moderation_comment)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
     ON CONFLICT (provider, applicant_id) DO UPDATE SET decision = EXCLUDED.decision, reject_labels = EXCLUDED.reject_labels,
       review_reject_type = EXCLUDED.review_reject_type, moderation_comment = EXCLUDED.moderation_comment, level_name = EXCLUDED.level_name,
       decided_at = now()`,
    [
      randomUUID(), a.entityId, a.provider, a.applicantId, a.levelName, a.source, a.sourceRef, d.status,
      JSON.stringify(rejected?.rejectLabels ?? []), rejected?.reviewRejectType ?? null, rejected?.moderationComment ?? null,
    ],
  );
  const cpt = a.cardProcessorPublicToken ? ', card_processor_public_token = $3' : '';
  await q.query(`UPDATE entities SET verified_by = $2, updated_at = now()${cpt} WHERE id = $1`, a.cardProcessorPublicToken ? [a.entityId, a.provider, a.cardProcessorPublicToken] : [a.entityId, a.provider]);
  const changes = onboardingChanges(d, a.entityId, a.now, a.path);
  await setFeature(q, a.entityId, changes.feature);
  return recordEvent(q, { businessId: a.businessId, entityId: a.entityId, ...changes.event, sourceKey: a.eventSourceKey });
}

async function setFeature(q: Queryable, entityId: string, feature: { id: string; enabled: boolean }): Promise<void> {
  if (feature.enabled) {
    await q.query('INSERT INTO entity_features (entity_id, feature_id) VALUES ($1, $2) ON CONFLICT DO NOTHING', [entityId, feature.id]);
  } else {
    await q.query('DELETE FROM entity_features WHERE entity_id = $1 AND feature_id = $2', [entityId, feature.id]);
  }
}

/** Applies a KYB decision to the business entity (verifier, business card program) and records its event once; returns the event's id. */
export async function applyKybDecision(q: Queryable, a: { businessId: string; entityId: string; submissionId: string; decision: KybDecision; now: Date }): Promise<string> {
  await q.query('UPDATE entities SET verified_by = $2, updated_at = now() WHERE id = $1', [a.entityId, 'universal-kyb']);
  const changes = kybOnboardingChanges(a.decision, a.entityId, a.submissionId, a.now);
  await setFeature(q, a.entityId, changes.feature);
  return recordEvent(q, { businessId: a.businessId, entityId: a.entityId, ...changes.event, sourceKey: `universal-kyb:${a.submissionId}` });
}
