// What every onboarding decision writes, whichever path made it (token sharing, hosted SDK, …), in
// the caller's transaction: the KYC account (one per provider applicant, holding its latest
// decision), the entity's verifier (and card processor token), the card-issuance feature, and the
// events with their webhook deliveries (once per source key): the decision's, the verification's
// end, and the feature's change.
import { randomUUID } from 'node:crypto';
import type { VerificationPath } from '../domain/events.ts';
import { kybVerificationKey, type FeatureRef, type VerificationRef } from '../domain/lifecycle-events.ts';
import type { KybDecision } from '../domain/kyb.ts';
import { kybOnboardingChanges, onboardingChanges } from '../domain/onboarding.ts';
import type { Decision } from '../domain/reliance.ts';
import type { Queryable } from './db.ts';
import { recordEvent } from './events.ts';
import { recordVerificationStage, setFeatureAccess } from './lifecycle-events.ts';

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
  /** The verification this decision ends (its verification_status_change DECIDED). */
  verification: Omit<VerificationRef, 'path'>;
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
    `INSERT INTO kyc_accounts (id, entity_id, provider, applicant_id, level_name, source, source_ref, decision, reject_labels,
                               review_reject_type, moderation_comment)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
     ON CONFLICT (provider, applicant_id) DO UPDATE SET decision = EXCLUDED.decision, reject_labels = EXCLUDED.reject_labels,
       review_reject_type = EXCLUDED.review_reject_type, moderation_comment = EXCLUDED.moderation_comment, level_name = EXCLUDED.level_name,
       decided_at = now()`,
    [
      randomUUID(),
      a.entityId,
      a.provider,
      a.applicantId,
      a.levelName,
      a.source,
      a.sourceRef,
      d.status,
      JSON.stringify(rejected?.rejectLabels ?? []),
      rejected?.reviewRejectType ?? null,
      rejected?.moderationComment ?? null,
    ],
  );
  const cpt = a.cardProcessorPublicToken ? ', card_processor_public_token = $3' : '';
  await q.query(
    `UPDATE entities SET verified_by = $2, updated_at = now()${cpt} WHERE id = $1`,
    a.cardProcessorPublicToken ? [a.entityId, a.provider, a.cardProcessorPublicToken] : [a.entityId, a.provider],
  );
  const changes = onboardingChanges(d, a.entityId, a.now, a.path);
  return announce(q, { ...a, ref: { path: a.path, ...a.verification } }, changes, a.eventSourceKey);
}

/**
 * The decision's event, the verification's end (DECIDED), and the feature it turns on or off with
 * its feature_access_change when that changed the entity's features: all keyed on the decision's
 * source key, so a retried or repeated decision announces nothing twice. Returns the decision event's id.
 */
async function announce(
  q: Queryable,
  a: { businessId: string; entityId: string; now: Date; ref: VerificationRef },
  changes: { feature: { ref: FeatureRef; enabled: boolean }; event: { eventName: string; eventType: string; payload: (eventId: string) => object } },
  sourceKey: string,
): Promise<string> {
  const eventId = await recordEvent(q, { businessId: a.businessId, entityId: a.entityId, ...changes.event, sourceKey });
  await recordVerificationStage(q, { businessId: a.businessId, entityId: a.entityId, ref: a.ref, stage: 'DECIDED', key: sourceKey, now: a.now });
  await setFeatureAccess(q, {
    businessId: a.businessId,
    entityId: a.entityId,
    feature: changes.feature.ref,
    enabled: changes.feature.enabled,
    key: sourceKey,
    now: a.now,
  });
  return eventId;
}

/** Applies a KYB decision to the business entity (verifier, business card program) and records its event once; returns the event's id. */
export async function applyKybDecision(
  q: Queryable,
  a: { businessId: string; entityId: string; submissionId: string; decision: KybDecision; now: Date },
): Promise<string> {
  await q.query('UPDATE entities SET verified_by = $2, updated_at = now() WHERE id = $1', [a.entityId, 'universal-kyb']);
  const changes = kybOnboardingChanges(a.decision, a.entityId, a.submissionId, a.now);
  return announce(q, { ...a, ref: { path: 'universal-kyb', verificationId: a.submissionId } }, changes, kybVerificationKey(a.submissionId));
}
