// Activities that call the identity provider: exactly one provider request per attempt. They run on
// the provider task queue, whose rate limit the Temporal server holds across every worker.
// A ProviderError becomes an ApplicationFailure whose type names its kind (`Provider.token_used`,
// ...), retryable or not as provider/errors.ts says; a 429 retries after the provider's Retry-After.
import { ApplicationFailure } from '@temporalio/common';
import { ProviderError } from '../provider/errors.ts';
import type { IdentityProvider, ImportApplicantInput, ProviderApplicant } from '../provider/types.ts';

export const PROVIDER_FAILURE_PREFIX = 'Provider.';

export function toActivityFailure(err: unknown): unknown {
  if (!(err instanceof ProviderError)) return err;
  return ApplicationFailure.create({
    type: `${PROVIDER_FAILURE_PREFIX}${err.kind}`,
    message: err.message,
    nonRetryable: !err.retryable,
    nextRetryDelay: err.kind === 'rate_limited' && err.retryAfterMs !== null ? err.retryAfterMs : undefined,
    details: [{ kind: err.kind, status: err.status, providerCode: err.providerCode, correlationId: err.correlationId }],
  });
}

/** Runs one provider request, turning its ProviderError into the matching Temporal failure. */
export async function once<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw toActivityFailure(err);
  }
}

export function createProviderActivities(deps: { provider: IdentityProvider }) {
  return {
    importApplicant: (input: ImportApplicantInput): Promise<ProviderApplicant> => once(() => deps.provider.importApplicant(input)),
    getApplicant: (applicantId: string): Promise<ProviderApplicant> => once(() => deps.provider.getApplicant(applicantId)),
  };
}
