// Token-sharing batch imports (interface 2.3, 2.4, 3.1, 4.1): upload, status, cancel, retry of
// failed rows, and the failed rows as CSV. The upload validates and stores everything in one go,
// then starts the batch's workflow; the workflow does the rest.
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Logger } from 'pino';
import { z } from 'zod';
import { MAX_FILE_BYTES, parseBatchCsv, UploadRejected } from '../../domain/batch-csv.ts';
import { csvLine } from '../../domain/csv.ts';
import { ApiError } from '../../domain/errors.ts';
import { batchIdParams, batchStatusSchema, batchUploadResponse, IDEMPOTENCY_KEY_SCHEMA, idempotencyKeyProblem, IMPORT_PROVIDERS, MAX_IDEMPOTENCY_KEY, PROVIDER_HEADER_SCHEMA } from '../../domain/token-sharing.ts';
import type { Config } from '../../runtime/config.ts';
import { createStarters } from '../../runtime/starters.ts';
import { batchStatusRecord, TERMINAL } from '../../domain/batch-status.ts';
import {
  createBatch,
  failedRows,
  findBatch,
  findBatchByContent,
  findBatchByKey,
  markBatchCanceled,
  requeueRetryableRows,
  type Batch,
} from '../../store/batches.ts';
import { isUniqueViolation, type Db } from '../../store/db.ts';
import { batchWorkflowId } from '../../contract/workflows.ts';
import { MultipartError, readFileField } from '../multipart.ts';
import { route } from '../route.ts';

const UPLOAD_KEYS = {
  batchFileTooLarge: 'kyc_batch.upload.file_too_large',
  batchInvalidData: 'kyc_batch.upload.invalid_data',
  batchKeyAlreadyProcessed: 'kyc_batch.upload.idempotency_key_used',
  batchDuplicateContent: 'kyc_batch.upload.duplicate_file_or_content',
} as const;

function uploadError(name: keyof typeof UPLOAD_KEYS, message: string, parameter = '', extra: Record<string, unknown> = {}) {
  return new ApiError(name, message, { parameter, extra: { errorKey: UPLOAD_KEYS[name], ...extra } });
}

const notFound = (id: string) => new ApiError('batchNotFound', `Batch ${id} not found.`, { parameter: 'batchId' });

