// Onboarding one shared applicant: used by the batch and the sync workflows. Deterministic: it sees
// only record references, outcomes and failure types.
import { ActivityFailure, ApplicationFailure, isCancellation, type ActivityInterfaceFor } from '@temporalio/workflow';
import type { GeneralActivities, ProviderActivities } from '../activities/index.ts';
import type { ShareOutcome } from '../activities/share.ts';
import { BUG_FAILURE, categoryOfFailureType, RUN_LEVEL_FAILURE, type ShareRef } from '../contract/share-record.ts';

export type ShareSteps = ActivityInterfaceFor<Pick<GeneralActivities, 'failShare'> & Pick<ProviderActivities, 'processShare' | 'recoverShare'>>;

/** What an operator reads beside each step in the Temporal UI (ids only). */
const named = (ref: ShareRef) => (ref.kind === 'batch' ? `row ${ref.rowNumber} of batch ${ref.batchId}` : `sync request ${ref.requestId}`);

export async function shareRecord(ref: ShareRef, steps: ShareSteps): Promise<Exclude<ShareOutcome, { outcome: 'token_used' }>> {
  try {
    const first = await steps.processShare.executeWithOptions({ summary: `Import and decide ${named(ref)}` }, [ref]);
    const result =
      first.outcome === 'token_used'
        ? await steps.recoverShare.executeWithOptions({ summary: `Find the applicant of ${named(ref)} (its token was already used)` }, [ref])
        : first;
    if (result.outcome === 'token_used') throw ApplicationFailure.nonRetryable('recoverShare answered token_used', BUG_FAILURE);
    return result;
  } catch (err) {
    if (isCancellation(err) || !(err instanceof ActivityFailure)) throw err;
    // The retries ran out (a provider that stayed down) or the failure stops the whole run.
    const type = err.cause instanceof ApplicationFailure ? err.cause.type : undefined;
    if (type === RUN_LEVEL_FAILURE) {
      throw ApplicationFailure.create({
        type: RUN_LEVEL_FAILURE,
        message: 'The identity provider refused our credentials; check PROVIDER_APP_TOKEN and PROVIDER_SECRET_KEY.',
        nonRetryable: true,
      });
    }
    const category = categoryOfFailureType(type ?? undefined);
    await steps.failShare.executeWithOptions({ summary: `Record ${named(ref)} as failed: ${category}` }, [ref, category]);
    return { outcome: 'failed', category };
  }
}
