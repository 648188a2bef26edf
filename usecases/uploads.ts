// Uploaded files as a use case receives them from the API, and the checks every upload passes: at
// least one file, none empty, none too large or too many (the reader enforces the limits while the
// body streams), each a PDF, JPEG, PNG or HEIC by its bytes. All are refused together or none.
import { randomUUID } from 'node:crypto';
import { ACCEPTED_UPLOAD_NAMES, acceptedContentType, cleanFileName } from '../domain/uploads.ts';
import { done, refuse, type Outcome } from '../domain/outcome.ts';
import type { UploadedFile } from './batch-imports.ts';

export type FilesRead =
  | { ok: true; files: UploadedFile[]; /** The form's text fields. */ fields?: Record<string, string> }
  | { ok: false; problem: 'not-multipart' | 'no-file' | 'too-large' | 'too-many' | 'malformed'; message: string };

export type CheckedFile = { id: string; bytes: Buffer; fileName: string | null; contentType: string; size: number; sha256: string };

export async function checkUploads(read: FilesRead, field: string): Promise<Outcome<CheckedFile[]>> {
  if (!read.ok) {
    switch (read.problem) {
      case 'too-large':
        return refuse('uploadFileTooLarge', read.message, { parameter: field });
      case 'too-many':
        return refuse('uploadTooManyFiles', read.message, { parameter: field });
      case 'not-multipart':
        return refuse('unsupportedMediaType', read.message, { parameter: 'Content-Type' });
      case 'no-file':
        return refuse('uploadNoFile', read.message, { parameter: field });
      case 'malformed':
        return refuse('invalidRequest', read.message, { parameter: field });
    }
  }
  const checked: CheckedFile[] = [];
  for (const [i, f] of read.files.entries()) {
    const name = cleanFileName(f.fileName);
    const which = `${field}[${i}]${name ? ` (${name})` : ''}`;
    if (f.bytes.length === 0) return refuse('uploadEmptyFile', `${which} is empty.`, { parameter: field });
    const contentType = await acceptedContentType(f.bytes);
    if (!contentType) return refuse('uploadUnsupportedType', `${which} is not a ${ACCEPTED_UPLOAD_NAMES} file (its bytes say so, whatever its name).`, { parameter: field });
    checked.push({ id: randomUUID(), bytes: f.bytes, fileName: name, contentType, size: f.bytes.length, sha256: f.sha256 });
  }
  return done(checked);
}
