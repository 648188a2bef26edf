// Activities of a batch of requirement submissions, on the general queue (database work only). Each
// record is handled in one transaction that takes it from pending to its final state with
// everything it does, so a step run again after a crash skips what was committed and a record is
// handled once:
// - canonical KYC data goes into the person's submission exactly as POST /entity/{entityId}/requirement
//   puts it (store/universal-kyc.ts); a submission that already holds an identity document is
//   decided in the same transaction (settleSubmissionIn, as the submission's workflow would decide
//   it), so the decision event and its webhooks follow at once; one still waiting for its document
//   is handed to its workflow (the deadline, the documents uploaded later) once the record commits;
// - any other requirement's value is stored on the entity (store/entities.ts submitRequirementValue).
import { Context } from '@temporalio/activity';
import type { Logger } from 'pino';
import type { UkycPartReceived, UkycSubmissionRun } from '../contract/universal-kyc.ts';
import { REQUIREMENT_RECORD_CATEGORIES } from '../domain/requirement-batch.ts';
import { ukycVerificationKey } from '../domain/lifecycle-events.ts';
import { CANONICAL_KYC_SLUG } from '../domain/universal-kyc.ts';
import type { Db } from '../store/db.ts';
import { lockEntity, submitRequirementValue } from '../store/entities.ts';
import { recordVerificationStage } from '../store/lifecycle-events.ts';
import {
  claimRequirementRecord,
  finishRequirementRecord,
  markRequirementBatchCompleted,
  markRequirementBatchFailed,
  markRequirementBatchStarted,
  pendingRequirementRows,
  recordTarget,
  recordsToTell,
  type RecordHandled,
} from '../store/requirement-batches.ts';
import { submitCanonicalDataIn } from '../store/universal-kyc.ts';
import { settleSubmissionIn } from './universal-kyc.ts';

export type RequirementBatchDeps = {
  db: Db;
  log: Logger;
  /** How long a universal KYC submission waits for its identity document (UKYC_SUBMISSION_DEADLINE_SECONDS). */
  ukycDeadlineSeconds: number;
  /** Wakes (or starts) a submission's workflow (temporal/starters.ts; idempotent). */
  ukycPartReceived(submission: UkycSubmissionRun, part: UkycPartReceived['part']): Promise<void>;
  /** What every deciding activity calls once a person's decision is committed (KYB submissions waiting on the person). */
  personDecided(entityId: string): Promise<void>;
};

const entityGone = (): RecordHandled => ({
  status: 'failed',
  failure: {
    category: 'ENTITY_NOT_FOUND',
    message: 'The entity was deleted after the upload, so nothing was submitted. Create it again with POST /entity if you still need it.',
    path: '',
  },
  retryable: REQUIREMENT_RECORD_CATEGORIES.ENTITY_NOT_FOUND.retryable,
});

/** Heartbeats when running as an activity (the SDK throttles them). */
const heartbeat = () => {
  try {
    Context.current().heartbeat();
  } catch {
    // not in an activity (a test calling the function directly)
  }
};

export function createRequirementBatchActivities(deps: RequirementBatchDeps) {
  const { db } = deps;

  /** One record in its own transaction (its entity locked first, then the record); false when it was handled before, or its batch stopped. */
  async function handle(batchId: string, rowNumber: number): Promise<boolean> {
    return db.tx(async (q) => {
      const target = await recordTarget(q, batchId, rowNumber);
      const alive = target !== null && (await lockEntity(q, target));
      const r = await claimRequirementRecord(q, batchId, rowNumber);
      if (!r) return false;
      if (!alive || r.targetEntityId === null || r.value === null) {
        await finishRequirementRecord(q, batchId, rowNumber, entityGone());
        return true;
      }
      const value: unknown = JSON.parse(r.value);
      if (r.requirementSlug !== CANONICAL_KYC_SLUG) {
        await submitRequirementValue(q, { businessId: r.businessId, entityId: r.targetEntityId, slug: r.requirementSlug, value });
        await finishRequirementRecord(q, batchId, rowNumber, { status: 'succeeded', outcome: 'stored', submissionId: null, wake: false });
        return true;
      }
      const submission = await submitCanonicalDataIn(q, {
        businessId: r.businessId,
        entityId: r.targetEntityId,
        value: value as string,
        deadlineSeconds: deps.ukycDeadlineSeconds,
      });
      if (submission === 'entity-gone') {
        await finishRequirementRecord(q, batchId, rowNumber, entityGone());
        return true;
      }
      if (submission.idDocuments === 0) {
        await finishRequirementRecord(q, batchId, rowNumber, { status: 'succeeded', outcome: 'waiting', submissionId: submission.submissionId, wake: true });
        return true;
      }
      // complete: in review and decided now, as the submission's workflow would (verification_status_change IN_REVIEW, then the decision)
      await recordVerificationStage(q, {
        businessId: r.businessId,
        entityId: r.targetEntityId,
        ref: { path: 'universal-kyc', verificationId: submission.submissionId },
        stage: 'IN_REVIEW',
        key: ukycVerificationKey(submission.submissionId),
        now: new Date(),
      });
      await settleSubmissionIn(q, submission.submissionId);
      // a submission open before this record has a workflow waiting on it: it is told, and ends
      await finishRequirementRecord(q, batchId, rowNumber, {
        status: 'succeeded',
        outcome: 'decided',
        submissionId: submission.submissionId,
        wake: !submission.opened,
      });
      return true;
    });
  }

  return {
    startRequirementBatch: (batchId: string) => markRequirementBatchStarted(db, batchId),
    nextRequirementRows: (batchId: string, afterRow: number, limit: number) => pendingRequirementRows(db, batchId, afterRow, limit),
    finishRequirementBatch: (batchId: string) => markRequirementBatchCompleted(db, batchId),
    failRequirementBatch: (batchId: string, reason: string) => markRequirementBatchFailed(db, batchId, reason),

    /**
     * Handles these records, each in its own transaction, then tells the workflows of the
     * submissions they left waiting (or ended) and the KYB submissions waiting on the people they
     * decided. Run again after a crash, it handles what is left and tells them all again (both
     * are idempotent).
     */
    async handleRequirementRecords(batchId: string, rows: number[]): Promise<{ handled: number }> {
      let handled = 0;
      for (const row of rows) {
        heartbeat(); // a dead worker's step is taken up again within seconds, not at its timeout
        if (await handle(batchId, row)) handled++;
      }
      const tell = await recordsToTell(db, batchId, rows);
      for (const s of tell.wake) await deps.ukycPartReceived(s, 'data');
      for (const entityId of tell.decided) await deps.personDecided(entityId);
      return { handled };
    },
  };
}
