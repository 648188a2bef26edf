// The error catalogue: every error a client can receive, with its stable 10-digit code and HTTP
// status. The README's table is printed from this list (npm run docs:errors; a test compares them).

export type ErrorSpec = { code: string; status: number; summary: string };

export const errorCatalogue = {
  authMissingKey: { code: '0000000100', status: 401, summary: 'The x-vouch-api-key header is missing.' },
  authInvalidKey: { code: '0000000200', status: 401, summary: 'The API key is not valid (unknown or revoked).' },
  invalidRequest: {
    code: '0000000300',
    status: 400,
    summary: 'A body field, query or path parameter is missing, of the wrong type, too long or unknown; `parameter` names it.',
  },
  malformedJson: { code: '0000000310', status: 400, summary: 'The request body is not valid JSON.' },
  unsupportedMediaType: { code: '0000000320', status: 415, summary: 'The Content-Type is not the one this endpoint accepts.' },
  bodyTooLarge: { code: '0000000330', status: 413, summary: 'A JSON request body is larger than the limit (1 MB by default).' },
  acceptVersionMissing: { code: '0000000400', status: 400, summary: 'The Accept-Version header is required on this list endpoint.' },
  acceptVersionUnsupported: { code: '0000000410', status: 400, summary: 'The Accept-Version header names a version this service does not serve (v1.0 is served).' },
  routeNotFound: { code: '0000000500', status: 404, summary: 'No endpoint at this path.' },
  methodNotAllowed: { code: '0000000510', status: 405, summary: 'The path exists but not with this method.' },
  rateLimited: { code: '0000000900', status: 429, summary: 'Too many requests for this business; retry after the Retry-After header (seconds).' },
  internal: { code: '0000000999', status: 500, summary: 'Internal error; the response carries a requestId to quote to support.' },
  // Token-sharing batch upload: the interface's codes (section 7), each with `errorKey`, the
  // upload's string code (kyc_batch.upload.*); what the code leaves open is in extra fields.
  batchFileTooLarge: { code: '0701010100', status: 400, summary: 'The CSV is larger than 10 MB or has more than 5,000 records (`kyc_batch.upload.file_too_large`).' },
  batchInvalidData: {
    code: '0701010200',
    status: 400,
    summary: 'The upload is invalid: CSV content (the message lists rows and fields), X-Provider, Idempotency-Key, or no file (`kyc_batch.upload.invalid_data`).',
  },
  batchAlreadyUploaded: {
    code: '0701010300',
    status: 400,
    summary:
      'Already uploaded (`kyc_batch.upload.duplicate_file_or_content`): the Idempotency-Key belongs to a batch that has finished or to another file, or the same content was uploaded under another key; `reason` (key_already_processed, key_used_for_other_file, same_content) says which and `batchId` names the batch.',
  },
  batchNotFound: { code: '0701020100', status: 404, summary: 'No batch with this id in your business.' },
  batchNotCancelable: { code: '0701020200', status: 409, summary: 'The batch has already finished (completed, failed or canceled).' },
  batchNotRetryable: { code: '0701020300', status: 409, summary: 'The batch is still running, or has no retryable failed rows.' },
  // Synchronous import.
  syncTokenInvalid: { code: '0704000100', status: 400, summary: 'The share token is expired or invalid; generate a new one and share again.' },
  syncTokenUsed: { code: '0704000200', status: 409, summary: 'The share token was already used.' },
  syncDataRefused: { code: '0704000300', status: 422, summary: "The identity provider refused to share this applicant's data." },
  syncCardProcessorTokenTaken: { code: '0704000400', status: 409, summary: 'The cardProcessorPublicToken is already assigned to another entity.' },
  syncProviderRefused: { code: '0704000500', status: 502, summary: 'The identity provider refused our request (configuration on our side); contact support.' },
  syncProviderUnavailable: { code: '0704000600', status: 503, summary: 'The identity provider did not answer; retry with a new share token later.' },
  syncIdempotencyKeyReused: { code: '0704000700', status: 422, summary: 'This Idempotency-Key was used for a different sync import request; use a new key for a new request.' },
  // Webhook subscriptions and deliveries.
  subscriptionNotFound: { code: '0705000100', status: 404, summary: 'No webhook subscription with this id in your business.' },
  webhookUrlRefused: { code: '0705000200', status: 400, summary: 'The webhookUrl is not an HTTPS URL to a public address (or its host does not resolve).' },
  subscriptionLimit: { code: '0705000300', status: 409, summary: 'Your business already has 10 webhook subscriptions; delete one first.' },
  eventNotFound: { code: '0706000100', status: 404, summary: 'No event with this id in your business.' },
  // Entities.
  entityNotFound: { code: '0702000100', status: 404, summary: 'No entity with this id in your business.' },
  entityExternalIdTaken: { code: '0702000200', status: 409, summary: 'Your business already has an entity with this externalId.' },
  // Individual verification (hosted SDK, signed payload, universal KYC).
  webhookRegistrationRequired: {
    code: '0707000100',
    status: 409,
    summary: 'The decision is delivered only by webhook: register a subscription for account_status_change (POST /notification) first.',
  },
  memberNotFound: { code: '0707000200', status: 404, summary: 'memberId is not a declared member (kyb-ubo-declaration) of this BUSINESS entity.' },
  personRequired: { code: '0707000300', status: 400, summary: 'A person is verified: a BUSINESS entity needs memberId (one of its members); an INDIVIDUAL entity takes none.' },
  providerSignatureInvalid: { code: '0707000400', status: 401, summary: "A provider callback without a valid x-payload-digest (the provider's HMAC over the raw body)." },
  providerUnavailable: { code: '0707000500', status: 503, summary: 'The identity provider did not answer; retry in a moment.' },
  providerRefused: { code: '0707000600', status: 502, summary: 'The identity provider refused our request (configuration on our side); contact support and quote the requestId.' },
  entityNotVerified: { code: '0707000700', status: 409, summary: 'The person has no approved verification, so there is nothing to sign.' },
  sandboxApplicantExists: {
    code: '0707000800',
    status: 409,
    summary: "Sandbox: the person's applicant already exists at the provider and its data is fixed; leave out person or use a new entity.",
  },
  // Uploads (universal KYC files).
  uploadNoFile: { code: '0708000100', status: 400, summary: 'No file in the multipart form field files (or the body is not multipart/form-data).' },
  uploadEmptyFile: { code: '0708000200', status: 400, summary: 'A file is empty.' },
  uploadFileTooLarge: { code: '0708000300', status: 400, summary: 'A file is larger than the upload limit (10 MB each by default, UPLOAD_MAX_FILE_BYTES).' },
  uploadTooManyFiles: { code: '0708000400', status: 400, summary: 'More files than one upload takes (10 by default, UPLOAD_MAX_FILES).' },
  uploadUnsupportedType: { code: '0708000500', status: 415, summary: 'A file is not a PDF, JPEG, PNG or HEIC image (decided from its bytes, not its name).' },
  requirementNotFound: { code: '0708000600', status: 404, summary: 'No such requirement slug for this endpoint (ukyc-id-document, ukyc-proof-of-address-document).' },
  uploadStalled: { code: '0708000700', status: 408, summary: 'No bytes of an upload arrived for 30 s (UPLOAD_IDLE_TIMEOUT_MS); the upload was cut off. Send it again.' },
  uploadsBusy: {
    code: '0708000800',
    status: 429,
    summary: 'Your business already has as many uploads in progress as one API process takes at once (4 by default, UPLOADS_PER_BUSINESS); retry after Retry-After.',
  },
  uploadsUnavailable: { code: '0708000900', status: 503, summary: 'This API process is receiving as many uploads as it takes at once (UPLOADS_PER_PROCESS); retry after Retry-After.' },
  // Business verification (universal KYB) and file downloads.
  kybNotBusiness: { code: '0709000100', status: 400, summary: 'Universal KYB is for BUSINESS entities; this entity is an INDIVIDUAL (verify a person with the hosted SDK or universal KYC).' },
  kybProfileExists: { code: '0709000200', status: 409, summary: 'This business entity already has a KYB profile; change it with PATCH /ukyb.' },
  kybProfileNotFound: { code: '0709000300', status: 404, summary: 'This business entity has no KYB profile yet; create it with POST /ukyb.' },
  kybIncomplete: {
    code: '0709000400',
    status: 400,
    summary: 'The submission is incomplete: the body adds `missing`, naming each missing business document slug and each owner without an identity document (`<ownerEntityId>:IDENTITY_DOCUMENT`).',
  },
  kybWebhookRegistrationRequired: {
    code: '0709000500',
    status: 409,
    summary: 'The KYB decision is delivered only by webhook: register a subscription for kyb_status_change (POST /notification) first.',
  },
  fileNotFound: { code: '0709000600', status: 404, summary: 'No file with this id belongs to this entity of your business (an owner\'s files are under the owner\'s own entityId; replaced files are gone from it).' },
  downloadLinkRefused: { code: '0709000700', status: 403, summary: 'The download link has expired or was changed; ask for a new one (GET /entity/{entityId}/file/{fileId}/presigned-url).' },
  // The Temporal payload codec endpoint (operators' tools: the Temporal UI and CLI).
  codecUnauthorized: {
    code: '0710000100',
    status: 401,
    summary: 'The codec endpoint needs `Authorization: Bearer <CODEC_ACCESS_TOKEN>` outside the sandbox (and refuses every call when no token is configured).',
  },
  codecUndecodable: { code: '0710000200', status: 400, summary: 'A payload could not be decoded: encrypted with a key that is not in the ring, or changed since it was encrypted.' },
  metricsUnauthorized: { code: '0710000300', status: 401, summary: 'GET /metrics needs `Authorization: Bearer <METRICS_TOKEN>` outside the sandbox (and refuses every call when no token is configured).' },
  // Features.
  featureNotFound: { code: '0703000100', status: 404, summary: 'No feature with this id.' },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorName = keyof typeof errorCatalogue;

/** An error meant for the client: always rendered as `{ code, message, parameter }`. */
export class ApiError extends Error {
  readonly spec: ErrorSpec;
  readonly parameter: string;
  readonly extra: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(
    name: ErrorName,
    message: string,
    options: { parameter?: string; extra?: Record<string, unknown>; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.name = 'ApiError';
    this.spec = errorCatalogue[name];
    this.parameter = options.parameter ?? '';
    this.extra = options.extra ?? {};
    this.headers = options.headers ?? {};
  }

  get status(): number {
    return this.spec.status;
  }

  body(): Record<string, unknown> {
    return { code: this.spec.code, message: this.message, parameter: this.parameter, ...this.extra };
  }
}
