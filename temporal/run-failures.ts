// How a run we waited for failed, told in our terms: the API's use cases turn it into a refusal
// without knowing Temporal's error classes (a workflow's failure, an update's, an activity's cause).
import { TimeoutFailure, WorkflowFailedError, WorkflowUpdateFailedError } from '@temporalio/client';
import { ActivityFailure, ApplicationFailure } from '@temporalio/common';

/** `type` and `nonRetryable` of the ApplicationFailure behind it (none: a crash or a timeout); `timedOut` when the run's own timeout ended it. */
export type RunFailure = { type: string | undefined; nonRetryable: boolean; message: string; timedOut: boolean };
export type RunOutcome<T> = { ok: true; value: T } | { ok: false; failure: RunFailure; error: Error };

/** The failure a waited-for workflow or update ended with, or undefined for any other error (which the caller rethrows). */
export function runFailureOf(err: unknown): RunFailure | undefined {
  if (!(err instanceof WorkflowFailedError) && !(err instanceof WorkflowUpdateFailedError)) return undefined;
  const cause = err.cause instanceof ActivityFailure ? err.cause.cause : err.cause;
  const app = cause instanceof ApplicationFailure ? cause : undefined;
  return {
    type: app?.type ?? undefined,
    nonRetryable: app?.nonRetryable ?? false,
    message: app?.message ?? err.message,
    timedOut: err.cause instanceof TimeoutFailure,
  };
}

/** Runs `wait`, answering its value or the failure it ended with; any other error is thrown. */
export async function outcomeOfRun<T>(wait: () => Promise<T>): Promise<RunOutcome<T>> {
  try {
    return { ok: true, value: await wait() };
  } catch (err) {
    const failure = runFailureOf(err);
    if (!failure) throw err;
    return { ok: false, failure, error: err as Error };
  }
}
