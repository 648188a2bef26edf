// The sandbox control's play (contract: sandboxReviewWorkflowId): the end user's part — an
// applicant under the person's SDK user id with its identity document, unless the person already
// has one — then the reviewer's testCompleted, whose callback the person's verification workflow
// decides. A test person for an applicant that already exists is refused, not silently ignored.
import { ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { ProviderActivities } from '../activities/index.ts';
import { providerPriority } from '../contract/provider-queue.ts';
import {
  SANDBOX_APPLICANT_EXISTS_FAILURE,
  SANDBOX_APPLICANT_MISSING_FAILURE,
  type SandboxReviewInput,
  type SandboxReviewResult,
} from '../contract/sandbox-review.ts';
import { setVouchStatus } from './status.ts';

export async function sandboxReviewWorkflow(input: SandboxReviewInput): Promise<SandboxReviewResult> {
  try {
    const played = await play(input);
    setVouchStatus('completed');
    return played;
  } catch (err) {
    setVouchStatus('failed');
    throw err;
  }
}

async function play(input: SandboxReviewInput): Promise<SandboxReviewResult> {
  // a client waits on this: a few quick attempts, then the API answers 503
  const provider = proxyActivities<ProviderActivities>({
    taskQueue: input.providerTaskQueue,
    priority: providerPriority('sync', input.businessId),
    startToCloseTimeout: '15 seconds',
    retry: { initialInterval: '500 milliseconds', backoffCoefficient: 2, maximumAttempts: 3 },
  });
  for (let round = 0; round < 2; round++) {
    const existing = await provider.findSandboxApplicant({ entityId: input.entityId });
    if (existing) {
      if (input.withPerson && round === 0) {
        throw ApplicationFailure.nonRetryable(
          'The person already has an applicant at the provider; its data is fixed when it is created. Leave out person, or use a new entity.',
          SANDBOX_APPLICANT_EXISTS_FAILURE,
        );
      }
      await provider.completeSandboxReview({ requestId: input.requestId, applicantId: existing });
      return { applicantId: existing, created: round > 0 };
    }
    const created = await provider.createSandboxApplicant({ requestId: input.requestId });
    if (created) {
      await provider.addSandboxIdDocument({ requestId: input.requestId, applicantId: created });
      await provider.completeSandboxReview({ requestId: input.requestId, applicantId: created });
      return { applicantId: created, created: true };
    }
    // created meanwhile (by an earlier attempt whose answer was lost): look it up once more
  }
  throw ApplicationFailure.nonRetryable('The applicant could not be created or found at the provider.', SANDBOX_APPLICANT_MISSING_FAILURE);
}
