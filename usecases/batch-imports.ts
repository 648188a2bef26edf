// Token-sharing batch imports (interface 2.3, 2.4, 3.1, 4.1): upload, status, cancel, retry of the
// failed rows, and the failed rows as CSV. The upload validates and stores everything in one go,
// then starts the batch's workflow; the workflow does the rest.
import { z } from 'zod';
import type { BatchCsvRead } from '../domain/batch-csv.ts';
import { batchStatusRecord, TERMINAL, type BatchStatusRecord } from '../domain/batch-status.ts';
import { csvLine } from '../domain/csv.ts';
import { done, refuse, type Outcome, type Refusal } from '../domain/outcome.ts';
import type { Page } from '../domain/pagination.ts';
import { idempotencyKeyProblem, IMPORT_PROVIDERS, type BatchAccepted } from '../domain/token-sharing.ts';
import {
  createBatch,
  failedRows,
  findBatch,
  findBatchByContent,
  findBatchByKey,
  markBatchCanceled,
  requeueRetryableRows,
  type Batch,
} from '../store/batches.ts';
import { isUniqueViolation } from '../store/db.ts';
import type { Caller, UseCaseContext } from './context.ts';
import { uploadRefusal, type UploadProblem } from './uploads.ts';

/** The upload's CSV as the API read it (checked by the CSV rules while it streamed in, and hashed), or why it could not be read. */
export type CsvRead = { ok: true; file: { csv: BatchCsvRead; sha256: string; fileName: string | null } } | UploadProblem;

export type UploadRequest = {
  /** X-Provider, as sent. */
  provider: string;
  /** Idempotency-Key, as sent ('' when absent). */
  idempotencyKey: string;
  /** Reads the file, by the CSV rules of the caller's program; called once the headers are valid. */
  readCsv(options: { binSponsored: boolean }): Promise<CsvRead>;
};

const UPLOAD_KEYS = {
  batchFileTooLarge: 'kyc_batch.upload.file_too_large',
  batchInvalidData: 'kyc_batch.upload.invalid_data',
  batchAlreadyUploaded: 'kyc_batch.upload.duplicate_file_or_content',
} as const;

/** Upload refusals also carry `errorKey`, the interface's string code. */
const refuseUpload = (error: keyof typeof UPLOAD_KEYS, message: string, parameter: string, extra: Record<string, unknown> = {}): Refusal =>
  refuse(error, message, { parameter, extra: { errorKey: UPLOAD_KEYS[error], ...extra } });

const notFound = (id: string) =>
  refuse('batchNotFound', `Batch ${id} not found in your business; check the batchId the upload returned.`, { parameter: 'batchId' });

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** The upload's answer; `failedAtOnce`, the records that failed on their own (domain/batch-csv.ts), told on the first answer. */
const accepted = (b: Batch, failedAtOnce = 0): BatchAccepted => {
  const notes = [
    failedAtOnce
      ? `${plural(failedAtOnce, 'record')} failed on ${failedAtOnce === 1 ? 'its' : 'their'} own ` +
        `and ${failedAtOnce === 1 ? 'is' : 'are'} listed in summary.errors`
      : '',
    b.ignoredColumns.length
      ? `ignored the column${b.ignoredColumns.length === 1 ? '' : 's'} ` +
        `${b.ignoredColumns.join(', ')} (the columns are externalId, shareToken, applicantLevel, ` +
        `cardProcessorPublicToken)`
      : '',
  ].filter(Boolean);
  return {
    batchId: b.id,
    businessUuid: b.businessId,
    status: 'pending' as const,
    totalRecords: b.totalRecords,
    message:
      `Batch accepted: ${plural(b.totalRecords, 'record')} queued` +
      `${notes.length ? `; ${notes.join('; ')}` : ''}. Poll GET /entity/kyc/import/batch/${b.id} for progress; decisions arrive by webhook.`,
    createdAt: b.createdAt,
    ...(b.ignoredColumns.length ? { ignoredColumns: b.ignoredColumns } : {}),
  };
};

