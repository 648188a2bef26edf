// What every batch upload shares (the token-sharing CSV, interface 4.1, and the batch of requirement
// submissions, v1.1.0): the Idempotency-Key, the interface's codes for a file that cannot be taken
// (section 7), and "once": the same key and file answer with the same batch while it runs, a key
// whose batch has finished or that named another file, and a file already uploaded under another
// key, answer 0701010300 with a reason — including when two such requests race.
import type { UploadRejected } from '../domain/batch-csv.ts';
import { TERMINAL, type BatchStatus } from '../domain/batch-status.ts';
import { done, refuse, type Outcome, type Refusal } from '../domain/outcome.ts';
import { idempotencyKeyProblem } from '../domain/token-sharing.ts';
import { isUniqueViolation } from '../store/db.ts';
import { uploadRefusal, type UploadProblem } from './uploads.ts';

const UPLOAD_KEYS = {
  batchFileTooLarge: 'kyc_batch.upload.file_too_large',
  batchInvalidData: 'kyc_batch.upload.invalid_data',
  batchAlreadyUploaded: 'kyc_batch.upload.duplicate_file_or_content',
} as const;

/** Upload refusals also carry `errorKey`, the interface's string code. */
export const refuseUpload = (error: keyof typeof UPLOAD_KEYS, message: string, parameter: string, extra: Record<string, unknown> = {}): Refusal =>
  refuse(error, message, { parameter, extra: { errorKey: UPLOAD_KEYS[error], ...extra } });

export const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** The Idempotency-Key header as sent ('' when absent), checked. */
export function checkIdempotencyKey(key: string): Outcome<string> {
  if (!key) return refuseUpload('batchInvalidData', 'The Idempotency-Key header is required: a unique value per upload.', 'Idempotency-Key');
  const keyProblem = idempotencyKeyProblem(key);
  if (keyProblem) return refuseUpload('batchInvalidData', `The Idempotency-Key ${keyProblem}.`, 'Idempotency-Key');
  return done(key);
}

/** A file its rules refused: too large (size, records) or invalid, with the records and fields at fault. */
export function rejectedFile({ kind, message, issues }: UploadRejected): Refusal {
  return refuseUpload(kind === 'tooLarge' ? 'batchFileTooLarge' : 'batchInvalidData', message, 'file', issues.length ? { details: issues } : {});
}

/** The spec's codes for a file that could not be read (section 7: too large; no file or not a form is invalid data); the upload endpoints' own for the rest. */
export function readRefusal(read: UploadProblem): Refusal {
  if (read.problem === 'not-multipart' || read.problem === 'no-file' || read.problem === 'malformed')
    return refuseUpload('batchInvalidData', read.message, 'file');
  return uploadRefusal(read, 'file', refuseUpload('batchFileTooLarge', read.message, 'file'));
}

/** A batch as "once" needs it. */
export type StoredUpload = { id: string; idempotencyKey: string; contentSha256: string; status: BatchStatus; run: number };

export type UploadOnce<B extends StoredUpload, F, A> = {
  key: string;
  /** Where the client reads a batch (its message names it). */
  statusPath(batchId: string): string;
  byKey(key: string): Promise<B | undefined>;
  byContent(sha256: string): Promise<B | undefined>;
  /** Reads the file: its digest and what it holds, or why it cannot be taken (unreadable: at once; invalid: after a replay is ruled out). */
  read(): Promise<{ ok: false; refusal: Refusal } | { ok: true; sha256: string; file: F; invalid: Refusal | null }>;
  /** Stores the batch (throws the unique violations of `constraints` when another request won). */
  create(file: F, sha256: string): Promise<B>;
  constraints: { key: string; content: string };
  /** Starts (or joins) the batch's run; idempotent. */
  start(batch: B): Promise<void>;
  /** The answer: `file` is the upload's own when this request stored it, null for a replay. */
  accepted(batch: B, file: F | null): A;
};

/** Stores a batch once per key and per file (see the top of this file), then starts its run. */
export async function uploadOnce<B extends StoredUpload, F, A>(u: UploadOnce<B, F, A>): Promise<Outcome<A>> {
  const alreadyUploaded = (reason: 'key_already_processed' | 'key_used_for_other_file' | 'same_content', message: string, batchId: string) =>
    refuseUpload('batchAlreadyUploaded', message, reason === 'same_content' ? 'file' : 'Idempotency-Key', { reason, batchId });
  const alreadyProcessed = (b: B) =>
    alreadyUploaded(
      'key_already_processed',
      `This Idempotency-Key belongs to batch ${b.id}, which has already been processed (${b.status}). Read its outcome with GET ` +
        `${u.statusPath(b.id)}; to upload again, use a new key.`,
      b.id,
    );
  const sameContent = (b: B) =>
    alreadyUploaded(
      'same_content',
      `A file with the same content was already uploaded as batch ${b.id}; read it with GET ${u.statusPath(b.id)}, or change the file.`,
      b.id,
    );

  const existing = await u.byKey(u.key);
  // a key whose batch has finished answers so whatever the file: no need to read it
  if (existing && TERMINAL.includes(existing.status)) return alreadyProcessed(existing);
  const read = await u.read();
  if (!read.ok) return read.refusal;
  const { sha256 } = read;

  /** The same key again: the same answer while the batch runs (a retried upload), else 0701010300. */
  const replay = async (batch: B): Promise<Outcome<A>> => {
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
    await u.start(batch);
    return done(u.accepted(batch, null));
  };

  if (existing) return replay(existing);
  if (read.invalid) return read.invalid;
  const duplicate = await u.byContent(sha256);
  // the same key may have been stored by a concurrent request meanwhile: that is a replay
  if (duplicate) return duplicate.idempotencyKey === u.key ? replay(duplicate) : sameContent(duplicate);

  let batch: B;
  try {
    batch = await u.create(read.file, sha256);
  } catch (err) {
    // another request with the same key or file won the race: answer as if we came second
    if (isUniqueViolation(err, u.constraints.key)) return replay((await u.byKey(u.key))!);
    if (!isUniqueViolation(err, u.constraints.content)) throw err;
    const winner = await u.byContent(sha256);
    if (!winner) throw err;
    return winner.idempotencyKey === u.key ? replay(winner) : sameContent(winner);
  }
  // If the start fails (Temporal unavailable) the batch is stored and the answer is an error; the
  // client's retry with the same key starts it, and so does the reconciler within minutes.
  await u.start(batch);
  return done(u.accepted(batch, read.file));
}
