// How an activity's provider request fails: a ProviderError becomes an ApplicationFailure whose
// type names its kind (`Provider.token_used`, ...), retryable or not as provider/errors.ts says;
// a 429 retries after the provider's Retry-After.
import { ApplicationFailure } from '@temporalio/common';
import { ProviderError } from '../provider/errors.ts';
import { PROVIDER_FAILURE_PREFIX } from '../workflows/definitions.ts';

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