/** The request's headers, checked before the file is read: the provider and the key. */
function checkHeaders(request: UploadRequest): Outcome<{ provider: string; key: string }> {
  const provider = request.provider.trim().toLowerCase();
  if (!provider) return refuseUpload('batchInvalidData', `The X-Provider header is required (${IMPORT_PROVIDERS.join(', ')}).`, 'X-Provider');
  if (!(IMPORT_PROVIDERS as readonly string[]).includes(provider)) {
    return refuseUpload(
      'batchInvalidData',
      `X-Provider "${request.provider.slice(0, 40)}" is not supported; supported: ${IMPORT_PROVIDERS.join(', ')}.`,
      'X-Provider',
    );
  }
  const key = request.idempotencyKey;
  if (!key) return refuseUpload('batchInvalidData', 'The Idempotency-Key header is required: a unique value per upload.', 'Idempotency-Key');
  const keyProblem = idempotencyKeyProblem(key);
  if (keyProblem) return refuseUpload('batchInvalidData', `The Idempotency-Key ${keyProblem}.`, 'Idempotency-Key');
  return done({ provider, key });
}

/** A file the CSV rules refused: too large (size, rows) or invalid, with the rows and fields at fault. */
function csvRefusal(csv: Extract<BatchCsvRead, { ok: false }>): Refusal {
  const { kind, message, issues } = csv.rejected;
  return refuseUpload(kind === 'tooLarge' ? 'batchFileTooLarge' : 'batchInvalidData', message, 'file', issues.length ? { details: issues } : {});
}

/** The spec's codes for a file that could not be read (section 7: too large; no file or not a form is invalid data); the upload endpoints' own for the rest. */
function readRefusal(read: UploadProblem): Refusal {
  if (read.problem === 'not-multipart' || read.problem === 'no-file' || read.problem === 'malformed')
    return refuseUpload('batchInvalidData', read.message, 'file');
  return uploadRefusal(read, 'file', refuseUpload('batchFileTooLarge', read.message, 'file'));
}

/** Why an upload was already made (0701010300): the code is the spec's one; the reason tells them apart. */
type AlreadyUploaded = 'key_already_processed' | 'key_used_for_other_file' | 'same_content';
const alreadyUploaded = (reason: AlreadyUploaded, message: string, batchId: string) =>
  refuseUpload('batchAlreadyUploaded', message, reason === 'same_content' ? 'file' : 'Idempotency-Key', { reason, batchId });

const alreadyProcessed = (existing: Batch) =>
  alreadyUploaded(
    'key_already_processed',
    `This Idempotency-Key belongs to batch ${existing.id}, which has already been processed (` +
      `${existing.status}). Read its outcome with GET /entity/kyc/import/batch/${existing.id}; to` +
      ` upload again, use a new key.`,
    existing.id,
  );

export async function uploadBatch(uc: UseCaseContext, caller: Caller, request: UploadRequest): Promise<Outcome<BatchAccepted>> {
  const { db, start } = uc;
  const headers = checkHeaders(request);
  if (!headers.ok) return headers;
  const { provider, key } = headers.value;
  const existing = await findBatchByKey(db, caller.id, key);
  // a key whose batch has finished answers so whatever the file: no need to read it
  if (existing && TERMINAL.includes(existing.status)) return alreadyProcessed(existing);
  const read = await request.readCsv({ binSponsored: caller.binSponsored });
  if (!read.ok) return readRefusal(read);
  const { csv, sha256, fileName } = read.file;

  /** The same key again: the same answer while the batch runs (a retried upload), else 0701010300. */
  const replay = async (batch: Batch) => {
    if (batch.contentSha256 !== sha256) {
      return alreadyUploaded(
        'key_used_for_other_file',
        `This Idempotency-Key was already used for another file (batch ${batch.id}); use a new key for a new upload.`,
        batch.id,
      );
    }
    if (TERMINAL.includes(batch.status)) return alreadyProcessed(batch);
    // If the first attempt stored the batch but could not start it (Temporal unavailable), this
    // retry starts it (so would the reconciler within minutes).
    await start.batchRun(batch.id, batch.run, caller.id);
    return done(accepted(batch));
  };

  if (existing) return replay(existing);
  if (!csv.ok) return csvRefusal(csv);
  const duplicate = await findBatchByContent(db, caller.id, sha256);
  if (duplicate) {
    // The same key may have been stored by a concurrent request meanwhile: that is a replay.
    if (duplicate.idempotencyKey === key) return replay(duplicate);
    return alreadyUploaded(
      'same_content',
      `A file with the same content was already uploaded as batch ${duplicate.id}; read it with ` +
        `GET /entity/kyc/import/batch/${duplicate.id}, or change the file.`,
      duplicate.id,
    );
  }

  let batch: Batch;
  try {
    batch = await createBatch(db, {
      businessId: caller.id,
      provider,
      idempotencyKey: key,
      contentSha256: sha256,
      fileName,
      rows: csv.rows,
      ignoredColumns: csv.ignoredColumns,
    });
  } catch (err) {
    // Another request with the same key or file won the race: answer as if we came second.
    if (isUniqueViolation(err, 'import_batches_idempotency_key')) return replay((await findBatchByKey(db, caller.id, key))!);
    if (!isUniqueViolation(err, 'import_batches_content_key')) throw err;
    const winner = await findBatchByContent(db, caller.id, sha256);
    if (!winner) throw err;
    if (winner.idempotencyKey === key) return replay(winner);
    return alreadyUploaded(
      'same_content',
      `A file with the same content was already uploaded as batch ${winner.id}; read it with GET /entity/kyc/import/batch/${winner.id}, or change the file.`,
      winner.id,
    );
  }
  // If the start fails (Temporal unavailable) the batch is stored and the answer is an error; the
  // client's retry with the same key starts it, and so does the reconciler within minutes.
  await start.batchRun(batch.id, batch.run, caller.id);
  return done(accepted(batch, csv.rows.filter((r) => r.failure).length));
}

