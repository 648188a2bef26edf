// Maps Sumsub's answers to our error kinds. Sumsub answers an expired, malformed or used share
// token with 401 and a description beginning "Token is invalid"; every other 401 means our own
// credentials or signature were refused. Reuse failures after the token check are 400 with an
// errorCode in 105xx.
import { ProviderError, type ProviderErrorKind } from '../errors.ts';

export type SumsubErrorBody = { description?: string; code?: number; correlationId?: string; errorCode?: number; errorName?: string };

/** Reuse error codes (105xx) and names that mean the level is not configured in our account. */
const LEVEL_UNKNOWN = /level-not-found|level not found|no such level|unknown level/i;
const TOKEN_PROBLEM = /^token is invalid|share ?token/i;
const TOKEN_USED = /already used|has been used|was used|consumed/i;

export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | null {
  const v = Array.isArray(value) ? value[0] : value;
  if (!v) return null;
  if (/^\d+(\.\d+)?$/.test(v.trim())) return Math.round(Number(v) * 1000);
  const at = Date.parse(v);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

export function classifyHttpError(status: number, body: SumsubErrorBody, headers: Record<string, string | string[] | undefined>): ProviderError {
  const description = body.description ?? '';
  const meta = {
    status,
    providerCode: body.errorCode ?? null,
    correlationId: body.correlationId ?? null,
    detail: [body.errorName, description].filter(Boolean).join(': ') || null,
  };
  const fail = (kind: ProviderErrorKind, message: string, extra: { retryAfterMs?: number | null } = {}) =>
    new ProviderError(kind, message, { ...meta, ...extra });

  if (status === 401) {
    if (TOKEN_PROBLEM.test(description)) {
      if (TOKEN_USED.test(description)) return fail('token_used', 'The share token was already used.');
      return fail('token_invalid', /ttl|expired|invalid now/i.test(description) ? 'The share token has expired.' : 'The share token is malformed or unknown.');
    }
    return fail('credentials', 'The identity provider refused our credentials or request signature.');
  }
  if (status === 403) return fail('credentials', 'The identity provider does not allow this operation for our account.');
  if (status === 429)
    return fail('rate_limited', 'The identity provider rate limit was reached.', { retryAfterMs: parseRetryAfter(headers['retry-after']) ?? 5000 });
  if (status >= 500) return fail('unavailable', `The identity provider answered ${status}.`);
  if (LEVEL_UNKNOWN.test(`${body.errorName ?? ''} ${description}`))
    return fail('level_unknown', 'The verification level is not configured in our identity provider account.');
  if (status === 404) return fail('not_found', 'The identity provider has no such applicant.');
  if (status === 400 && body.errorCode !== undefined && body.errorCode >= 10500 && body.errorCode < 10600) {
    return fail('data_refused', "The identity provider refused to share the applicant's data for this level.");
  }
  if (status === 409) return fail('data_refused', 'The identity provider refused the applicant (conflict).');
  return fail('bad_request', `The identity provider refused the request (${status}).`);
}

/** Network-level failures: timeouts, refused or reset connections, DNS. All retryable. */
export function classifyNetworkError(err: unknown): ProviderError {
  const e = err as { code?: string; name?: string; message?: string };
  const what = e.code === 'ETIMEDOUT' || e.name === 'TimeoutError' ? 'timed out' : `failed (${e.code ?? e.name ?? 'network error'})`;
  return new ProviderError('unavailable', `The identity provider request ${what}.`, { detail: e.message ?? null });
}
