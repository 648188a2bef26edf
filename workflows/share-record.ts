// Onboarding one shared applicant, as steps of activities: used by the batch and the sync
// workflows. Deterministic: it sees only record references, outcomes and failure types.
import { ActivityFailure, ApplicationFailure, isCancellation } from '@temporalio/workflow';
import type { GeneralActivities, ProviderActivities } from '../activities/index.ts';
import { categoryOfProviderKind, type ImportErrorCategory } from '../domain/import-errors.ts';
import type { ShareRef } from '../store/share-records.ts';
import { RUN_LEVEL_FAILURE } from './definitions.ts';

export type ShareSteps = Pick<GeneralActivities, 'prepareShare' | 'completeShare' | 'failShare'> & Pick<ProviderActivities, 'importShared' | 'findImportedApplicant'>;

export type ShareOutcome = { outcome: 'succeeded' | 'done' } | { outcome: 'failed'; category: ImportErrorCategory };

/** The provider failure kind behind an activity failure (`unavailable` for timeouts). */
function providerKind(err: unknown): string {
  if (err instanceof ActivityFailure) {
    const cause = err.cause;
    if (cause instanceof ApplicationFailure && cause.type?.startsWith('Provider.')) return cause.type.slice('Provider.'.length);
    return 'unavailable';
  }
  throw err;
}

export async function shareRecord(ref: ShareRef, steps: ShareSteps): Promise<ShareOutcome> {
  const prepared = await steps.prepareShare(ref);
  if (prepared.outcome !== 'ready') return prepared.outcome === 'done' ? { outcome: 'done' } : prepared;
  try {
    await steps.importShared(ref);
  } catch (err) {
    if (isCancellation(err)) throw err;
    const kind = providerKind(err);
    // "Already used" after an attempt whose answer we lost: the token may have been used by us.
    const recovered = kind === 'token_used' && (await steps.findImportedApplicant(ref));
    if (!recovered) {
      const category = categoryOfProviderKind(kind);
      if (category === 'RUN_LEVEL') {
        throw ApplicationFailure.create({ type: RUN_LEVEL_FAILURE, message: 'The identity provider refused our credentials; check PROVIDER_APP_TOKEN and PROVIDER_SECRET_KEY.', nonRetryable: true });
      }
      await steps.failShare(ref, category);
      return { outcome: 'failed', category };
    }
  }
  const done = await steps.completeShare(ref);
  if (done.outcome === 'failed') return { outcome: 'failed', category: done.error.category };
  return { outcome: done.outcome === 'succeeded' ? 'succeeded' : 'done' };
}
