// Batches of requirement submissions (interface v1.1.0): upload a JSON Lines file of records, read
// the batch's status, cancel it, retry its failed records, and its failed records as CSV.
import { z } from 'zod';
import { MAX_FILE_BYTES, MAX_LINE_BYTES, MAX_RECORDS } from '../../domain/requirement-lines.ts';
import { requirementBatchAcceptedSchema, requirementBatchStatusSchema } from '../../domain/requirement-batch.ts';
import { batchIdParams } from '../../domain/token-sharing.ts';
import { IDEMPOTENCY_KEY_HEADER } from './batch-imports.ts';
import { optionalPaginationQuery, requestedPage } from '../../domain/pagination.ts';
import type { UseCaseContext } from '../../usecases/context.ts';
import {
  cancelRequirementBatch,
  getRequirementBatch,
  REQUIREMENT_BATCH_PATH,
  requirementBatchFailedRecords,
  requirementBatchRetrySchema,
  retryRequirementBatch,
  uploadRequirementBatch,
} from '../../usecases/requirement-batches.ts';
import type { Uploads } from '../uploads.ts';
import { route } from '../route.ts';

const TAG = 'Requirement batches';

export function requirementBatchRoutes(context: UseCaseContext, uploads: Uploads) {
  return [
    route({
      method: 'post',
      path: REQUIREMENT_BATCH_PATH,
      operationId: 'uploadRequirementBatch',
      summary: 'Upload a batch of requirement submissions (JSON Lines)',
      description:
        `Validates and stores the file at once, then submits each record in the background. One JSON ` +
        `object per line: {"entityId" or "externalId", "memberId"?, "requirementSlug", "value"}, ` +
        `value exactly as POST /entity/{entityId}/requirement (ukyc-canonical-kyc-data: the payload ` +
        `as a JSON string) or POST /entity (the other requirements) take it. memberId names a ` +
        `declared member of the BUSINESS entity: the person. UTF-8, at most ${MAX_RECORDS} records, ` +
        `${MAX_FILE_BYTES / 1024 / 1024} MB, and ${MAX_LINE_BYTES / 1024} KB a line. A record that ` +
        `breaks a rule fails alone (summary.errors: rowNumber is its line). Canonical KYC data opens ` +
        `the person's submission as the single endpoint does: decided at once when an identity ` +
        `document is there, else when one is uploaded; each decision arrives by webhook ` +
        `(account_status_change), so a subscription for it must exist.`,
      tag: TAG,
      docHeaders: [IDEMPOTENCY_KEY_HEADER],
      docBody: {
        contentType: 'multipart/form-data',
        schema: { type: 'object', required: ['file'], properties: { file: { type: 'string', format: 'binary', description: 'the JSON Lines file' } } },
      },
      responses: { 201: { description: 'Accepted; processing starts at once', schema: requirementBatchAcceptedSchema } },
      errors: [
        'batchFileTooLarge',
        'batchInvalidData',
        'batchAlreadyUploaded',
        'webhookRegistrationRequired',
        'uploadStalled',
        'uploadsBusy',
        'uploadsUnavailable',
      ],
      handler: ({ ctx, business }) =>
        uploadRequirementBatch(context, business, {
          idempotencyKey: ctx.get('idempotency-key'),
          readLines: () => uploads.requirementLines(ctx, business.id, { maxBytes: MAX_FILE_BYTES }),
        }),
    }),
    route({
      method: 'get',
      path: `${REQUIREMENT_BATCH_PATH}/:batchId`,
      operationId: 'getRequirementBatch',
      summary: "A requirement batch's status, counters and per-record errors",
      description:
        "The batch import's status record (states pending → in_progress → completed). summary.errors lists every failed " +
        'record; with page or limit it holds one page of them, in line order.',
      tag: TAG,
      params: batchIdParams,
      query: optionalPaginationQuery,
      responses: { 200: { description: 'The status record', schema: requirementBatchStatusSchema } },
      errors: ['invalidRequest', 'batchNotFound'],
      handler: ({ params, query, business }) => getRequirementBatch(context, business, params.batchId, requestedPage(query)),
    }),
    route({
      method: 'post',
      path: `${REQUIREMENT_BATCH_PATH}/:batchId/cancel`,
      operationId: 'cancelRequirementBatch',
      summary: 'Cancel a requirement batch that has not finished',
      description: 'Records not yet started are left unprocessed; records already being submitted finish and are counted.',
      tag: TAG,
      params: batchIdParams,
      responses: { 200: { description: 'The batch, now canceled', schema: requirementBatchStatusSchema } },
      errors: ['invalidRequest', 'batchNotFound', 'batchNotCancelable'],
      handler: ({ params, business }) => cancelRequirementBatch(context, business, params.batchId),
    }),
    route({
      method: 'post',
      path: `${REQUIREMENT_BATCH_PATH}/:batchId/retry`,
      operationId: 'retryRequirementBatch',
      summary: 'Submit again the records a finished batch left undone',
      description:
        'Records a canceled or failed run never reached go back to pending and a new run submits them. A failed record is final: ' +
        'correct it and upload it in a new file.',
      tag: TAG,
      params: batchIdParams,
      responses: { 202: { description: 'A new run started', schema: requirementBatchRetrySchema } },
      errors: ['invalidRequest', 'batchNotFound', 'batchNotRetryable'],
      handler: ({ params, business }) => retryRequirementBatch(context, business, params.batchId),
    }),
    route({
      method: 'get',
      path: `${REQUIREMENT_BATCH_PATH}/:batchId/failed-records`,
      operationId: 'requirementBatchFailedRecords',
      summary: "A requirement batch's failed records as CSV",
      description:
        'rowNumber, entityId, externalId, memberId, requirementSlug, value (as JSON text), errorCategory, errorPath, ' +
        'errorMessage, retryable. A cell a spreadsheet would read as a formula starts with an apostrophe.',
      tag: TAG,
      params: batchIdParams,
      responses: { 200: { description: 'CSV', contentType: 'text/csv', schema: z.string() } },
      errors: ['invalidRequest', 'batchNotFound'],
      handler: ({ params, business }) => requirementBatchFailedRecords(context, business, params.batchId),
      present: ({ fileName, csv }) => ({ body: csv, headers: { 'Content-Disposition': `attachment; filename="${fileName}"` } }),
    }),
  ];
}
