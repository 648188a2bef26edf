// What every onboarding decision writes, whichever path made it (token sharing, hosted SDK, …), in
// the caller's transaction: the KYC account (one per provider applicant) and the decision appended
// to the entity's record with its rule set and basis (never overwriting an earlier one), the
// entity's verifier (and card processor token), the card-issuance feature, and the events with
// their webhook deliveries (once per source key): the decision's, the verification's
// end, and the feature's change — and the features assigned to the person as a member of business
// entities, or to the business entity's members (onboarding/member-access.ts).
import { randomUUID } from 'node:crypto';
import type { VerificationPath } from '../domain/events.ts';
import { kybVerificationKey, type FeatureRef, type VerificationRef } from '../domain/lifecycle-events.ts';
import type { KybDecision } from '../domain/kyb.ts';
import { kybOnboardingChanges, onboardingChanges } from '../domain/onboarding.ts';
import { basisSha256, canonicalSha256, DECISION_RULES, decisionNonce, decisionSha256, storedDecision, type DecisionBasis } from '../domain/digests.ts';
import type { Decision } from '../domain/reliance.ts';
import { recordAudit } from '../store/audit-log.ts';
import { iso, type Queryable, type Tx } from '../store/db.ts';
import { recordEvent } from '../store/events.ts';
import { lockAssignedMembers } from '../store/business-members.ts';
import { recordVerificationStage, setFeatureAccess } from './lifecycle-events.ts';
import { refreshMemberAccess } from './member-access.ts';

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
export async function applyDecision(tx: Tx, a: AppliedDecision): Promise<string> {
  const d = a.decision;
  const rejected = d.status === 'REJECTED' ? d : null;
  // the account: which applicant of which provider, for this entity; its decisions are appended below
  const [account] = await tx.query<{ id: string }>(
    `INSERT INTO record_kyc_accounts (id, entity_id, provider, applicant_id, level_name, source, source_ref) VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (provider, applicant_id) DO UPDATE SET level_name = EXCLUDED.level_name WHERE record_kyc_accounts.entity_id = EXCLUDED.entity_id
     RETURNING id`,
    [randomUUID(), a.entityId, a.provider, a.applicantId, a.levelName, a.source, a.sourceRef],
  );
  if (!account) throw new Error(`applicant ${a.provider}/${a.applicantId} is another entity's: no decision of ${a.entityId} is recorded on it`);
  const cpt = a.cardProcessorPublicToken ? ', card_processor_public_token = $3' : '';
  await tx.query(
    `UPDATE entities SET verified_by = $2, updated_at = now()${cpt} WHERE id = $1`,
    a.cardProcessorPublicToken ? [a.entityId, a.provider, a.cardProcessorPublicToken] : [a.entityId, a.provider],
  );
  const changes = onboardingChanges(d, a.entityId, a.now, a.path);
  const eventId = await announce(tx, { ...a, ref: { path: a.path, ...a.verification } }, changes, a.eventSourceKey);
  // the features assigned to the person as a member of business entities (every caller holds the person's row)
  await refreshMemberAccess(tx, { businessId: a.businessId, memberIds: [a.entityId], key: a.eventSourceKey, now: a.now });
  await appendDecision(tx, {
    businessId: a.businessId,
    entityId: a.entityId,
    kind: 'kyc',
    path: a.path,
    source: a.source,
    sourceRef: a.sourceRef,
    kycAccountId: String(account.id),
    submissionId: null,
    decision: d,
    rejected,
    owners: null,
    // what it rested on: the person data as read for it (its current version), by id and digest
    basis: { provider: a.provider, applicantId: a.applicantId, levelName: a.levelName, personDataId: null, personDataSha256: null },
    personData: { provider: a.provider, applicantId: a.applicantId },
    eventId,
    audit: { provider: a.provider, applicantId: a.applicantId },
  });
  return eventId;
}

type Appended = {
  businessId: string;
  entityId: string;
  kind: 'kyc' | 'kyb';
  path: keyof typeof DECISION_RULES;
  source: string;
  sourceRef: string;
  kycAccountId: string | null;
  submissionId: string | null;
  decision: Decision | KybDecision;
  rejected: { rejectLabels: string[]; reviewRejectType: string; moderationComment: string } | null;
  owners: unknown;
  basis: DecisionBasis;
  /** A KYC decision's person data, whose current version (id and digest) the insert names in the basis, in its own statement. */
  personData?: { provider: string; applicantId: string };
  eventId: string;
  audit: Record<string, string>;
};

/**
 * Appends a decision to the entity's record (never overwriting one: migration 027) with its rule set
 * and basis, and its decision.recorded entry: the decision by id, its provenance, the event that
 * carried it, and two digests with its nonce — of the decision as stored, and of its rules and basis —
 * never the outcome.
 */
