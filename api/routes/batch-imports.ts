// Token-sharing batch imports (interface 2.3, 2.4, 3.1, 4.1): upload, status, cancel, retry of
// failed rows, and the failed rows as CSV.
import { z } from 'zod';
import { MAX_FILE_BYTES } from '../../domain/batch-csv.ts';
import { batchStatusSchema } from '../../domain/batch-status.ts';
import {
  batchIdParams,
  batchUploadResponse,
  IDEMPOTENCY_KEY_SCHEMA,
  IMPORT_PROVIDERS,
  MAX_IDEMPOTENCY_KEY,
  PROVIDER_HEADER_SCHEMA,
} from '../../domain/token-sharing.ts';
import { batchFailedRows, batchRetrySchema, cancelBatch, getBatch, retryBatch, uploadBatch } from '../../usecases/batch-imports.ts';
import type { UseCaseContext } from '../../usecases/context.ts';
import { optionalPaginationQuery, requestedPage } from '../../domain/pagination.ts';
import type { Uploads } from '../uploads.ts';
import { route } from '../route.ts';

/** The Idempotency-Key header of both batch uploads, as the API description shows it. */
export const IDEMPOTENCY_KEY_HEADER = {
  name: 'Idempotency-Key',
  required: true,
  description: `Unique per upload (at most ${MAX_IDEMPOTENCY_KEY} characters); retrying with the same key never creates a second batch`,
  schema: IDEMPOTENCY_KEY_SCHEMA,
};

export function batchImportRoutes(context: UseCaseContext, uploads: Uploads) {
  return [
    route({
      method: 'post',
      path: '/entity/kyc/import/batch',
      operationId: 'uploadBatchImport',
      summary: 'Upload a CSV of share tokens (batch import)',
      description:
        'Validates and stores the file at once, then processes it in the background. Columns: ' +
        'externalId, shareToken (required), applicantLevel, cardProcessorPublicToken (required for ' +
        'BIN-sponsored programs, 9 digits, unique in the file). UTF-8, header row, at most 5,000 ' +
        'records and 10 MB.',
      tag: 'Token sharing',
      docHeaders: [
        {
          name: 'X-Provider',
          required: true,
          description: `Identity provider of the share tokens: ${IMPORT_PROVIDERS.join(', ')} (any case)`,
          schema: PROVIDER_HEADER_SCHEMA,
        },
        IDEMPOTENCY_KEY_HEADER,
      ],
      docBody: {
        contentType: 'multipart/form-data',
        schema: { type: 'object', required: ['file'], properties: { file: { type: 'string', format: 'binary', description: 'the CSV' } } },
      },
      responses: { 201: { description: 'Accepted; processing starts at once', schema: batchUploadResponse } },
      errors: ['batchFileTooLarge', 'batchInvalidData', 'batchAlreadyUploaded', 'uploadStalled', 'uploadsBusy', 'uploadsUnavailable'],
      handler: ({ ctx, business }) =>
        uploadBatch(context, business, {
          provider: ctx.get('x-provider'),
          idempotencyKey: ctx.get('idempotency-key'),
          readCsv: ({ binSponsored }) => uploads.batchCsv(ctx, business.id, { maxBytes: MAX_FILE_BYTES, binSponsored }),
        }),
    }),
    route({
      method: 'get',
      path: '/entity/kyc/import/batch/:batchId',
      operationId: 'getBatchImport',
      summary: "A batch's status, counters and per-record errors",
      tag: 'Token sharing',
      description:
        'summary.errors lists every failed record (up to 5,000). With page or limit (v1.0.2) it ' +
        'holds one page of them, in row order, and meta says which page of how many.',
      params: batchIdParams,
      query: optionalPaginationQuery,
      responses: { 200: { description: 'The status record', schema: batchStatusSchema } },
      errors: ['invalidRequest', 'batchNotFound'],
      handler: ({ params, query, business }) => getBatch(context, business, params.batchId, requestedPage(query)),
    }),
    route({
      method: 'post',
      path: '/entity/kyc/import/batch/:batchId/cancel',
      operationId: 'cancelBatchImport',
      summary: 'Cancel a batch that has not finished',
      description: 'Rows not yet started are left unprocessed; rows already with the provider finish and are counted.',
      tag: 'Token sharing',
      params: batchIdParams,
      responses: { 200: { description: 'The batch, now canceled', schema: batchStatusSchema } },
      errors: ['invalidRequest', 'batchNotFound', 'batchNotCancelable'],
      handler: ({ params, business }) => cancelBatch(context, business, params.batchId),
    }),
    route({
      method: 'post',
      path: '/entity/kyc/import/batch/:batchId/retry',
      operationId: 'retryBatchImport',
      summary: 'Retry the retryable failed rows of a finished batch',
      description:
        'Rows whose errorDetail.retryable is true (and rows a failed run never reached) go back to ' +
        'pending and a new run processes them with their original share tokens.',
      tag: 'Token sharing',
      params: batchIdParams,
      responses: { 202: { description: 'A new run started', schema: batchRetrySchema } },
      errors: ['invalidRequest', 'batchNotFound', 'batchNotRetryable'],
      handler: ({ params, business }) => retryBatch(context, business, params.batchId),
    }),
    route({
      method: 'get',
      path: '/entity/kyc/import/batch/:batchId/failed-rows',
      operationId: 'batchImportFailedRows',
      summary: "A batch's failed rows as CSV",
      description: 'The input columns, so the file can be fixed and uploaded again, followed by rowNumber, errorCategory, errorMessage and retryable.',
      tag: 'Token sharing',
      params: batchIdParams,
      responses: { 200: { description: 'CSV', contentType: 'text/csv', schema: z.string() } },
      errors: ['invalidRequest', 'batchNotFound'],
      handler: ({ params, business }) => batchFailedRows(context, business, params.batchId),
      present: ({ fileName, csv }) => ({ body: csv, headers: { 'Content-Disposition': `attachment; filename="${fileName}"` } }),
    }),
  ];
}