export function batchImportRoutes(deps: { db: Db; temporal: Client; config: Config; log: Logger }) {
  const { db, temporal, config, log } = deps;
  const start = createStarters(temporal, config);
  // If the start fails (Temporal unavailable) the batch is stored and the answer is an error; the
  // client's retry with the same key starts it, and so does the reconciler within minutes.
  const startRun = (batchId: string, run: number) => start.batchRun(batchId, run);

  const uploadReply = (b: Batch) => ({
    status: 201,
    body: {
      batchId: b.id,
      businessUuid: b.businessId,
      status: 'pending',
      totalRecords: b.totalRecords,
      message: `Batch accepted: ${b.totalRecords} record${b.totalRecords === 1 ? '' : 's'} queued. Poll GET /entity/kyc/import/batch/${b.id} for progress; decisions arrive by webhook.`,
      createdAt: b.createdAt,
    },
  });

  /** The same key again: the same answer while the batch runs (a retried upload), else 0701010300. */
  async function replay(existing: Batch, sha256: string) {
    if (existing.contentSha256 !== sha256) {
      throw uploadError('batchKeyAlreadyProcessed', 'This Idempotency-Key was already used for a different file; use a new key for a new upload.', 'Idempotency-Key');
    }
    if (TERMINAL.includes(existing.status)) {
      throw uploadError('batchKeyAlreadyProcessed', `This Idempotency-Key belongs to batch ${existing.id}, which has already been processed (${existing.status}).`, 'Idempotency-Key', { batchId: existing.id });
    }
    await startRun(existing.id, existing.run); // in case the first attempt stored the batch but could not start it
    return uploadReply(existing);
  }

  return [
    route({
      method: 'post',
      path: '/entity/kyc/import/batch',
      operationId: 'uploadBatchImport',
      summary: 'Upload a CSV of share tokens (batch import)',
      description:
        'Validates and stores the file at once, then processes it in the background. Columns: externalId, shareToken (required), applicantLevel, cardProcessorPublicToken (required for BIN-sponsored programs, 9 digits, unique in the file). UTF-8, header row, at most 5,000 records and 10 MB.',
      tag: 'Token sharing',
      docHeaders: [
        { name: 'X-Provider', required: true, description: `Identity provider of the share tokens: ${IMPORT_PROVIDERS.join(', ')} (any case)`, schema: PROVIDER_HEADER_SCHEMA },
        {
          name: 'Idempotency-Key',
          required: true,
          description: `Unique per upload (at most ${MAX_IDEMPOTENCY_KEY} characters); retrying with the same key never creates a second batch`,
          schema: IDEMPOTENCY_KEY_SCHEMA,
        },
      ],
      docBody: { contentType: 'multipart/form-data', schema: { type: 'object', required: ['file'], properties: { file: { type: 'string', format: 'binary', description: 'the CSV' } } } },
      responses: { 201: { description: 'Accepted; processing starts at once', schema: batchUploadResponse } },
      errors: ['batchFileTooLarge', 'batchInvalidData', 'batchKeyAlreadyProcessed', 'batchDuplicateContent'],
      async handler({ ctx, business }) {
        const provider = ctx.get('x-provider').trim().toLowerCase();
        if (!provider) throw uploadError('batchInvalidData', `The X-Provider header is required (${IMPORT_PROVIDERS.join(', ')}).`, 'X-Provider');
        if (!(IMPORT_PROVIDERS as readonly string[]).includes(provider)) {
          throw uploadError('batchInvalidData', `X-Provider "${ctx.get('x-provider').slice(0, 40)}" is not supported; supported: ${IMPORT_PROVIDERS.join(', ')}.`, 'X-Provider');
        }
        const key = ctx.get('idempotency-key');
        if (!key) throw uploadError('batchInvalidData', 'The Idempotency-Key header is required: a unique value per upload.', 'Idempotency-Key');
        const keyProblem = idempotencyKeyProblem(key);
        if (keyProblem) throw uploadError('batchInvalidData', `The Idempotency-Key ${keyProblem}.`, 'Idempotency-Key');

        let file;
        try {
          file = await readFileField(ctx, 'file', MAX_FILE_BYTES);
        } catch (err) {
          if (!(err instanceof MultipartError)) throw err;
          throw uploadError(err.problem === 'too-large' ? 'batchFileTooLarge' : 'batchInvalidData', err.message, 'file');
        }

        const existing = await findBatchByKey(db, business.id, key);
        if (existing) return replay(existing, file.sha256);
        let rows;
        try {
          rows = parseBatchCsv(file.bytes, { binSponsored: business.binSponsored });
        } catch (err) {
          if (!(err instanceof UploadRejected)) throw err;
          throw uploadError(err.kind === 'tooLarge' ? 'batchFileTooLarge' : 'batchInvalidData', err.message, 'file', err.issues.length ? { details: err.issues } : {});
        }
        const duplicate = await findBatchByContent(db, business.id, file.sha256);
        if (duplicate) {
          // The same key may have been stored by a concurrent request meanwhile: that is a replay.
          if (duplicate.idempotencyKey === key) return replay(duplicate, file.sha256);
          throw uploadError('batchDuplicateContent', `A file with the same content was already uploaded as batch ${duplicate.id}.`, 'file', { batchId: duplicate.id });
        }

        let batch: Batch;
        try {
          batch = await createBatch(db, { businessId: business.id, provider, idempotencyKey: key, contentSha256: file.sha256, fileName: file.fileName, rows });
        } catch (err) {
          // Another request with the same key or file won the race: answer as if we came second.
          if (isUniqueViolation(err, 'import_batches_idempotency_key')) return replay((await findBatchByKey(db, business.id, key))!, file.sha256);
          if (isUniqueViolation(err, 'import_batches_content_key')) {
            const winner = await findBatchByContent(db, business.id, file.sha256);
            if (winner?.idempotencyKey === key) return replay(winner, file.sha256);
            throw uploadError('batchDuplicateContent', 'A file with the same content was already uploaded.', 'file');
          }
          throw err;
        }
        await startRun(batch.id, batch.run);
        return uploadReply(batch);
      },
    }),
    route({
      method: 'get',
      path: '/entity/kyc/import/batch/:batchId',
      operationId: 'getBatchImport',
      summary: "A batch's status, counters and per-record errors",
      tag: 'Token sharing',
      params: batchIdParams,
      responses: { 200: { description: 'The status record', schema: batchStatusSchema } },
      errors: ['invalidRequest', 'batchNotFound'],
      async handler({ params, business }) {
        const batch = await findBatch(db, business.id, params.batchId);
        if (!batch) throw notFound(params.batchId);
        return { status: 200, body: batchStatusRecord(batch, await failedRows(db, batch.id)) };
      },
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
      async handler({ params, business }) {
        const batch = await findBatch(db, business.id, params.batchId);
        if (!batch) throw notFound(params.batchId);
        if (!(await markBatchCanceled(db, business.id, batch.id))) {
          throw new ApiError('batchNotCancelable', `Batch ${batch.id} has already finished (${batch.status}).`, { parameter: 'batchId' });
        }
        // The batch is canceled in PostgreSQL, which every record checks before it starts: stopping
        // the workflow too only saves its remaining (empty) steps, so a failure here changes nothing.
        try {
          await temporal.workflow.getHandle(batchWorkflowId(batch.id, batch.run)).cancel();
        } catch (err) {
          if (!(err instanceof WorkflowNotFoundError)) log.warn({ err, batchId: batch.id }, 'batch canceled; its workflow could not be told (records not yet started will not start)');
        }
        return { status: 200, body: batchStatusRecord((await findBatch(db, business.id, batch.id))!, await failedRows(db, batch.id)) };
      },
    }),
    route({
      method: 'post',
      path: '/entity/kyc/import/batch/:batchId/retry',
      operationId: 'retryBatchImport',
      summary: 'Retry the retryable failed rows of a finished batch',
      description: 'Rows whose errorDetail.retryable is true (and rows a failed run never reached) go back to pending and a new run processes them with their original share tokens.',
      tag: 'Token sharing',
      params: batchIdParams,
      responses: { 202: { description: 'A new run started', schema: z.object({ batchId: z.uuid(), status: z.literal('in_progress'), requeuedRecords: z.number().int() }) } },
      errors: ['invalidRequest', 'batchNotFound', 'batchNotRetryable'],
      async handler({ params, business }) {
        const result = await requeueRetryableRows(db, business.id, params.batchId);
        if (result === 'not-found') throw notFound(params.batchId);
        if (result === 'running') throw new ApiError('batchNotRetryable', 'The batch is still running; retry its failed rows once it has finished.', { parameter: 'batchId' });
        if (result === 'nothing') throw new ApiError('batchNotRetryable', 'The batch has no retryable failed rows.', { parameter: 'batchId' });
        await startRun(params.batchId, result.run);
        return { status: 202, body: { batchId: params.batchId, status: 'in_progress', requeuedRecords: result.requeued } };
      },
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
      async handler({ params, business }) {
        const batch = await findBatch(db, business.id, params.batchId);
        if (!batch) throw notFound(params.batchId);
        const lines = [csvLine(['externalId', 'shareToken', 'applicantLevel', 'cardProcessorPublicToken', 'rowNumber', 'errorCategory', 'errorMessage', 'retryable'])];
        for (const f of await failedRows(db, batch.id)) {
          lines.push(csvLine([f.externalId, f.shareToken, f.applicantLevel ?? '', f.cardProcessorPublicToken ?? '', String(f.rowNumber), f.category, f.message, String(f.retryable)]));
        }
        return {
          status: 200,
          type: 'text/csv; charset=utf-8',
          headers: { 'Content-Disposition': `attachment; filename="batch-${batch.id}-failed-rows.csv"` },
          body: lines.join(''),
        };
      },
    }),
  ];
}
