// A universal KYB submission (contract: universalKybWorkflowId): it waits, durably, until every
// owner declared at submission has a KYC decision — an owner's decision, a change to the profile and
// the reconciler each have a signal that makes it look again, and it looks on its own every
// KYB_RECHECK_MS in case a signal was lost — or until its deadline,
// then settles the submission once (activities/kyb.ts). A submission superseded by a change to the
// profile ends without a decision. Its history holds ids and counts only.
import { condition, continueAsNew, patched, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { GeneralActivities } from '../activities/index.ts';
import { PATCHES } from '../contract/patches.ts';
import { setVouchStatus } from './status.ts';
import {
  KYB_RECHECK_MS,
  kybOwnerDecidedSignal,
  kybProfileChangedSignal,
  kybProgressQuery,
  kybRecheckSignal,
  type KybProgress,
  type UniversalKybInput,
  type UniversalKybResult,
} from '../contract/universal-kyb.ts';

const db = proxyActivities<GeneralActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

/** Looks this many times per run before continuing as new (a 30-day wait stays far below the history limit). */
const LOOKS_PER_RUN = 500;

export async function universalKybWorkflow(input: UniversalKybInput): Promise<UniversalKybResult> {
  let wakeUps = 0;
  const progress: KybProgress = { stage: 'waiting', deadlineAt: input.deadlineAt, owners: 0, ownersDecided: 0, wakeUps: 0 };
  // each reason to look again is its own signal; the workflow reads the state itself, whichever woke it
  const wake = () => {
    wakeUps++;
    progress.wakeUps = wakeUps;
  };
  setHandler(kybOwnerDecidedSignal, wake);
  // release 1.0.3: a signal per reason (before it, every reason came as kybOwnerDecided)
  if (patched(PATCHES.kybWakeSignals.id)) for (const signal of [kybProfileChangedSignal, kybRecheckSignal]) setHandler(signal, wake);
  setHandler(kybProgressQuery, () => progress);

  const deadline = Date.parse(input.deadlineAt);
  for (let looks = 1; ; looks++) {
    const seen = wakeUps;
    const readiness = await db.kybReadiness.executeWithOptions({ summary: `Are the owners of submission ${input.submissionId} decided?` }, [
      { submissionId: input.submissionId },
    ]);
    progress.owners = readiness.owners;
    progress.ownersDecided = readiness.ownersDecided;
    if (readiness.status !== 'waiting') {
      progress.stage = 'ended';
      if (readiness.status === 'superseded') setVouchStatus('superseded');
      return { outcome: readiness.status === 'gone' || readiness.status === 'superseded' ? readiness.status : 'already-settled' };
    }
    if (readiness.ready) break;
    const left = deadline - Date.now();
    if (left <= 0) break;
    const woken = await condition(() => wakeUps !== seen, Math.min(left, KYB_RECHECK_MS));
    if (!woken && (looks >= LOOKS_PER_RUN || workflowInfo().continueAsNewSuggested)) await continueAsNew<typeof universalKybWorkflow>(input);
  }
  progress.stage = 'settling';
  setVouchStatus('settling');
  const settled = await db.settleUniversalKyb.executeWithOptions({ summary: `Decide submission ${input.submissionId}` }, [
    { submissionId: input.submissionId },
  ]);
  progress.stage = 'settled';
  if ('status' in settled) setVouchStatus(settled.status === 'APPROVED' ? 'approved' : 'rejected');
  return 'status' in settled ? { outcome: settled.outcome, status: settled.status } : { outcome: settled.outcome };
}
