// Universal KYB (interface 2.9, 4.7): the profile, documents, manifest and submission.
import { entityIdParams } from '../../domain/entity.ts';
import {
  KYB_DOCUMENT_SLUGS,
  KYB_EVENT,
  KYB_REQUIRED_DOCUMENT_SLUGS,
  OWNER_DOCUMENT_TYPES,
  OWNER_IDENTITY_DOCUMENT_TYPES,
  kybCreate,
  kybPatch,
  kybSubmit,
} from '../../domain/kyb.ts';
import { manifestAnswerSchema } from '../../domain/kyb-manifest.ts';
import { optionalPaginationQuery, requestedPage } from '../../domain/pagination.ts';
import { ACCEPTED_UPLOAD_NAMES } from '../../domain/uploads.ts';
import type { UseCaseContext } from '../../usecases/context.ts';
import {
  changeKybProfile,
  createKybProfile,
  KYB_STATUS_TEXT,
  kybDocumentsUploadedSchema,
  kybProfileReadSchema,
  kybProfileSavedSchema,
  kybSubmittedSchema,
  readKybProfile,
  readManifest,
  submitKyb,
  uploadKybDocuments,
} from '../../usecases/kyb.ts';
import type { Uploads } from '../uploads.ts';
import { route } from '../route.ts';

const tag = 'Business verification' as const;

