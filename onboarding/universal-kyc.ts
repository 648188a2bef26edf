// Settling a universal KYC submission, in the caller's transaction: what its decision triggers. The
// submission's workflow settles it (activities/universal-kyc.ts) and so does a requirement batch's
// record that completes it at once (activities/requirement-batch.ts): both call settleSubmissionIn.
import { decide, type Decision } from '../domain/reliance.ts';
import { cardProcessorTokenTaken } from '../domain/share-fields.ts';
import { cardProcessorTokenInUse, identityOfCanonical, incompleteSubmission, storedCanonicalKyc } from '../domain/universal-kyc.ts';
import { verifiedPersonOf } from '../domain/verified-person.ts';
import { ukycVerificationKey } from '../domain/lifecycle-events.ts';
import type { Tx } from '../store/db.ts';
import { cardProcessorTokenHolder } from '../store/entities.ts';
import { loadSubmission, settleSubmission, type SubmissionState } from '../store/universal-kyc.ts';
import { keepPersonData } from '../store/verified-persons.ts';
import { applyDecision } from './decisions.ts';

/** How a settling ended: decided (complete) or expired (decided as incomplete); or nothing to do. */
export type UkycSettled =
  { outcome: 'decided' | 'expired'; status: 'APPROVED' | 'REJECTED'; eventId: string } | { outcome: 'already-settled' } | { outcome: 'gone' };

/**
 * Settles a waiting submission in the caller's transaction: decided from its data when it holds an
 * identity document, else decided as incomplete; the person's data, the KYC account, the
 * requirements' statuses and the decision event are written with it. The workflow's settling step
 * and a requirement batch's record (which decides a complete submission at once) both call it;
 * `held` is the submission as the caller's transaction left it with its person locked (the batch's
 * submitCanonicalDataIn answer), else it is locked and read here.
 */
export async function settleSubmissionIn(tx: Tx, submissionId: string, held?: SubmissionState): Promise<UkycSettled & { entityId?: string }> {
  const s = held ?? (await loadSubmission(tx, submissionId, true));
  if (!s) return { outcome: 'gone' };
  if (s.status !== 'waiting') return { outcome: 'already-settled' };
  if (s.data === null) throw new Error(`submission ${submissionId} has no KYC data`); // opened only with data
  const payload = storedCanonicalKyc(s.data); // parsed and checked once, here where the row comes in
  const complete = s.idDocuments > 0;
  const now = new Date();
  const applicantId = `ukyc-${submissionId}`;
  const provider = payload.provider.name;
  let decision: Decision;
  let cardToken: string | null = payload.cardProcessorPublicToken ?? null;
  if (complete) {
    const identity = identityOfCanonical(payload);
    decision = decide(identity, now);
    await keepPersonData(tx, s.entityId, provider, applicantId, verifiedPersonOf(identity)); // the person is locked: it exists
    if (cardToken && cardProcessorTokenTaken(s.entityId, await cardProcessorTokenHolder(tx, s.businessId, cardToken))) {
      decision = cardProcessorTokenInUse(decision);
      cardToken = null;
    }
  } else {
    decision = incompleteSubmission((Date.parse(s.deadlineAt) - Date.parse(s.createdAt)) / 1000);
  }
  const eventId = await applyDecision(tx, {
    businessId: s.businessId,
    entityId: s.entityId,
    provider,
    applicantId,
    levelName: null,
    source: 'universal-kyc',
    sourceRef: submissionId,
    decision,
    path: 'universal-kyc',
    verification: { verificationId: submissionId },
    eventSourceKey: ukycVerificationKey(submissionId),
    cardProcessorPublicToken: decision.status === 'APPROVED' ? cardToken : null,
    now,
  });
  await settleSubmission(tx, submissionId, { status: complete ? 'decided' : 'expired', decision: decision.status, eventId });
  return { outcome: complete ? 'decided' : 'expired', status: decision.status, eventId, entityId: s.entityId };
}
