// Provider failures, classified for callers. Activities turn these into Temporal failures (typed,
// retryable or not); the batch turns them into per-record error categories. The provider's raw
// response never leaves this module except as `detail`, which goes to logs only.

export const PROVIDER_ERROR_KINDS = {
  /** The share token is expired or malformed: a new one must be generated. */
  token_invalid: { retryable: false },
  /** The share token was already used. */
  token_used: { retryable: false },
  /** The verification level is not configured in our provider account. */
  level_unknown: { retryable: false },
  /** The provider refused the applicant's data for this level (not reusable, incompatible). */
  data_refused: { retryable: false },
  /** No such applicant. */
  not_found: { retryable: false },
  /** The provider's rate limit answered 429; retry after `retryAfterMs`. */
  rate_limited: { retryable: true },
  /** 5xx, timeout or connection failure: retry with backoff. */
  unavailable: { retryable: true },
  /** The provider rejected our own credentials or signature: nothing will work until config changes. */
  credentials: { retryable: false },
  /** Any other refusal of our request (a bug on our side or an API change). */
  bad_request: { retryable: false },
} as const;

export type ProviderErrorKind = keyof typeof PROVIDER_ERROR_KINDS;

export class ProviderError extends Error {
  readonly kind: ProviderErrorKind;
  readonly status: number | null;
  readonly retryAfterMs: number | null;
  readonly providerCode: number | null;
  readonly correlationId: string | null;
  /** The provider's own description, for logs; never shown to our clients. */
  readonly detail: string | null;

  constructor(
    kind: ProviderErrorKind,
    message: string,
    options: { status?: number | null; retryAfterMs?: number | null; providerCode?: number | null; correlationId?: string | null; detail?: string | null } = {},
  ) {
    super(message);
    this.name = 'ProviderError';
    this.kind = kind;
    this.status = options.status ?? null;
    this.retryAfterMs = options.retryAfterMs ?? null;
    this.providerCode = options.providerCode ?? null;
    this.correlationId = options.correlationId ?? null;
    this.detail = options.detail ?? null;
  }

  get retryable(): boolean {
    return PROVIDER_ERROR_KINDS[this.kind].retryable;
  }
}
