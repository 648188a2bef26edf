// Token-sharing batch imports (interface 2.3, 2.4, 3.1, 4.1): upload, status, cancel, retry of the
// failed rows, and the failed rows as CSV. The upload validates and stores everything in one go,
// then starts the batch's workflow; the workflow does the rest.
import { z } from 'zod';
import type { BatchCsvRead, BatchRow } from '../domain/batch-csv.ts';
import { batchStatusRecord, TERMINAL, type BatchStatusRecord } from '../domain/batch-status.ts';
import { csvLine } from '../domain/csv.ts';
import { done, refuse, type Outcome } from '../domain/outcome.ts';
import type { Page } from '../domain/pagination.ts';
import { IMPORT_PROVIDERS, type BatchAccepted } from '../domain/token-sharing.ts';
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
import type { Caller, UseCaseContext } from './context.ts';
import { checkIdempotencyKey, plural, readRefusal, refuseUpload, rejectedFile, uploadOnce } from './batch-uploads.ts';
import type { UploadProblem } from './uploads.ts';

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

const notFound = (id: string) =>
  refuse('batchNotFound', `Batch ${id} not found in your business; check the batchId the upload returned.`, { parameter: 'batchId' });

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
  const key = checkIdempotencyKey(request.idempotencyKey);
  if (!key.ok) return key;
  return done({ provider, key: key.value });
}

export async function uploadBatch(context: UseCaseContext, caller: Caller, request: UploadRequest): Promise<Outcome<BatchAccepted>> {
  const { db, start } = context;
  const headers = checkHeaders(request);
  if (!headers.ok) return headers;
  const { provider, key } = headers.value;
  type File = { rows: BatchRow[]; ignoredColumns: string[]; fileName: string | null };
  return uploadOnce<Batch, File, BatchAccepted>({
    key,
    statusPath: (id) => `/entity/kyc/import/batch/${id}`,
    byKey: (k) => findBatchByKey(db, caller.id, k),
    byContent: (sha) => findBatchByContent(db, caller.id, sha),
    async read() {
      const read = await request.readCsv({ binSponsored: caller.binSponsored });
      if (!read.ok) return { ok: false, refusal: readRefusal(read) };
      const { csv, sha256, fileName } = read.file;
      if (!csv.ok) return { ok: true, sha256, file: { rows: [], ignoredColumns: [], fileName }, invalid: rejectedFile(csv.rejected) };
      return { ok: true, sha256, file: { rows: csv.rows, ignoredColumns: csv.ignoredColumns, fileName }, invalid: null };
    },
    create: (file, sha256) =>
      createBatch(db, {
        businessId: caller.id,
        provider,
        idempotencyKey: key,
        contentSha256: sha256,
        fileName: file.fileName,
        rows: file.rows,
        ignoredColumns: file.ignoredColumns,
      }),
    constraints: { key: 'import_batches_idempotency_key', content: 'import_batches_content_key' },
    start: (batch) => start.batchRun(batch.id, batch.run, caller.id),
    accepted: (batch, file) => accepted(batch, file ? file.rows.filter((r) => r.failure).length : 0),
  });
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
