// Token-sharing batch imports (interface 2.3, 2.4, 3.1, 4.1): upload, status, cancel, retry of the
// failed rows, and the failed rows as CSV. The upload validates and stores everything in one go,
// then starts the batch's workflow; the workflow does the rest.
import { WorkflowNotFoundError } from '@temporalio/client';
import { parseBatchCsv, UploadRejected, type BatchRow } from '../domain/batch-csv.ts';
import { batchStatusRecord, TERMINAL } from '../domain/batch-status.ts';
import { csvLine } from '../domain/csv.ts';
import { done, refuse, type Outcome, type Refusal } from '../domain/outcome.ts';
import { idempotencyKeyProblem, IMPORT_PROVIDERS } from '../domain/token-sharing.ts';
import { batchWorkflowId } from '../contract/workflows.ts';
import { createBatch, failedRows, findBatch, findBatchByContent, findBatchByKey, markBatchCanceled, requeueRetryableRows, type Batch } from '../store/batches.ts';
import { isUniqueViolation } from '../store/db.ts';
import type { Caller, UseCaseContext } from './context.ts';

export type UploadedFile = { bytes: Buffer; fileName: string | null; sha256: string };
/** The upload's file as the API read it, or why it could not. */
export type FileRead = { ok: true; file: UploadedFile } | { ok: false; problem: 'not-multipart' | 'no-file' | 'too-large' | 'malformed'; message: string };

export type UploadRequest = {
  /** X-Provider, as sent. */
  provider: string;
  /** Idempotency-Key, as sent ('' when absent). */
  idempotencyKey: string;
  /** Reads the file; called once the headers are valid. */
  readFile(): Promise<FileRead>;
};

const UPLOAD_KEYS = {
  batchFileTooLarge: 'kyc_batch.upload.file_too_large',
  batchInvalidData: 'kyc_batch.upload.invalid_data',
  batchKeyAlreadyProcessed: 'kyc_batch.upload.idempotency_key_used',
  batchDuplicateContent: 'kyc_batch.upload.duplicate_file_or_content',
} as const;

/** Upload refusals also carry `errorKey`, the interface's string code. */
const refuseUpload = (error: keyof typeof UPLOAD_KEYS, message: string, parameter: string, extra: Record<string, unknown> = {}): Refusal =>
  refuse(error, message, { parameter, extra: { errorKey: UPLOAD_KEYS[error], ...extra } });

const notFound = (id: string) => refuse('batchNotFound', `Batch ${id} not found.`, { parameter: 'batchId' });

const accepted = (b: Batch) => ({
  batchId: b.id,
  businessUuid: b.businessId,
  status: 'pending' as const,
  totalRecords: b.totalRecords,
  message: `Batch accepted: ${b.totalRecords} record${b.totalRecords === 1 ? '' : 's'} queued. Poll GET /entity/kyc/import/batch/${b.id} for progress; decisions arrive by webhook.`,
  createdAt: b.createdAt,
});

/** The request's headers, checked before the file is read: the provider and the key. */
function checkHeaders(request: UploadRequest): Outcome<{ provider: string; key: string }> {
  const provider = request.provider.trim().toLowerCase();
  if (!provider) return refuseUpload('batchInvalidData', `The X-Provider header is required (${IMPORT_PROVIDERS.join(', ')}).`, 'X-Provider');
  if (!(IMPORT_PROVIDERS as readonly string[]).includes(provider)) {
    return refuseUpload('batchInvalidData', `X-Provider "${request.provider.slice(0, 40)}" is not supported; supported: ${IMPORT_PROVIDERS.join(', ')}.`, 'X-Provider');
  }
  const key = request.idempotencyKey;
  if (!key) return refuseUpload('batchInvalidData', 'The Idempotency-Key header is required: a unique value per upload.', 'Idempotency-Key');
  const keyProblem = idempotencyKeyProblem(key);
  if (keyProblem) return refuseUpload('batchInvalidData', `The Idempotency-Key ${keyProblem}.`, 'Idempotency-Key');
  return done({ provider, key });
}

function parseRows(file: UploadedFile, caller: Caller): Outcome<BatchRow[]> {
  try {
    return done(parseBatchCsv(file.bytes, { binSponsored: caller.binSponsored }));
  } catch (err) {
    if (!(err instanceof UploadRejected)) throw err;
    return refuseUpload(err.kind === 'tooLarge' ? 'batchFileTooLarge' : 'batchInvalidData', err.message, 'file', err.issues.length ? { details: err.issues } : {});
  }
}

