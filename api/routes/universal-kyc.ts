// Universal KYC (interface 2.7, 4.5): the canonical KYC data as a requirement value, and the person's
// document uploads.
import { z } from 'zod';
import { entityIdParams } from '../../domain/entity.ts';
import { memberIdQuery } from '../../domain/members.ts';
import { ACCEPTED_UPLOAD_NAMES } from '../../domain/uploads.ts';
import { CANONICAL_KYC_SLUG, UKYC_DOCUMENT_TYPES, UKYC_FILE_SLUGS, UKYC_PROVIDERS } from '../../domain/universal-kyc.ts';
import type { UseCaseContext } from '../../usecases/context.ts';
import { filesUploadedSchema, requirementSubmittedSchema, submitCanonicalKyc, uploadUkycFiles } from '../../usecases/universal-kyc.ts';
import type { Uploads } from '../uploads.ts';
import { route } from '../route.ts';

const requirementBody = z
  .object({
    requirementSlug: z.enum([CANONICAL_KYC_SLUG]),
    value: z
      .string()
      .min(2)
      .max(64 * 1024)
      .meta({
        description:
          `The canonical KYC payload (interface 2.7) as a JSON string: externalUserId, ` +
          `cardProcessorPublicToken?, provider { name: ${UKYC_PROVIDERS.join(' | ')}, status, data[] ` +
          `}, identity { firstName, middleName?, lastName?, fullName, dob, nationality }, document[] ` +
          `{ type: ${UKYC_DOCUMENT_TYPES.join(' | ')}, number, country, issuingDate, expiryDate? }, ` +
          `address { country, postCode, street, … }, liveness { result, checkedAt? }. A refusal names` +
          ` the first failing field's path in parameter (identity.dob, document[0].expiryDate, …).`,
      }),
  })
  .strict();

const uploadParams = z
  .object({
    entityId: z.uuid({ message: 'entityId must be a UUID' }),
    requirementSlug: z
      .string()
      .min(1)
      .max(100)
      .meta({ description: `${UKYC_FILE_SLUGS.join(' or ')}; any other answers 404` }),
  })
  .strict();

export function universalKycRoutes(context: UseCaseContext, uploads: Uploads) {
  const { maxFileBytes, maxFiles } = context.settings.files;
  return [
    route({
      method: 'post',
      path: '/entity/:entityId/requirement',
      operationId: 'submitRequirement',
      summary: 'Submit the canonical KYC data of a person (universal KYC)',
      description:
        `Opens (or updates) the person's universal KYC submission. It is decided once an identity ` +
        `document (${UKYC_FILE_SLUGS[0]}) is uploaded too — before or after the data — or, without ` +
        `one, decided as incomplete at deadlineAt (UKYC_SUBMISSION_DEADLINE_SECONDS, 7 days by ` +
        `default). The decision arrives by webhook (account_status_change), so a subscription for ` +
        `it must exist.`,
      tag: 'Verification',
      params: entityIdParams,
      body: requirementBody,
      responses: { 201: { description: 'Submitted', schema: requirementSubmittedSchema } },
      errors: ['invalidRequest', 'malformedJson', 'entityNotFound', 'webhookRegistrationRequired', 'personRequired', 'syncCardProcessorTokenTaken'],
      handler: ({ params, body, business }) => submitCanonicalKyc(context, business, params.entityId, body.value),
    }),
    route({
      method: 'post',
      path: '/entity/:entityId/requirement-slug/:requirementSlug/upload',
      operationId: 'uploadRequirementFiles',
      summary: "Upload a person's identity document or proof of address (universal KYC)",
      description:
        `Form field files, one or more (at most ${maxFiles}, each at most ` +
        `${maxFileBytes / 1024 / 1024} MB): ${ACCEPTED_UPLOAD_NAMES}, decided from the bytes. The ` +
        `files join the person's open submission, or wait for the next KYC data. With memberId, the` +
        ` files are the declared member's.`,
      tag: 'Verification',
      params: uploadParams,
      query: memberIdQuery,
      docBody: {
        contentType: 'multipart/form-data',
        schema: {
          type: 'object',
          required: ['files'],
          properties: { files: { type: 'array', items: { type: 'string', format: 'binary' }, description: `${ACCEPTED_UPLOAD_NAMES} files` } },
        },
      },
      responses: { 201: { description: 'Stored', schema: filesUploadedSchema } },
      errors: [
        'invalidRequest',
        'entityNotFound',
        'requirementNotFound',
        'webhookRegistrationRequired',
        'personRequired',
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
      handler: ({ ctx, params, query, business }) =>
        uploadUkycFiles(context, business, params.entityId, params.requirementSlug, query.memberId, () =>
          uploads.files(ctx, business.id, 'files', { maxBytes: maxFileBytes, maxFiles, extra: 'refuse' }),
        ),
    }),
  ];
}
