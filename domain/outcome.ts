// What a use case answers: its value, or a refusal named after the error catalogue. Use cases
// return refusals instead of throwing; the API maps both to HTTP in one place (api/outcome.ts).
import type { ErrorName } from './errors.ts';

export type Refusal = {
  readonly ok: false;
  readonly error: ErrorName;
  readonly message: string;
  /** The header, field or parameter at fault; empty when none. */
  readonly parameter: string;
  /** Fields added to the error body (e.g. requestId, batchId, details). */
  readonly extra: Readonly<Record<string, unknown>>;
  /** When to try again (a limit that frees itself): the API sends it as Retry-After. */
  readonly retryAfterSeconds?: number;
};

export type Outcome<T> = { readonly ok: true; readonly value: T } | Refusal;

export const done = <T>(value: T): Outcome<T> => ({ ok: true, value });

export const refuse = (
  error: ErrorName,
  message: string,
  options: { parameter?: string; extra?: Record<string, unknown>; retryAfterSeconds?: number } = {},
): Refusal => ({
  ok: false,
  error,
  message,
  parameter: options.parameter ?? '',
  extra: options.extra ?? {},
  ...(options.retryAfterSeconds !== undefined ? { retryAfterSeconds: options.retryAfterSeconds } : {}),
});