export function kybRoutes(context: UseCaseContext, uploads: Uploads) {
  const { maxFileBytes, maxFiles } = context.settings.files;
  const deadlineDays = context.settings.universalKybDeadlineSeconds / 86_400;
  return [
    route({
      method: 'post',
      path: '/ukyb',
      operationId: 'createKybProfile',
      summary: "Create a business's KYB profile and declare its owners",
      description:
        `The business part and the owners (ubos). Each owner becomes your INDIVIDUAL entity with ` +
        `that externalId (an existing one is reused) and a declared member of the business: verify ` +
        `them as people (hosted SDK with memberId, universal KYC, token sharing). Status: ` +
        `${KYB_STATUS_TEXT}.`,
      tag,
      body: kybCreate,
      responses: { 201: { description: 'Created', schema: kybProfileSavedSchema } },
      errors: ['invalidRequest', 'malformedJson', 'entityNotFound', 'kybNotBusiness', 'kybProfileExists'],
      handler: ({ body, business }) => createKybProfile(context, business, body),
    }),
    route({
      method: 'patch',
      path: '/ukyb',
      operationId: 'changeKybProfile',
      summary: "Change a business's KYB profile",
      description:
        'entityId and the parts to change: business fields replace (the address merges field by ' +
        'field); ubos replaces the declared owners. A submission still waiting is superseded (it ' +
        'ends without a decision): submit again.',
      tag,
      body: kybPatch,
      responses: { 200: { description: 'Changed', schema: kybProfileSavedSchema } },
      errors: ['invalidRequest', 'malformedJson', 'entityNotFound', 'kybNotBusiness', 'kybProfileNotFound'],
      handler: ({ body, business }) => changeKybProfile(context, business, body),
    }),
    route({
      method: 'get',
      path: '/ukyb/:entityId',
      operationId: 'readKybProfile',
      summary: "Read a business's KYB profile, status and latest submission",
      tag,
      params: entityIdParams,
      responses: { 200: { description: 'The profile', schema: kybProfileReadSchema } },
      errors: ['invalidRequest', 'entityNotFound', 'kybNotBusiness', 'kybProfileNotFound'],
      handler: ({ params, business }) => readKybProfile(context, business, params.entityId),
    }),
    route({
      method: 'post',
      path: '/ukyb/documents',
      operationId: 'uploadKybDocuments',
      summary: "Upload a business document, or a declared owner's document",
      description:
        `multipart/form-data: entityId (the business), then either requirementSlug (` +
        `${KYB_DOCUMENT_SLUGS.join(', ')}; the first three are required at submission) — business ` +
        `documents accumulate — or memberId (a declared owner's entityId) and documentType (` +
        `${OWNER_DOCUMENT_TYPES.join(', ')}) — an owner's new upload of a kind replaces the earlier` +
        ` files of that kind. files: one or more (at most ${maxFiles}, each at most ` +
        `${maxFileBytes / 1024 / 1024} MB), ${ACCEPTED_UPLOAD_NAMES}, decided from the bytes. No ` +
        `fileId is answered: read the manifest.`,
      tag,
      docBody: {
        contentType: 'multipart/form-data',
        schema: {
          type: 'object',
          required: ['entityId', 'files'],
          properties: {
            entityId: { type: 'string', format: 'uuid' },
            requirementSlug: { type: 'string', enum: [...KYB_DOCUMENT_SLUGS] },
            memberId: { type: 'string', format: 'uuid' },
            documentType: { type: 'string', enum: [...OWNER_DOCUMENT_TYPES] },
            files: { type: 'array', items: { type: 'string', format: 'binary' } },
          },
        },
      },
      responses: { 201: { description: 'Stored', schema: kybDocumentsUploadedSchema } },
      errors: [
        'invalidRequest',
        'entityNotFound',
        'kybNotBusiness',
        'memberNotFound',
        'uploadNoFile',
        'uploadEmptyFile',
        'uploadFileTooLarge',
        'uploadTooManyFiles',
        'uploadUnsupportedType',
        'unsupportedMediaType',
        'uploadStalled',
        'uploadsBusy',
        'uploadsUnavailable',
      ],
      handler: ({ ctx, business }) =>
        uploadKybDocuments(context, business, (checkFields) =>
          uploads.files(ctx, business.id, 'files', { maxBytes: maxFileBytes, maxFiles, extra: 'refuse' }, checkFields),
        ),
    }),
    route({
      method: 'post',
      path: '/ukyb/submit',
      operationId: 'submitKyb',
      summary: 'Submit a business for its KYB decision',
      description:
        `Complete when the documents listed by the manifest include ` +
        `${KYB_REQUIRED_DOCUMENT_SLUGS.join(', ')} and each declared owner has an identity document` +
        ` (${OWNER_IDENTITY_DOCUMENT_TYPES.join(', ')}); otherwise 400 with missing. A complete ` +
        `submission waits for every owner's KYC decision (any path), up to ${deadlineDays} days ` +
        `(KYB_SUBMISSION_DEADLINE_SECONDS), then decides: an owner REJECTED → REJECTED; all ` +
        `APPROVED → APPROVED; owners still undecided at the deadline → REJECTED (RETRY). The ` +
        `decision arrives by webhook (${KYB_EVENT.eventType}), so a subscription for it must exist.` +
        ` Submitting again while one waits answers the same submission.`,
      tag,
      body: kybSubmit,
      responses: { 202: { description: 'Accepted: the decision follows by webhook', schema: kybSubmittedSchema } },
      errors: ['invalidRequest', 'malformedJson', 'entityNotFound', 'kybNotBusiness', 'kybProfileNotFound', 'kybIncomplete', 'kybWebhookRegistrationRequired'],
      handler: ({ body, business }) => submitKyb(context, business, body.entityId),
    }),
    route({
      method: 'get',
      path: '/entity/:entityId/documents',
      operationId: 'readDocumentManifest',
      summary: 'Read the document manifest of an entity',
      description:
        'Every live document: business documents by requirement slug (all of them), and per ' +
        'declared owner their documents by kind (the newest upload of each kind). Exactly the set a' +
        " submission's completeness check reads. An owner's files are downloaded with the owner's " +
        'own entityId. With page or limit (v1.0.2): one page of the files in that order (business ' +
        'documents first), every owner still listed, and meta counting files.',
      tag,
      params: entityIdParams,
      query: optionalPaginationQuery,
      responses: { 200: { description: 'The manifest', schema: manifestAnswerSchema } },
      errors: ['invalidRequest', 'entityNotFound'],
      handler: ({ params, query, business }) => readManifest(context, business, params.entityId, requestedPage(query)),
    }),
  ];
}