export async function uploadBatch(ctx: UseCaseContext, caller: Caller, request: UploadRequest) {
  const { db, start } = ctx;
  const headers = checkHeaders(request);
  if (!headers.ok) return headers;
  const { provider, key } = headers.value;
  const read = await request.readFile();
  if (!read.ok) return refuseUpload(read.problem === 'too-large' ? 'batchFileTooLarge' : 'batchInvalidData', read.message, 'file');
  const { file } = read;

  /** The same key again: the same answer while the batch runs (a retried upload), else 0701010300. */
  const replay = async (existing: Batch) => {
    if (existing.contentSha256 !== file.sha256) {
      return refuseUpload('batchKeyAlreadyProcessed', 'This Idempotency-Key was already used for a different file; use a new key for a new upload.', 'Idempotency-Key');
    }
    if (TERMINAL.includes(existing.status)) {
      return refuseUpload('batchKeyAlreadyProcessed', `This Idempotency-Key belongs to batch ${existing.id}, which has already been processed (${existing.status}).`, 'Idempotency-Key', {
        batchId: existing.id,
      });
    }
    // If the first attempt stored the batch but could not start it (Temporal unavailable), this
    // retry starts it (so would the reconciler within minutes).
    await start.batchRun(existing.id, existing.run, caller.id);
    return done(accepted(existing));
  };

  const existing = await findBatchByKey(db, caller.id, key);
  if (existing) return replay(existing);
  const rows = parseRows(file, caller);
  if (!rows.ok) return rows;
  const duplicate = await findBatchByContent(db, caller.id, file.sha256);
  if (duplicate) {
    // The same key may have been stored by a concurrent request meanwhile: that is a replay.
    if (duplicate.idempotencyKey === key) return replay(duplicate);
    return refuseUpload('batchDuplicateContent', `A file with the same content was already uploaded as batch ${duplicate.id}.`, 'file', { batchId: duplicate.id });
  }

  let batch: Batch;
  try {
    batch = await createBatch(db, { businessId: caller.id, provider, idempotencyKey: key, contentSha256: file.sha256, fileName: file.fileName, rows: rows.value });
  } catch (err) {
    // Another request with the same key or file won the race: answer as if we came second.
    if (isUniqueViolation(err, 'import_batches_idempotency_key')) return replay((await findBatchByKey(db, caller.id, key))!);
    if (!isUniqueViolation(err, 'import_batches_content_key')) throw err;
    const winner = await findBatchByContent(db, caller.id, file.sha256);
    if (winner?.idempotencyKey === key) return replay(winner);
    return refuseUpload('batchDuplicateContent', 'A file with the same content was already uploaded.', 'file');
  }
  // If the start fails (Temporal unavailable) the batch is stored and the answer is an error; the
  // client's retry with the same key starts it, and so does the reconciler within minutes.
  await start.batchRun(batch.id, batch.run, caller.id);
  return done(accepted(batch));
}

export async function getBatch({ db }: UseCaseContext, caller: Caller, batchId: string) {
  const batch = await findBatch(db, caller.id, batchId);
  if (!batch) return notFound(batchId);
  return done(batchStatusRecord(batch, await failedRows(db, batch.id)));
}

export async function cancelBatch({ db, temporal, log }: UseCaseContext, caller: Caller, batchId: string) {
  const batch = await findBatch(db, caller.id, batchId);
  if (!batch) return notFound(batchId);
  if (!(await markBatchCanceled(db, caller.id, batch.id))) {
    return refuse('batchNotCancelable', `Batch ${batch.id} has already finished (${batch.status}).`, { parameter: 'batchId' });
  }
  // The batch is canceled in PostgreSQL, which every record checks before it starts: stopping the
  // workflow too only saves its remaining (empty) steps, so a failure here changes nothing.
  await temporal.workflow
    .getHandle(batchWorkflowId(batch.id, batch.run))
    .cancel()
    .catch((err: unknown) => {
      if (!(err instanceof WorkflowNotFoundError)) log.warn({ err, batchId: batch.id }, 'batch canceled; its workflow could not be told (records not yet started will not start)');
    });
  return done(batchStatusRecord((await findBatch(db, caller.id, batch.id))!, await failedRows(db, batch.id)));
}

export async function retryBatch({ db, start }: UseCaseContext, caller: Caller, batchId: string) {
  const result = await requeueRetryableRows(db, caller.id, batchId);
  if (result === 'not-found') return notFound(batchId);
  if (result === 'running') return refuse('batchNotRetryable', 'The batch is still running; retry its failed rows once it has finished.', { parameter: 'batchId' });
  if (result === 'nothing') return refuse('batchNotRetryable', 'The batch has no retryable failed rows.', { parameter: 'batchId' });
  await start.batchRun(batchId, result.run, caller.id);
  return done({ batchId, status: 'in_progress' as const, requeuedRecords: result.requeued });
}

/** The failed rows as a CSV that can be fixed and uploaded again: input columns, then what went wrong. */
export async function batchFailedRows({ db }: UseCaseContext, caller: Caller, batchId: string) {
  const batch = await findBatch(db, caller.id, batchId);
  if (!batch) return notFound(batchId);
  const lines = [csvLine(['externalId', 'shareToken', 'applicantLevel', 'cardProcessorPublicToken', 'rowNumber', 'errorCategory', 'errorMessage', 'retryable'])];
  for (const f of await failedRows(db, batch.id)) {
    lines.push(csvLine([f.externalId, f.shareToken, f.applicantLevel ?? '', f.cardProcessorPublicToken ?? '', String(f.rowNumber), f.category, f.message, String(f.retryable)]));
  }
  return done({ fileName: `batch-${batch.id}-failed-rows.csv`, csv: lines.join('') });
}
