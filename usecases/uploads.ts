// Uploaded files as a use case receives them from the API, and the checks every upload passes: at
// least one file, none empty, none too large or too many (the reader enforces the limits while the
// body streams), each a PDF, JPEG, PNG or HEIC by its bytes. All are refused together or none.
// A file arrives as a temporary file on disk (the API removes it once the request ends), never as
// bytes in memory: the use case hands its path to the file store.
import { randomUUID } from 'node:crypto';
import { ACCEPTED_UPLOAD_NAMES, acceptedContentType, cleanFileName } from '../domain/uploads.ts';
import { done, refuse, type Outcome, type Refusal } from '../domain/outcome.ts';

/**
 * Why an upload could not be read; `busy`: too many uploads at once (the business's own, or this
 * process's); `refused`: the use case refused the form's fields before the files were read.
 */
export type UploadProblem = {
  ok: false;
  problem: 'not-multipart' | 'no-file' | 'too-large' | 'too-many' | 'malformed' | 'stalled' | 'busy' | 'refused';
  message: string;
  /** busy: whose limit; the client retries after `retryAfterSeconds`. */
  busy?: { scope: 'business' | 'process'; retryAfterSeconds: number };
  /** refused: the use case's own answer. */
  refusal?: Refusal;
};

/** A file as received: on disk at `path` until the request ends, with its size, SHA-256 and first bytes (to tell its type). */
export type ReceivedFile = { path: string; size: number; sha256: string; head: Buffer; fileName: string | null };

export type FilesRead = { ok: true; files: ReceivedFile[]; /** The form's text fields. */ fields?: Record<string, string> } | UploadProblem;

export type CheckedFile = { id: string; path: string; fileName: string | null; contentType: string; size: number; sha256: string };

/** The refusal for a request whose uploads could not be read: the problems common to every upload endpoint. */
export function uploadRefusal(read: UploadProblem, field: string, tooLarge: Refusal): Refusal {
  switch (read.problem) {
    case 'too-large':
      return tooLarge;
    case 'too-many':
      return refuse('uploadTooManyFiles', read.message, { parameter: field });
    case 'not-multipart':
      return refuse('unsupportedMediaType', read.message, { parameter: 'Content-Type' });
    case 'no-file':
      return refuse('uploadNoFile', read.message, { parameter: field });
    case 'malformed':
      return refuse('invalidRequest', read.message, { parameter: field });
    case 'stalled':
      return refuse('uploadStalled', read.message, { parameter: field });
    case 'refused':
      return read.refusal!;
    case 'busy':
      return read.busy!.scope === 'business'
        ? refuse('uploadsBusy', read.message, { retryAfterSeconds: read.busy!.retryAfterSeconds })
        : refuse('uploadsUnavailable', read.message, { retryAfterSeconds: read.busy!.retryAfterSeconds });
  }
}

export async function checkUploads(read: FilesRead, field: string): Promise<Outcome<CheckedFile[]>> {
  if (!read.ok) return uploadRefusal(read, field, refuse('uploadFileTooLarge', read.message, { parameter: field }));
  const checked: CheckedFile[] = [];
  for (const [i, f] of read.files.entries()) {
    const name = cleanFileName(f.fileName);
    const which = `${field}[${i}]${name ? ` (${name})` : ''}`;
    if (f.size === 0) return refuse('uploadEmptyFile', `${which} is empty (0 bytes); send the file with its content.`, { parameter: field });
    const contentType = await acceptedContentType(f.head);
    if (!contentType)
      return refuse(
        'uploadUnsupportedType',
        `${which} is not a ${ACCEPTED_UPLOAD_NAMES} file (judged by its content, not its name); convert it to one of these and upload again.`,
        { parameter: field },
      );
    checked.push({ id: randomUUID(), path: f.path, fileName: name, contentType, size: f.size, sha256: f.sha256 });
  }
  return done(checked);
}
