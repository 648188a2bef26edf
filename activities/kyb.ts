// Activities of universal KYB, on the general queue (database work only). The workflow asks how far
// a submission is (are its owners decided?) and, once they are or its deadline has passed, settles
// it: the decision by domain/kyb.ts from the owners' latest KYC decisions and the manifest's
// completeness check, the profile's status, the business card program and the kyb_status_change
// event, in one transaction. Only ids and counts go back to the workflow.
import type { Logger } from 'pino';
import type { KybSubmissionRun } from '../contract/universal-kyb.ts';
import { decideKyb, decideKybAtDeadline, type OwnerDecision } from '../domain/kyb.ts';
import { buildManifest, missingFromManifest } from '../domain/kyb-manifest.ts';
import type { Db, Queryable } from '../store/db.ts';
import { applyKybDecision } from '../onboarding/decisions.ts';
import { kybVerificationKey } from '../domain/lifecycle-events.ts';
import { recordVerificationStage } from '../onboarding/lifecycle-events.ts';
import {
  declaredOwners,
  latestOwnerDecisions,
  liveKybFiles,
  loadKybSubmission,
  settleKybSubmission,
  waitingSubmissionsOfOwners,
  type KybSubmissionState,
  type OwnerRef,
} from '../store/kyb.ts';

export type KybReadiness = { status: KybSubmissionState['status'] | 'gone'; ready: boolean; owners: number; ownersDecided: number };
export type KybSettled =
  { outcome: 'decided' | 'expired'; status: 'APPROVED' | 'REJECTED'; eventId: string } | { outcome: 'already-settled' } | { outcome: 'gone' };

/** Tells the KYB submission's workflow that one of its owners was decided (starting it if it is gone). */
export type OwnerDecidedWaker = (submission: KybSubmissionRun, ownerEntityId: string) => Promise<void>;

// Each step loads the submission and its business's declared owners once, and passes them to these.
async function ownersOf(db: Queryable, s: KybSubmissionState, declared: readonly OwnerRef[]): Promise<OwnerDecision[]> {
  const decisions = await latestOwnerDecisions(db, s.owners);
  const refs = new Map(declared.map((o) => [o.entityId, o.externalId]));
  return s.owners.map((id) => ({ entityId: id, externalId: refs.get(id) ?? null, decision: decisions.get(id) ?? null }));
}

async function missingDocuments(db: Queryable, s: KybSubmissionState, declared: readonly OwnerRef[]): Promise<string[]> {
  const current = declared.filter((o) => s.owners.includes(o.entityId));
  return missingFromManifest(buildManifest(s.entityId, current, await liveKybFiles(db, s.entityId, s.owners)));
}

export function createKybActivities(deps: { db: Db }) {
  const { db } = deps;
  return {
    async kybReadiness(input: { submissionId: string }): Promise<KybReadiness> {
      const s = await loadKybSubmission(db, input.submissionId);
      if (!s) return { status: 'gone', ready: false, owners: 0, ownersDecided: 0 };
      const owners = await ownersOf(db, s, await declaredOwners(db, s.entityId));
      const decided = owners.filter((o) => o.decision !== null).length;
      const ready = decided === owners.length;
      if (s.status === 'waiting') {
        // the stage the client sees (verification_status_change), once each per submission
        const stage = ready ? 'IN_REVIEW' : 'WAITING_FOR_PERSON';
        await recordVerificationStage(db, {
          businessId: s.businessId,
          entityId: s.entityId,
          ref: { path: 'universal-kyb', verificationId: input.submissionId },
          stage,
          key: kybVerificationKey(input.submissionId),
          now: new Date(),
        });
      }
      return { status: s.status, ready, owners: owners.length, ownersDecided: decided };
    },

    /** Decides the submission: from its owners when all are decided, else as it stands at the deadline. A settled one stays as it is. */
    async settleUniversalKyb(input: { submissionId: string }): Promise<KybSettled> {
      return db.tx(async (tx) => {
        const s = await loadKybSubmission(tx, input.submissionId, true);
        if (!s) return { outcome: 'gone' };
        if (s.status !== 'waiting') return { outcome: 'already-settled' };
        const declared = await declaredOwners(tx, s.entityId);
        const owners = await ownersOf(tx, s, declared);
        const missing = await missingDocuments(tx, s, declared);
        const onTime = decideKyb(owners, missing);
        const decision = onTime ?? decideKybAtDeadline(owners, missing, (Date.parse(s.deadlineAt) - Date.parse(s.createdAt)) / 1000);
        const eventId = await applyKybDecision(tx, {
          businessId: s.businessId,
          entityId: s.entityId,
          submissionId: input.submissionId,
          decision,
          now: new Date(),
        });
        const outcome = onTime ? 'decided' : 'expired';
        await settleKybSubmission(tx, input.submissionId, { entityId: s.entityId, status: outcome, decision: decision.status, eventId });
        return { outcome, status: decision.status, eventId };
      });
    },
  };
}

/**
 * Called after a person's decision is committed (any individual path): wakes every waiting KYB
 * submission that names the person as an owner. A wake that fails is logged, not retried here:
 * the submission's workflow looks again on its own every KYB_RECHECK_MS.
 */
export function createPersonDecidedHook(deps: { db: Db; log: Logger; ownerDecided: OwnerDecidedWaker }) {
  /** One person, or many decided together (a requirement batch's step: one look for all of them). */
  return async (decided: string | readonly string[]): Promise<void> => {
    const people = typeof decided === 'string' ? [decided] : decided;
    if (people.length === 0) return;
    let waiting: Awaited<ReturnType<typeof waitingSubmissionsOfOwners>> = [];
    try {
      waiting = await waitingSubmissionsOfOwners(deps.db, people);
    } catch (err) {
      deps.log.warn({ err, people: people.slice(0, 10) }, 'KYB submissions waiting on these owners were not woken; they look again within minutes');
    }
    for (const { submission, ownerId } of waiting) {
      // one wake that fails holds back no other
      await deps
        .ownerDecided(submission, ownerId)
        .catch((err: unknown) =>
          deps.log.warn(
            { err, entityId: ownerId, submissionId: submission.submissionId },
            'a KYB submission waiting on this owner was not woken; it looks again within minutes',
          ),
        );
    }
  };
}