async function appendDecision(tx: Tx, x: Appended): Promise<void> {
  const id = randomUUID();
  const nonce = decisionNonce();
  const rules = DECISION_RULES[x.path];
  const [inserted] = await tx.query<{ basis: DecisionBasis }>(
    `INSERT INTO record_decisions (id, business_id, entity_id, kind, path, source, source_ref, kyc_account_id, submission_id, status, reject_labels,
                                   review_reject_type, moderation_comment, owners, rules, basis, nonce, event_id)
     SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15,
            CASE WHEN p.id IS NULL THEN $16::jsonb ELSE $16::jsonb || jsonb_build_object('personDataId', p.id, 'personDataSha256', p.data_sha256) END,
            $17, $18
       FROM (SELECT 1) AS one
       LEFT JOIN kyc_persons p ON $19::boolean AND p.entity_id = $3 AND p.provider = $20 AND p.applicant_id = $21
     RETURNING basis`,
    [
      id,
      x.businessId,
      x.entityId,
      x.kind,
      x.path,
      x.source,
      x.sourceRef,
      x.kycAccountId,
      x.submissionId,
      x.decision.status,
      JSON.stringify(x.rejected?.rejectLabels ?? []),
      x.rejected?.reviewRejectType ?? null,
      x.rejected?.moderationComment ?? null,
      x.owners === null ? null : JSON.stringify(x.owners),
      rules,
      JSON.stringify(x.basis),
      nonce,
      x.eventId,
      x.personData !== undefined,
      x.personData?.provider ?? null,
      x.personData?.applicantId ?? null,
    ],
  );
  recordAudit(tx, {
    businessId: x.businessId,
    action: 'decision.recorded',
    entityId: x.entityId,
    subject: { type: 'decision', id },
    details: {
      path: x.path,
      source: x.source,
      sourceRef: x.sourceRef,
      ...x.audit,
      eventId: x.eventId,
      rules,
      decisionSha256: decisionSha256(x.decision, nonce),
      basisSha256: basisSha256(nonce, rules, inserted!.basis), // the basis as stored
    },
  });
}

/**
 * The decision's event, the verification's end (DECIDED), and the feature it turns on or off with
 * its feature_access_change when that changed the entity's features: all keyed on the decision's
 * source key, so a retried or repeated decision announces nothing twice. Returns the decision event's id.
 */
async function announce(
  tx: Tx,
  a: { businessId: string; entityId: string; now: Date; ref: VerificationRef },
  changes: { feature: { ref: FeatureRef; enabled: boolean }; event: { eventName: string; eventType: string; payload: (eventId: string) => object } },
  sourceKey: string,
): Promise<string> {
  const eventId = await recordEvent(tx, { businessId: a.businessId, entityId: a.entityId, ...changes.event, sourceKey });
  await recordVerificationStage(tx, { businessId: a.businessId, entityId: a.entityId, ref: a.ref, stage: 'DECIDED', key: sourceKey, now: a.now });
  await setFeatureAccess(tx, {
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
  tx: Tx,
  a: { businessId: string; entityId: string; submissionId: string; decision: KybDecision; now: Date },
): Promise<string> {
  await tx.query('UPDATE entities SET verified_by = $2, updated_at = now() WHERE id = $1', [a.entityId, 'universal-kyb']);
  const changes = kybOnboardingChanges(a.decision, a.entityId, a.submissionId, a.now);
  const eventId = await announce(tx, { ...a, ref: { path: 'universal-kyb', verificationId: a.submissionId } }, changes, kybVerificationKey(a.submissionId));
  // the features assigned to its members (the caller holds the business entity's row; its members' after it)
  const members = await lockAssignedMembers(tx, a.entityId);
  await refreshMemberAccess(tx, { businessId: a.businessId, memberIds: members, key: kybVerificationKey(a.submissionId), now: a.now });
  const owners = a.decision.owners.map((o) => o.entityId);
  // what it rested on: each owner's decision as it stood, the profile as saved, the documents in force
  const ownerDecisions = new Map(
    (
      await tx.query<{ entity_id: string; decision_id: string }>(
        'SELECT DISTINCT ON (entity_id) entity_id, decision_id FROM kyc_accounts WHERE entity_id = ANY ($1::uuid[]) ORDER BY entity_id, decided_at DESC',
        [owners],
      )
    ).map((r) => [String(r.entity_id), String(r.decision_id)]),
  );
  const [profile] = await tx.query<{ profile: unknown }>('SELECT profile FROM kyb_profiles WHERE entity_id = $1', [a.entityId]);
  const documents = await tx.query<{ id: string; sha256: string }>(
    'SELECT id, sha256 FROM files WHERE entity_id = ANY ($1::uuid[]) AND retired_at IS NULL ORDER BY uploaded_at, id',
    [[a.entityId, ...owners]],
  );
  await appendDecision(tx, {
    businessId: a.businessId,
    entityId: a.entityId,
    kind: 'kyb',
    path: 'universal-kyb',
    source: 'universal-kyb',
    sourceRef: a.submissionId,
    kycAccountId: null,
    submissionId: a.submissionId,
    decision: a.decision,
    rejected: a.decision.status === 'REJECTED' ? a.decision : null,
    owners: storedDecision(a.decision).owners,
    basis: {
      owners: owners.map((entityId) => ({ entityId, decisionId: ownerDecisions.get(entityId) ?? null })),
      profileSha256: profile ? canonicalSha256(profile.profile) : null,
      documents: documents.map((f) => ({ fileId: String(f.id), sha256: String(f.sha256) })),
    },
    eventId,
    audit: {},
  });
  return eventId;
}
