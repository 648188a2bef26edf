// The error catalogue: every error a client can receive, with its stable 10-digit code and HTTP
// status. The table in docs/api/README.md is printed from this list (npm run docs:errors; a test compares them).

export type ErrorSpec = { code: string; status: number; summary: string };

export const errorCatalogue = {
  authMissingKey: { code: '0000000100', status: 401, summary: 'The x-vouch-api-key header is missing; send your API key in it.' },
  authInvalidKey: {
    code: '0000000200',
    status: 401,
    summary: 'The API key is unknown or revoked; check the key you send in x-vouch-api-key, or use a current one.',
  },
  invalidRequest: {
    code: '0000000300',
    status: 400,
    summary:
      'A body field, query or path parameter is missing, of the wrong type, too long or unknown; ' +
      '`parameter` names it and `message` says what it must be. Correct it and send again.',
  },
  malformedJson: { code: '0000000310', status: 400, summary: 'The request body is not valid JSON; send a well-formed JSON document.' },
  unsupportedMediaType: {
    code: '0000000320',
    status: 415,
    summary: 'The Content-Type is not one this endpoint accepts; send application/json (multipart/form-data for uploads).',
  },
  bodyTooLarge: {
    code: '0000000330',
    status: 413,
    summary: 'A JSON request body is larger than the limit (1 MB by default); send a smaller body (files go through the upload endpoints).',
  },
  acceptVersionMissing: { code: '0000000400', status: 400, summary: 'The Accept-Version header is required on this list endpoint; send Accept-Version: v1.0.' },
  acceptVersionUnsupported: {
    code: '0000000410',
    status: 400,
    summary: 'The Accept-Version header names a version this service does not serve; send Accept-Version: v1.0.',
  },
  routeNotFound: { code: '0000000500', status: 404, summary: 'No endpoint at this path; check the path against the API reference (/docs).' },
  methodNotAllowed: { code: '0000000510', status: 405, summary: 'The path exists but not with this method; use one of the methods in the Allow header.' },
  rateLimited: { code: '0000000900', status: 429, summary: 'Too many requests for this business; retry after the Retry-After header (seconds).' },
  authFailuresRateLimited: {
    code: '0000000910',
    status: 429,
    summary: 'Too many requests without a valid API key or token from this address; retry after the Retry-After header (seconds), with a valid one.',
  },
  internal: { code: '0000000999', status: 500, summary: 'Internal error; the response carries a requestId to quote to support.' },
  // Token-sharing batch upload: the interface's codes (section 7), each with `errorKey`, the
  // upload's string code (kyc_batch.upload.*); what the code leaves open is in extra fields.
  batchFileTooLarge: {
    code: '0701010100',
    status: 400,
    summary:
      'The CSV is larger than 10 MB or has more than 5,000 records ' +
      '(`kyc_batch.upload.file_too_large`); split it into files of at most 10 MB and 5,000 ' +
      'records each.',
  },
  batchInvalidData: {
    code: '0701010200',
    status: 400,
    summary:
      'The upload is invalid: CSV content (the message lists rows and fields), X-Provider, ' +
      'Idempotency-Key, or no file (`kyc_batch.upload.invalid_data`); fix what the message names ' +
      'and upload again.',
  },
  batchAlreadyUploaded: {
    code: '0701010300',
    status: 400,
    summary:
      'Already uploaded (`kyc_batch.upload.duplicate_file_or_content`): the Idempotency-Key ' +
      'belongs to a batch that has finished or to another file, or the same content was uploaded ' +
      'under another key; `reason` (key_already_processed, key_used_for_other_file, same_content)' +
      ' says which and `batchId` names the batch: read it (GET ' +
      '/entity/kyc/import/batch/{batchId}), or upload a new file under a new Idempotency-Key.',
  },
  batchNotFound: { code: '0701020100', status: 404, summary: 'No batch with this id in your business; check the batchId the upload returned.' },
  batchNotCancelable: {
    code: '0701020200',
    status: 409,
    summary: 'The batch has already finished (completed, failed or canceled), so it cannot be canceled; read its outcome with GET …/batch/{batchId}.',
  },
  batchNotRetryable: {
    code: '0701020300',
    status: 409,
    summary:
      'The batch is still running (retry once it has finished), or has no retryable failed records left (correct the others and upload them in a new file).',
  },
  // Synchronous import.
  syncTokenInvalid: { code: '0704000100', status: 400, summary: 'The share token is expired or invalid; generate a new one and share again.' },
  syncTokenUsed: { code: '0704000200', status: 409, summary: 'The share token was already used; generate a new one and share again.' },
  syncDataRefused: {
    code: '0704000300',
    status: 422,
    summary:
      "The identity provider refused to share this applicant's data; check that the applicant is approved and shareable, then share again with a new token.",
  },
  syncCardProcessorTokenTaken: {
    code: '0704000400',
    status: 409,
    summary: "The cardProcessorPublicToken is already assigned to another entity; send this person's own token (a token belongs to one entity).",
  },
  syncProviderRefused: { code: '0704000500', status: 502, summary: 'The identity provider refused our request (configuration on our side); contact support.' },
  syncProviderUnavailable: { code: '0704000600', status: 503, summary: 'The identity provider did not answer; retry with a new share token later.' },
  syncIdempotencyKeyReused: {
    code: '0704000700',
    status: 422,
    summary: 'This Idempotency-Key was used for a different sync import request; use a new key for a new request.',
  },
  // Webhook subscriptions and deliveries.
  subscriptionNotFound: {
    code: '0705000100',
    status: 404,
    summary: 'No webhook subscription with this id in your business; GET /notification lists your subscriptions.',
  },
  webhookUrlRefused: {
    code: '0705000200',
    status: 400,
    summary:
      'The webhookUrl is not an HTTPS URL to a public address (or its host does not resolve); ' +
      'register an https:// URL whose host resolves to public addresses only.',
  },
  subscriptionLimit: { code: '0705000300', status: 409, summary: 'Your business already has 10 webhook subscriptions; delete one first.' },
  eventNotFound: { code: '0706000100', status: 404, summary: 'No event with this id in your business; use the data.eventId of a webhook you received.' },
  // Entities.
  entityNotFound: { code: '0702000100', status: 404, summary: 'No entity with this id in your business; check the id (GET /entity lists your entities).' },
  entityExternalIdTaken: {
    code: '0702000200',
    status: 409,
    summary: 'Your business already has an entity with this externalId; use that entity, or choose another externalId.',
  },
  // Individual verification (hosted SDK, signed payload, universal KYC).
  webhookRegistrationRequired: {
    code: '0707000100',
    status: 409,
    summary: 'The decision is delivered only by webhook: register a subscription for account_status_change (POST /notification) first.',
  },
  memberNotFound: {
    code: '0707000200',
    status: 404,
    summary:
      'memberId is not a declared member of this BUSINESS entity (an owner of its kyb-ubo-declaration or KYB profile, or a member declared with ' +
      'POST /entity/{entityId}/members); use an entityId it declares.',
  },
  personRequired: {
    code: '0707000300',
    status: 400,
    summary:
      'A person is verified: on a BUSINESS entity, name the person with memberId where the ' +
      "endpoint takes one, else use the person's own INDIVIDUAL entity; an INDIVIDUAL entity " +
      'takes no memberId.',
  },
  providerSignatureInvalid: {
    code: '0707000400',
    status: 401,
    summary: "A provider callback without a valid x-payload-digest (the provider's HMAC over the raw body).",
  },
  providerUnavailable: { code: '0707000500', status: 503, summary: 'The identity provider did not answer; retry in a moment.' },
  providerRefused: {
    code: '0707000600',
    status: 502,
    summary: 'The identity provider refused our request (configuration on our side); contact support and quote the requestId.',
  },
  entityNotVerified: {
    code: '0707000700',
    status: 409,
    summary: 'The person has no approved verification, so there is nothing to sign; ask again once the decision webhook has told you the person may proceed.',
  },
  sandboxApplicantExists: {
    code: '0707000800',
    status: 409,
    summary: "Sandbox: the person's applicant already exists at the provider and its data is fixed; leave out person or use a new entity.",
  },
  // Uploads (universal KYC files).
  uploadNoFile: {
    code: '0708000100',
    status: 400,
    summary: 'No file in the multipart form field files (or the body is not multipart/form-data); send the file(s) as multipart/form-data in the field files.',
  },
  uploadEmptyFile: { code: '0708000200', status: 400, summary: 'A file has no content (0 bytes); send the file with its content.' },
  uploadFileTooLarge: {
    code: '0708000300',
    status: 400,
    summary: 'A file is larger than the upload limit (10 MB each by default, UPLOAD_MAX_FILE_BYTES); send a smaller file.',
  },
  uploadTooManyFiles: {
    code: '0708000400',
    status: 400,
    summary: 'More files than one upload takes (10 by default, UPLOAD_MAX_FILES); send the rest in another upload.',
  },
  uploadUnsupportedType: {
    code: '0708000500',
    status: 415,
    summary: 'A file is not a PDF, JPEG, PNG or HEIC image (decided from its bytes, not its name); convert it to one of these and upload again.',
  },
  requirementNotFound: {
    code: '0708000600',
    status: 404,
    summary: 'No such requirement slug for this endpoint (ukyc-id-document, ukyc-proof-of-address-document).',
  },
  uploadStalled: {
    code: '0708000700',
    status: 408,
    summary: 'No bytes of an upload arrived for 30 s (UPLOAD_IDLE_TIMEOUT_MS); the upload was cut off. Send it again.',
  },
  uploadsBusy: {
    code: '0708000800',
    status: 429,
    summary:
      'Your business already has as many uploads in progress as one API process takes at once (4 by default, UPLOADS_PER_BUSINESS); retry after Retry-After.',
  },
  uploadsUnavailable: {
    code: '0708000900',
    status: 503,
    summary: 'This API process is receiving as many uploads as it takes at once (UPLOADS_PER_PROCESS); retry after Retry-After.',
  },
  // Business verification (universal KYB) and file downloads.
  kybNotBusiness: {
    code: '0709000100',
    status: 400,
    summary: 'Universal KYB is for BUSINESS entities; this entity is an INDIVIDUAL (verify a person with the hosted SDK or universal KYC).',
  },
  kybProfileExists: { code: '0709000200', status: 409, summary: 'This business entity already has a KYB profile; change it with PATCH /ukyb.' },
  kybProfileNotFound: { code: '0709000300', status: 404, summary: 'This business entity has no KYB profile yet; create it with POST /ukyb.' },
  kybIncomplete: {
    code: '0709000400',
    status: 400,
    summary:
      'The submission is incomplete: the body adds `missing`, naming each missing business ' +
      'document slug and each owner without an identity document ' +
      '(`<ownerEntityId>:IDENTITY_DOCUMENT`); upload each (POST /ukyb/documents), then submit ' +
      'again.',
  },
  kybWebhookRegistrationRequired: {
    code: '0709000500',
    status: 409,
    summary: 'The KYB decision is delivered only by webhook: register a subscription for kyb_status_change (POST /notification) first.',
  },
  fileNotFound: {
    code: '0709000600',
    status: 404,
    summary:
      "No file with this id belongs to this entity of your business (an owner's files are under " +
      "the owner's own entityId; replaced files are gone from it); GET " +
      '/entity/{entityId}/documents lists the current files.',
  },
  downloadLinkRefused: {
    code: '0709000700',
    status: 403,
    summary:
      'The download link has expired, was changed or has served its downloads (DOWNLOAD_LINK_MAX_USES); ' +
      'ask for a new one (GET /entity/{entityId}/file/{fileId}/presigned-url).',
  },
  // The Temporal payload codec endpoint (operators' tools: the Temporal UI and CLI).
  codecUnauthorized: {
    code: '0710000100',
    status: 401,
    summary: 'The codec endpoint needs `Authorization: Bearer <CODEC_ACCESS_TOKEN>` outside the sandbox (and refuses every call when no token is configured).',
  },
  codecUndecodable: {
    code: '0710000200',
    status: 400,
    summary:
      'A payload could not be decoded: encrypted with a key that is not in the ring, or changed ' +
      'since it was encrypted; decode it with the deployment whose key ring encoded it.',
  },
  metricsUnauthorized: {
    code: '0710000300',
    status: 401,
    summary: 'GET /metrics needs `Authorization: Bearer <METRICS_TOKEN>` outside the sandbox (and refuses every call when no token is configured).',
  },
  // Features.
  featureNotFound: { code: '0703000100', status: 404, summary: 'No feature with this id; GET /features lists the features.' },
  // Members of a business entity beyond its owners, and feature assignments (v1.1.0).
  membersNeedBusiness: {
    code: '0710010100',
    status: 400,
    summary: 'Members and feature assignments belong to a BUSINESS entity; this entity is an INDIVIDUAL (name the business entity in the path).',
  },
  memberEntityNotFound: {
    code: '0710010200',
    status: 404,
    summary:
      'A listed person is not an entity of your business (`parameter` names it, e.g. members[3].entityId); ' +
      'create the person first (POST /entity), then declare it.',
  },
  memberNotIndividual: {
    code: '0710010300',
    status: 400,
    summary: 'A listed person is a BUSINESS entity (`parameter` names it); members are INDIVIDUAL entities of your business.',
  },
  memberListedTwice: {
    code: '0710010400',
    status: 400,
    summary: 'The list names the same person twice (`parameter` names the second); list each person once.',
  },
  featureNotAssignable: {
    code: '0710010500',
    status: 400,
    summary:
      'This feature is not assigned to members (GET /features: an assignable feature says so, e.g. business-cardholder); ' +
      "its access follows the entity's own verification.",
  },
  businessMemberNotFound: {
    code: '0710010600',
    status: 404,
    summary:
      'The person is not a declared member of this business entity (`parameter` names it); declare it first ' +
      '(POST /entity/{entityId}/members). Owners declared by KYB are not in this list.',
  },
  assignmentNotFound: {
    code: '0710010700',
    status: 404,
    summary: 'The feature is not assigned to this member of the business entity; GET /entity/{entityId}/feature/{featureId}/assignments lists its assignments.',
  },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorName = keyof typeof errorCatalogue;