/** GET …/batch/{batchId}: the status record, with every error or (page given) a page of them. */
export async function getBatch({ db }: UseCaseContext, caller: Caller, batchId: string, page: Page | null = null): Promise<Outcome<BatchStatusRecord>> {
  const batch = await findBatch(db, caller.id, batchId);
  if (!batch) return notFound(batchId);
  return done(batchStatusRecord(batch, await failedRows(db, batch.id, page), page));
}

export async function cancelBatch({ db, runs, log }: UseCaseContext, caller: Caller, batchId: string): Promise<Outcome<BatchStatusRecord>> {
  const batch = await findBatch(db, caller.id, batchId);
  if (!batch) return notFound(batchId);
  if (!(await markBatchCanceled(db, caller.id, batch.id))) {
    return refuse(
      'batchNotCancelable',
      `Batch ${batch.id} has already finished (${batch.status}), so there is nothing to cancel; ` +
        `read its outcome with GET /entity/kyc/import/batch/${batch.id}.`,
      { parameter: 'batchId' },
    );
  }
  // The batch is canceled in PostgreSQL, which every record checks before it starts: stopping the
  // workflow too only saves its remaining (empty) steps, so a failure here changes nothing.
  await runs.cancelBatchRun(batch.id, batch.run).catch((err: unknown) => {
    log.warn({ err, batchId: batch.id }, 'batch canceled; its workflow could not be told (records not yet started will not start)');
  });
  return done(batchStatusRecord((await findBatch(db, caller.id, batch.id))!, await failedRows(db, batch.id)));
}

/** POST …/retry's answer: the new run has started. */
export const batchRetrySchema = z.object({ batchId: z.uuid(), status: z.literal('in_progress'), requeuedRecords: z.number().int() });

export async function retryBatch({ db, start }: UseCaseContext, caller: Caller, batchId: string): Promise<Outcome<z.input<typeof batchRetrySchema>>> {
  const result = await requeueRetryableRows(db, caller.id, batchId);
  if (result === 'not-found') return notFound(batchId);
  if (result === 'running')
    return refuse('batchNotRetryable', 'The batch is still running; retry its failed rows once it has finished.', { parameter: 'batchId' });
  if (result === 'nothing')
    return refuse(
      'batchNotRetryable',
      'The batch has no retryable failed rows; rows with retryable false fail again as they are: correct them and upload them in a new file.',
      { parameter: 'batchId' },
    );
  await start.batchRun(batchId, result.run, caller.id);
  return done({ batchId, status: 'in_progress' as const, requeuedRecords: result.requeued });
}

/** The failed rows as a CSV that can be fixed and uploaded again: input columns, then what went wrong. */
export async function batchFailedRows({ db }: UseCaseContext, caller: Caller, batchId: string) {
  const batch = await findBatch(db, caller.id, batchId);
  if (!batch) return notFound(batchId);
  const lines = [
    csvLine(['externalId', 'shareToken', 'applicantLevel', 'cardProcessorPublicToken', 'rowNumber', 'errorCategory', 'errorMessage', 'retryable']),
  ];
  for (const f of await failedRows(db, batch.id)) {
    lines.push(
      csvLine([
        f.externalId,
        f.shareToken,
        f.applicantLevel ?? '',
        f.cardProcessorPublicToken ?? '',
        String(f.rowNumber),
        f.category,
        f.message,
        String(f.retryable),
      ]),
    );
  }
  return done({ fileName: `batch-${batch.id}-failed-rows.csv`, csv: lines.join('') });
}
