// How an activity's provider request fails, classified once: a ProviderError becomes an
// ApplicationFailure whose type carries the record-level category (`RecordFailure.TOKEN_ALREADY_USED`,
// contract/share-record.ts) — or `RunLevel` when our own credentials are refused — retryable or not as
// provider/errors.ts says, a 429 retried after the provider's Retry-After. The provider's kind,
// status and correlation id ride along in the details, for operators.
import { ApplicationFailure } from '@temporalio/common';
import { recordFailureType, RUN_LEVEL_FAILURE } from '../contract/share-record.ts';
import { categoryOfProviderKind } from '../domain/import-errors.ts';
import { ProviderError } from '../provider/errors.ts';

export function toActivityFailure(err: unknown): unknown {
  if (!(err instanceof ProviderError)) return err;
  const category = categoryOfProviderKind(err.kind);
  return ApplicationFailure.create({
    type: category === 'RUN_LEVEL' ? RUN_LEVEL_FAILURE : recordFailureType(category),
    message: err.message,
    nonRetryable: !err.retryable,
    nextRetryDelay: err.kind === 'rate_limited' && err.retryAfterMs !== null ? err.retryAfterMs : undefined,
    details: [{ kind: err.kind, status: err.status, providerCode: err.providerCode, correlationId: err.correlationId }],
  });
}

/** Runs one provider request, turning its ProviderError into the matching Temporal failure. */
export async function providerCall<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw toActivityFailure(err);
  }
}
