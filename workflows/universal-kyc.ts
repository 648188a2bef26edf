// A universal KYC submission (contract: universalKycWorkflowId): it waits, durably, for the KYC
// data and an identity document file — each arrival signals it to look again — until its deadline,
// then settles the submission once (activities/universal-kyc.ts): decided from the data, or decided
// as incomplete. Its history holds ids and outcomes only; the data and files stay in PostgreSQL
// and the file store.
import { condition, proxyActivities, setHandler } from '@temporalio/workflow';
import type { GeneralActivities } from '../activities/index.ts';
import { setVouchStatus } from './status.ts';
import { ukycPartReceivedSignal, ukycProgressQuery, type UkycProgress, type UniversalKycInput, type UniversalKycResult } from '../contract/universal-kyc.ts';

const db = proxyActivities<GeneralActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

export async function universalKycWorkflow(input: UniversalKycInput): Promise<UniversalKycResult> {
  let wakeUps = 0;
  let stage: UkycProgress['stage'] = 'waiting';
  setHandler(ukycPartReceivedSignal, () => {
    wakeUps++;
  });
  setHandler(ukycProgressQuery, () => ({ stage, deadlineAt: input.deadlineAt, wakeUps }));

  const deadline = Date.parse(input.deadlineAt);
  for (;;) {
    const seen = wakeUps;
    const readiness = await db.ukycReadiness.executeWithOptions({ summary: `Has submission ${input.submissionId} its data and a document?` }, [
      { submissionId: input.submissionId },
    ]);
    if (readiness.status !== 'waiting') return { outcome: readiness.status === 'gone' ? 'gone' : 'already-settled' };
    if (readiness.complete) break;
    const left = deadline - Date.now();
    if (left <= 0) break;
    const woken = await condition(() => wakeUps !== seen, left);
    if (!woken) break; // the deadline passed: settle as it is (complete if a signal was lost)
  }
  stage = 'settling';
  setVouchStatus('settling');
  const settled = await db.settleUniversalKyc.executeWithOptions({ summary: `Decide submission ${input.submissionId}` }, [
    { submissionId: input.submissionId },
  ]);
  stage = 'settled';
  if ('status' in settled) setVouchStatus(settled.outcome === 'expired' ? 'expired' : settled.status === 'APPROVED' ? 'approved' : 'rejected');
  return 'status' in settled ? { outcome: settled.outcome, status: settled.status } : { outcome: settled.outcome };
}
