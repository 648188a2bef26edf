// The decisions kept in each entity's record (record_decisions, appended by onboarding/decisions.ts),
// as the evidence bundle and `vouch trace` read them.
import type { EvidenceDecision } from '../domain/evidence.ts';
import { iso, type Queryable } from './db.ts';

/** Every decision of these entities, oldest first, KYC and KYB, as kept (record_decisions: evidence and trace read them). */
export async function keptDecisions(db: Queryable, entityIds: readonly string[]): Promise<EvidenceDecision[]> {
  if (entityIds.length === 0) return [];
  const rows = await db.query(
    `SELECT d.*, a.provider, a.applicant_id, a.level_name FROM record_decisions d LEFT JOIN record_kyc_accounts a ON a.id = d.kyc_account_id
      WHERE d.entity_id = ANY ($1::uuid[]) ORDER BY d.seq`,
    [entityIds],
  );
  const text = (v: unknown) => (v == null ? null : String(v));
  return rows.map((r) => ({
    id: String(r.id),
    entityId: String(r.entity_id),
    kind: r.kind as EvidenceDecision['kind'],
    path: String(r.path),
    source: String(r.source),
    sourceRef: String(r.source_ref),
    accountId: text(r.kyc_account_id),
    provider: text(r.provider),
    applicantId: text(r.applicant_id),
    levelName: text(r.level_name),
    submissionId: text(r.submission_id),
    decision: r.status as EvidenceDecision['decision'],
    rejectLabels: (r.reject_labels as string[] | null) ?? [],
    reviewRejectType: text(r.review_reject_type),
    moderationComment: text(r.moderation_comment),
    owners: r.owners ?? null,
    rules: String(r.rules),
    basis: r.basis,
    decisionNonce: text(r.nonce),
    eventId: text(r.event_id),
    decidedAt: iso(r.decided_at),
  }));
}
