// What every onboarding decision writes, whichever path made it (token sharing, hosted SDK, …), in
// the caller's transaction: the KYC account (one per provider applicant, holding its latest
// decision), the entity's verifier (and card processor token), the card-issuance feature, and the
// events with their webhook deliveries (once per source key): the decision's, the verification's
// end, and the feature's change — and the features assigned to the person as a member of business
// entities, or to the business entity's members (store/member-feature-access.ts).
import { randomUUID } from 'node:crypto';
import type { VerificationPath } from '../domain/events.ts';
import { kybVerificationKey, type FeatureRef, type VerificationRef } from '../domain/lifecycle-events.ts';
import type { KybDecision } from '../domain/kyb.ts';
import { kybOnboardingChanges, onboardingChanges } from '../domain/onboarding.ts';
import { decisionNonce, decisionSha256 } from '../domain/digests.ts';
import type { Decision } from '../domain/reliance.ts';
import { recordAudit } from './audit-log.ts';
import type { Tx } from './db.ts';
import { recordEvent } from './events.ts';
import { lockAssignedMembers } from './business-members.ts';
import { recordVerificationStage, setFeatureAccess } from './lifecycle-events.ts';
import { refreshMemberAccess } from './member-feature-access.ts';

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

/**
 * Applies the decision; returns the event's id. A unique violation on the card processor token
 * propagates. Its audit entry (decision.recorded) names the KYC account, the provenance, the event
 * and the SHA-256 of the decision as stored (domain/digests.ts), never the outcome.
 */
export async function applyDecision(q: Tx, a: AppliedDecision): Promise<string> {
  const d = a.decision;
  const rejected = d.status === 'REJECTED' ? d : null;
  const nonce = decisionNonce();
  const [account] = await q.query<{ id: string }>(
    `INSERT INTO kyc_accounts (id, entity_id, provider, applicant_id, level_name, source, source_ref, decision, reject_labels,
                               review_reject_type, moderation_comment, decision_nonce)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
     ON CONFLICT (provider, applicant_id) DO UPDATE SET decision = EXCLUDED.decision, reject_labels = EXCLUDED.reject_labels,
       review_reject_type = EXCLUDED.review_reject_type, moderation_comment = EXCLUDED.moderation_comment, level_name = EXCLUDED.level_name,
       decision_nonce = EXCLUDED.decision_nonce, decided_at = now()
     RETURNING id`,
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
      nonce,
    ],
  );
  const cpt = a.cardProcessorPublicToken ? ', card_processor_public_token = $3' : '';
  await q.query(
    `UPDATE entities SET verified_by = $2, updated_at = now()${cpt} WHERE id = $1`,
    a.cardProcessorPublicToken ? [a.entityId, a.provider, a.cardProcessorPublicToken] : [a.entityId, a.provider],
  );
  const changes = onboardingChanges(d, a.entityId, a.now, a.path);
  const eventId = await announce(q, { ...a, ref: { path: a.path, ...a.verification } }, changes, a.eventSourceKey);
  // the features assigned to the person as a member of business entities (every caller holds the person's row)
  await refreshMemberAccess(q, { businessId: a.businessId, memberIds: [a.entityId], key: a.eventSourceKey, now: a.now });
  recordAudit(q, {
    businessId: a.businessId,
    action: 'decision.recorded',
    entityId: a.entityId,
    subject: { type: 'kyc_account', id: String(account!.id) },
    details: {
      path: a.path,
      source: a.source,
      sourceRef: a.sourceRef,
      provider: a.provider,
      applicantId: a.applicantId,
      eventId,
      decisionSha256: decisionSha256(d, nonce),
    },
  });
  return eventId;
}

/**
 * The decision's event, the verification's end (DECIDED), and the feature it turns on or off with
 * its feature_access_change when that changed the entity's features: all keyed on the decision's
 * source key, so a retried or repeated decision announces nothing twice. Returns the decision event's id.
 */
async function announce(
  q: Tx,
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
  q: Tx,
  a: { businessId: string; entityId: string; submissionId: string; decision: KybDecision; now: Date },
): Promise<string> {
  await q.query('UPDATE entities SET verified_by = $2, updated_at = now() WHERE id = $1', [a.entityId, 'universal-kyb']);
  const nonce = decisionNonce();
  await q.query('UPDATE kyb_submissions SET decision_nonce = $2 WHERE id = $1', [a.submissionId, nonce]);
  const changes = kybOnboardingChanges(a.decision, a.entityId, a.submissionId, a.now);
  const eventId = await announce(q, { ...a, ref: { path: 'universal-kyb', verificationId: a.submissionId } }, changes, kybVerificationKey(a.submissionId));
  // the features assigned to its members (the caller holds the business entity's row; its members' after it)
  const members = await lockAssignedMembers(q, a.entityId);
  await refreshMemberAccess(q, { businessId: a.businessId, memberIds: members, key: kybVerificationKey(a.submissionId), now: a.now });
  recordAudit(q, {
    businessId: a.businessId,
    action: 'decision.recorded',
    entityId: a.entityId,
    subject: { type: 'submission', id: a.submissionId },
    details: { path: 'universal-kyb', source: 'universal-kyb', sourceRef: a.submissionId, eventId, decisionSha256: decisionSha256(a.decision, nonce) },
  });
  return eventId;
}
