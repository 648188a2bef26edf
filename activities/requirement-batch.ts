// Activities of a batch of requirement submissions, on the general queue (database work only). A
// step's records are handled in one transaction that takes them from pending to their final state
// with everything they do (their entities locked first, in id order), so a step run again after a
// crash skips what was committed and a record is handled once; should the step fail as a whole, its
// records are handled one transaction each, so one record's failure holds back no other:
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
import type { Db, Tx } from '../store/db.ts';
import { lockEntities, submitRequirementValue } from '../store/entities.ts';
import { recordVerificationStage } from '../onboarding/lifecycle-events.ts';
import {
  claimRequirementRecords,
  finishRequirementRecords,
  markRequirementBatchCompleted,
  markRequirementBatchFailed,
  markRequirementBatchStarted,
  pendingRequirementRows,
  recordTargets,
  recordsToTell,
  type ClaimedRecord,
  type RecordHandled,
} from '../store/requirement-batches.ts';
import { submitCanonicalDataIn } from '../store/universal-kyc.ts';
import { settleSubmissionIn } from '../onboarding/universal-kyc.ts';

export type RequirementBatchDeps = {
  db: Db;
  log: Logger;
  /** How long a universal KYC submission waits for its identity document (UKYC_SUBMISSION_DEADLINE_SECONDS). */
  ukycDeadlineSeconds: number;
  /** Wakes (or starts) a submission's workflow (temporal/starters.ts; idempotent). */
  ukycPartReceived(submission: UkycSubmissionRun, part: UkycPartReceived['part']): Promise<void>;
  /** What every deciding activity calls once a person's decision is committed (KYB submissions waiting on the person). */
  personDecided(entityIds: readonly string[]): Promise<void>;
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

/**
 * Heartbeats when running as an activity, at most once a second per activity (the SDK throttles what
 * it sends, but each call still costs its pipeline: once per record was 2 % of the worker's time).
 */
const lastBeat = new WeakMap<object, number>();
const heartbeat = () => {
  let context: Context;
  try {
    context = Context.current();
  } catch {
    return; // not in an activity (a test calling the function directly)
  }
  const now = Date.now();
  if (now - (lastBeat.get(context) ?? 0) < 1000) return;
  lastBeat.set(context, now);
  context.heartbeat();
};

export function createRequirementBatchActivities(deps: RequirementBatchDeps) {
  const { db } = deps;

  /**
   * Handles these records in one transaction: their entities locked first (in id order), then the
   * records still pending, each taken to its final state; returns how many it handled (none when
   * they were handled before, or their batch stopped).
   */
  function handleTogether(batchId: string, rows: readonly number[]): Promise<number> {
    return db.tx(async (tx) => {
      const alive = await lockEntities(tx, await recordTargets(tx, batchId, rows));
      const claimed = await claimRequirementRecords(tx, batchId, rows);
      const handled = [];
      for (const r of claimed) {
        heartbeat(); // a dead worker's step is taken up again within seconds, not at its timeout
        handled.push({ rowNumber: r.rowNumber, ...(await handle(tx, r, alive)) });
      }
      await finishRequirementRecords(tx, batchId, handled);
      return claimed.length;
    });
  }

  /** One claimed record, in the step's transaction (its entity is locked when it exists). */
  async function handle(tx: Tx, r: ClaimedRecord, alive: ReadonlySet<string>): Promise<RecordHandled> {
    if (r.targetEntityId === null || r.value === null || !alive.has(r.targetEntityId)) return entityGone();
    const value: unknown = JSON.parse(r.value);
    if (r.requirementSlug !== CANONICAL_KYC_SLUG) {
      await submitRequirementValue(tx, { businessId: r.businessId, entityId: r.targetEntityId, slug: r.requirementSlug, value });
      return { status: 'succeeded', outcome: 'stored', submissionId: null, wake: false };
    }
    const submission = await submitCanonicalDataIn(tx, {
      businessId: r.businessId,
      entityId: r.targetEntityId,
      value: value as string,
      deadlineSeconds: deps.ukycDeadlineSeconds,
    });
    if (submission === 'entity-gone') return entityGone();
    if (submission.idDocuments === 0) return { status: 'succeeded', outcome: 'waiting', submissionId: submission.submissionId, wake: true };
    // complete: in review and decided now, as the submission's workflow would (verification_status_change IN_REVIEW, then the decision)
    await recordVerificationStage(tx, {
      businessId: r.businessId,
      entityId: r.targetEntityId,
      ref: { path: 'universal-kyc', verificationId: submission.submissionId },
      stage: 'IN_REVIEW',
      key: ukycVerificationKey(submission.submissionId),
      now: new Date(),
    });
    await settleSubmissionIn(tx, submission.submissionId, submission.state);
    // a submission open before this record has a workflow waiting on it: it is told, and ends
    return { status: 'succeeded', outcome: 'decided', submissionId: submission.submissionId, wake: !submission.opened };
  }

  /** Tells the workflows of the submissions these records left waiting (or ended), and the KYB submissions waiting on the people they decided. */
  async function tellWaiting(batchId: string, rows: readonly number[]): Promise<void> {
    const tell = await recordsToTell(db, batchId, rows);
    for (const s of tell.wake) await deps.ukycPartReceived(s, 'data');
    await deps.personDecided(tell.decided);
  }

  return {
    startRequirementBatch: (batchId: string) => markRequirementBatchStarted(db, batchId),
    nextRequirementRows: (batchId: string, afterRow: number, limit: number) => pendingRequirementRows(db, batchId, afterRow, limit),
    finishRequirementBatch: (batchId: string) => markRequirementBatchCompleted(db, batchId),
    failRequirementBatch: (batchId: string, reason: string) => markRequirementBatchFailed(db, batchId, reason),

    /**
     * Handles these records in one transaction (if that fails, each in its own: the others are
     * done, and the step fails for the one that could not be), then tells the workflows of the
     * submissions they left waiting (or ended) and the KYB submissions waiting on the people they
     * decided. Run again after a crash, it handles what is left and tells them all again (both
     * are idempotent).
     */
    async handleRequirementRecords(batchId: string, rows: number[]): Promise<{ handled: number }> {
      let handled: number;
      try {
        handled = await handleTogether(batchId, rows);
      } catch (err) {
        // one record's failure must not hold back the others: each on its own (the failing one fails the step, which is retried)
        deps.log.warn({ err, batchId }, 'requirement batch: a step failed as a whole; its records are handled one by one');
        handled = 0;
        let failure: unknown;
        for (const row of rows) {
          try {
            handled += await handleTogether(batchId, [row]);
          } catch (err) {
            failure ??= err;
          }
        }
        if (failure !== undefined) {
          await tellWaiting(batchId, rows); // what the others did is committed: their workflows and KYB submissions hear of it now
          throw failure;
        }
      }
      await tellWaiting(batchId, rows);
      return { handled };
    },
  };
}
