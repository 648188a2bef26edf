// Why a shared record could not be onboarded: the categories a client sees in a batch's
// summary.errors[].errorDetail and in a sync import's error, with whether resubmitting helps.
export const IMPORT_ERROR_CATEGORIES = {
  TOKEN_ALREADY_USED: { retryable: false, message: 'The share token was already used. Generate a new share token and share again.' },
  TOKEN_EXPIRED_OR_INVALID: {
    retryable: false,
    message: 'The share token is expired or invalid. Share tokens live 1,200 seconds: generate a new one and share promptly.',
  },
  APPLICANT_LEVEL_NOT_CONFIGURED: {
    retryable: false,
    message:
      'The applicantLevel is not configured in our identity provider account. Use a configured ' +
      'level, or leave applicantLevel empty for the default, and share again with a new token.',
  },
  APPLICANT_DATA_REFUSED: {
    retryable: false,
    message:
      "The identity provider refused to share this applicant's data (not approved in your " +
      'account, or not reusable for the level). Check that the verification is approved and ' +
      'shareable, then share again with a new token.',
  },
  ENTITY_NOT_FOUND: { retryable: false, message: 'No entity with this externalId (or id) exists in your business. Create it with POST /entity first.' },
  CARD_PROCESSOR_TOKEN_INVALID: {
    retryable: false,
    message: "The cardProcessorPublicToken is already assigned to another entity. Check that the token is this person's: a token belongs to one entity.",
  },
  DUPLICATE_EXTERNAL_ID: { retryable: false, message: 'Another record of the same file has this externalId; one record per entity in a file.' },
  PROVIDER_UNAVAILABLE: { retryable: true, message: 'The identity provider did not answer after several attempts. Retry the failed rows later.' },
  PROVIDER_REJECTED_REQUEST: {
    retryable: false,
    message: 'The identity provider refused the request. Contact support and quote the batchId and rowNumber (for a sync import, the requestId).',
  },
} as const;

export type ImportErrorCategory = keyof typeof IMPORT_ERROR_CATEGORIES;

export type RecordError = { category: ImportErrorCategory; message: string; retryable: boolean };

export function recordError(category: ImportErrorCategory): RecordError {
  const c = IMPORT_ERROR_CATEGORIES[category];
  return { category, message: c.message, retryable: c.retryable };
}

/**
 * The record-level category for a provider failure kind (provider/errors.ts), or RUN_LEVEL when the
 * failure stops the whole run (our credentials refused). Takes the kind as a string so workflows,
 * which see only the failure's type, can use it.
 */
export function categoryOfProviderKind(kind: string): ImportErrorCategory | 'RUN_LEVEL' {
  switch (kind) {
    case 'token_used':
      return 'TOKEN_ALREADY_USED';
    case 'token_invalid':
      return 'TOKEN_EXPIRED_OR_INVALID';
    case 'level_unknown':
      return 'APPLICANT_LEVEL_NOT_CONFIGURED';
    case 'data_refused':
    case 'not_found':
      return 'APPLICANT_DATA_REFUSED';
    case 'credentials':
      return 'RUN_LEVEL';
    case 'bad_request':
      return 'PROVIDER_REJECTED_REQUEST';
    default:
      return 'PROVIDER_UNAVAILABLE';
  }
}
