// Onboarding one shared applicant: used by the batch and the sync workflows. Deterministic: it sees
// only record references, outcomes and failure types.
import { ActivityFailure, ApplicationFailure, isCancellation } from '@temporalio/workflow';
import type { GeneralActivities, ProviderActivities } from '../activities/index.ts';
import type { ShareOutcome } from '../activities/share.ts';
import { categoryOfFailureType, RUN_LEVEL_FAILURE, type ShareRef } from '../contract/workflows.ts';

export type ShareSteps = Pick<GeneralActivities, 'failShare'> & Pick<ProviderActivities, 'processShare' | 'recoverShare'>;

export async function shareRecord(ref: ShareRef, steps: ShareSteps): Promise<Exclude<ShareOutcome, { outcome: 'token_used' }>> {
  try {
    const first = await steps.processShare(ref);
    const result = first.outcome === 'token_used' ? await steps.recoverShare(ref) : first;
    if (result.outcome === 'token_used') throw ApplicationFailure.nonRetryable('recoverShare answered token_used', 'Bug');
    return result;
  } catch (err) {
    if (isCancellation(err) || !(err instanceof ActivityFailure)) throw err;
    // The retries ran out (a provider that stayed down) or the failure stops the whole run.
    const type = err.cause instanceof ApplicationFailure ? err.cause.type : undefined;
    if (type === RUN_LEVEL_FAILURE) {
      throw ApplicationFailure.create({ type: RUN_LEVEL_FAILURE, message: 'The identity provider refused our credentials; check PROVIDER_APP_TOKEN and PROVIDER_SECRET_KEY.', nonRetryable: true });
    }
    const category = categoryOfFailureType(type ?? undefined);
    await steps.failShare(ref, category);
    return { outcome: 'failed', category };
  }
}
