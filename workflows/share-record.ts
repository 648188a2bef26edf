// Onboarding one shared applicant: used by the batch and the sync workflows. Deterministic: it sees
// only record references, outcomes and failure types.
import { ActivityFailure, ApplicationFailure, isCancellation } from '@temporalio/workflow';
import type { GeneralActivities, ProviderActivities } from '../activities/index.ts';
import type { ShareOutcome } from '../activities/share.ts';
import { categoryOfProviderKind } from '../domain/import-errors.ts';
import type { ShareRef } from '../store/share-records.ts';
import { PROVIDER_FAILURE_PREFIX, RUN_LEVEL_FAILURE } from './definitions.ts';

export type ShareSteps = Pick<GeneralActivities, 'failShare'> & Pick<ProviderActivities, 'processShare' | 'recoverShare'>;

/** The provider failure kind behind an activity failure (`unavailable` for timeouts and the rest). */
function providerKind(err: ActivityFailure): string {
  const cause = err.cause;
  return cause instanceof ApplicationFailure && cause.type?.startsWith(PROVIDER_FAILURE_PREFIX) ? cause.type.slice(PROVIDER_FAILURE_PREFIX.length) : 'unavailable';
}

export async function shareRecord(ref: ShareRef, steps: ShareSteps): Promise<Exclude<ShareOutcome, { outcome: 'token_used' }>> {
  try {
    const first = await steps.processShare(ref);
    const result = first.outcome === 'token_used' ? await steps.recoverShare(ref) : first;
    if (result.outcome === 'token_used') throw ApplicationFailure.nonRetryable('recoverShare answered token_used', 'Bug');
    return result;
  } catch (err) {
    if (isCancellation(err) || !(err instanceof ActivityFailure)) throw err;
    // The retries ran out (a provider that stayed down) or the failure stops the whole run.
    const category = categoryOfProviderKind(providerKind(err));
    if (category === 'RUN_LEVEL') {
      throw ApplicationFailure.create({ type: RUN_LEVEL_FAILURE, message: 'The identity provider refused our credentials; check PROVIDER_APP_TOKEN and PROVIDER_SECRET_KEY.', nonRetryable: true });
    }
    await steps.failShare(ref, category);
    return { outcome: 'failed', category };
  }
}
