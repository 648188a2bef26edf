// A person verified through the provider's hosted SDK (one workflow per INDIVIDUAL entity): it
// mints SDK tokens for the API (update sdkToken) and decides every review the provider calls back
// about (signal applicantReviewed), one at a time, each by reading the applicant anew — so a
// repeated or out-of-order callback decides the applicant's current review, once. It ends after
// `idleMs` with nothing to do; a later token request or callback starts it again.
import { allHandlersFinished, condition, continueAsNew, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { ProviderActivities } from '../activities/index.ts';
import {
  applicantReviewedSignal,
  personProgressQuery,
  sdkTokenUpdate,
  type PersonVerificationInput,
  type PersonVerificationResult,
} from '../contract/person-verification.ts';
import { providerPriority } from '../contract/provider-queue.ts';
import { setVouchStatus } from './status.ts';

export async function personVerificationWorkflow(input: PersonVerificationInput): Promise<PersonVerificationResult> {
  const onProviderQueue = {
    taskQueue: input.providerTaskQueue,
    priority: providerPriority('sync', input.businessId),
    startToCloseTimeout: '15 seconds',
  } as const;
  // a caller waits for the token: a few quick attempts, then the API answers 503
  const forCaller = proxyActivities<ProviderActivities>({
    ...onProviderQueue,
    retry: { initialInterval: '500 milliseconds', backoffCoefficient: 2, maximumAttempts: 3 },
  });
  // a review is decided however long the provider stays down
  const forReview = proxyActivities<ProviderActivities>({
    ...onProviderQueue,
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '5 minutes' },
  });

  const waiting: string[] = [];
  let touched = false;
  let decided = input.decided ?? 0;
  let deciding = false;
  setHandler(personProgressQuery, () => ({ waiting: waiting.length, deciding, decided }));
  setHandler(sdkTokenUpdate, async () => {
    touched = true;
    return forCaller.createSdkToken({ entityId: input.entityId });
  });
  setHandler(applicantReviewedSignal, ({ applicantId }) => {
    if (!waiting.includes(applicantId)) waiting.push(applicantId);
  });

  for (;;) {
    touched = false;
    const busy = await condition(() => waiting.length > 0 || touched, input.idleMs);
    if (!busy) break;
    const applicantId = waiting.shift();
    if (applicantId === undefined) continue;
    deciding = true;
    setVouchStatus('deciding');
    const outcome = await forReview.decidePersonReview.executeWithOptions({ summary: `Decide the review of applicant ${applicantId}` }, [
      { entityId: input.entityId, applicantId },
    ]);
    deciding = false;
    setVouchStatus(outcome.outcome === 'decided' ? (outcome.status === 'APPROVED' ? 'approved' : 'rejected') : 'waiting');
    decided++;
    if (workflowInfo().continueAsNewSuggested && waiting.length === 0) {
      await condition(allHandlersFinished);
      await continueAsNew<typeof personVerificationWorkflow>({ ...input, decided });
    }
  }
  await condition(allHandlersFinished);
  return { decided };
}
