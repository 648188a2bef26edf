// Reads the files of one form field of a multipart/form-data request while they stream in,
// stopping at the size limit (the rest of the body is never buffered), and hashes each on the way;
// the form's text fields come with them (first value of each name, at most 1 KB each).
// The client's mistakes are answered as a problem, never thrown.
import { createHash } from 'node:crypto';
import { Busboy, type BusboyFileStream, type BusboyInstance } from '@fastify/busboy';
import type { Context } from 'koa';
import type { FileRead, UploadedFile } from '../usecases/batch-imports.ts';
import type { FilesRead } from '../usecases/uploads.ts';

type Problem = Extract<FilesRead, { ok: false }>;
const problem = (p: Problem['problem'], message: string): Problem => ({ ok: false, problem: p, message });

/**
 * The files of form field `field`: at most `maxFiles` (`extra: 'ignore'` reads the first ones and
 * skips the rest; `'refuse'` answers too-many), each at most `maxBytes`.
 */
export function readFiles(ctx: Context, field: string, limits: { maxBytes: number; maxFiles: number; extra: 'ignore' | 'refuse' }): Promise<FilesRead> {
  const { maxBytes, maxFiles } = limits;
  const tooLarge = () => problem('too-large', `A file is larger than ${maxBytes / 1024 / 1024} MB.`);
  const contentType = ctx.get('content-type');
  if (!/^multipart\/form-data\b/i.test(contentType)) return Promise.resolve(problem('not-multipart', 'Send the file as multipart/form-data.'));
  if (Number(ctx.get('content-length') || 0) > maxBytes * maxFiles + 1024 * 1024) return Promise.resolve(tooLarge());
  return new Promise((resolve) => {
    let bb: BusboyInstance;
    try {
      bb = new Busboy({ headers: { ...ctx.req.headers, 'content-type': contentType }, limits: { fileSize: maxBytes, files: maxFiles + 1, fields: 20, fieldSize: 1024, parts: maxFiles + 25 } });
    } catch (err) {
      resolve(problem('malformed', `The multipart body cannot be read: ${(err as Error).message}`));
      return;
    }
    const files: UploadedFile[] = [];
    const fields: Record<string, string> = {};
    let seen = 0;
    let failed = false;
    let deferred: Problem | null = null;
    // Too many files in a body of declared (and so bounded) length: read it to the end and answer
    // then, so the client gets the 400 instead of a connection closed under its last write.
    const bounded = Number(ctx.get('content-length') || 0) > 0;
    const tooMany = () => {
      const p = problem('too-many', `At most ${maxFiles} file${maxFiles === 1 ? '' : 's'} per upload.`);
      if (bounded) deferred ??= p;
      else fail(p);
    };
    const fail = (p: Problem) => {
      if (failed) return;
      failed = true;
      ctx.req.unpipe(bb);
      ctx.set('Connection', 'close'); // do not read the rest of an oversized or broken upload
      resolve(p);
    };
    bb.on('file', (name: string, stream: BusboyFileStream, fileName: string) => {
      if (name !== field || failed) {
        stream.resume();
        return;
      }
      seen++;
      if (seen > maxFiles) {
        stream.resume();
        if (limits.extra === 'refuse') tooMany();
        return;
      }
      const hash = createHash('sha256');
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => {
        hash.update(chunk);
        chunks.push(chunk);
      });
      stream.on('limit', () => fail(tooLarge()));
      stream.on('end', () => {
        if (!stream.truncated) files.push({ bytes: Buffer.concat(chunks), fileName: fileName || null, sha256: hash.digest('hex') });
      });
    });
    bb.on('field', (name: string, value: string, _nameTruncated: boolean, valueTruncated: boolean) => {
      if (valueTruncated) fail(problem('malformed', `The form field "${name}" is longer than 1 KB.`));
      else if (!(name in fields)) fields[name] = value;
    });
    bb.on('filesLimit', () => {
      if (limits.extra === 'refuse') tooMany();
    });
    bb.on('error', (err: Error) => fail(problem('malformed', `The multipart body cannot be read: ${err.message}`)));
    bb.on('finish', () => {
      if (failed) return;
      if (deferred) resolve(deferred);
      else if (files.length === 0) fail(problem('no-file', `No file was sent in the form field "${field}".`));
      else resolve({ ok: true, files, fields });
    });
    ctx.req.pipe(bb);
  });
}

/** The one file of form field `field` (further files are ignored), or what is wrong with the request. */
export async function readFileField(ctx: Context, field: string, maxBytes: number): Promise<FileRead> {
  const read = await readFiles(ctx, field, { maxBytes, maxFiles: 1, extra: 'ignore' });
  if (!read.ok) return read.problem === 'too-many' ? { ok: false, problem: 'malformed', message: read.message } : { ok: false, problem: read.problem, message: read.message };
  return { ok: true, file: read.files[0]! };
}
