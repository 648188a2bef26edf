// Reads one file field of a multipart/form-data request while it streams in, stopping at the size
// limit (the rest of the body is never buffered), and hashes it on the way.
import { createHash } from 'node:crypto';
import { Busboy, type BusboyFileStream, type BusboyInstance } from '@fastify/busboy';
import type { Context } from 'koa';
import type { FileRead, UploadedFile } from '../usecases/batch-imports.ts';

type MultipartProblem = Extract<FileRead, { ok: false }>['problem'];

class MultipartError extends Error {
  readonly problem: MultipartProblem;
  constructor(problem: MultipartProblem, message: string) {
    super(message);
    this.problem = problem;
  }
}

/** The file of form field `field`, or what is wrong with the request (never rejects for the client's mistakes). */
export function readFileField(ctx: Context, field: string, maxBytes: number): Promise<FileRead> {
  return readFile(ctx, field, maxBytes).then(
    (file): FileRead => ({ ok: true, file }),
    (err: unknown): FileRead => {
      if (err instanceof MultipartError) return { ok: false, problem: err.problem, message: err.message };
      throw err;
    },
  );
}

function readFile(ctx: Context, field: string, maxBytes: number): Promise<UploadedFile> {
  const contentType = ctx.get('content-type');
  if (!/^multipart\/form-data\b/i.test(contentType)) {
    return Promise.reject(new MultipartError('not-multipart', 'Send the file as multipart/form-data.'));
  }
  if (Number(ctx.get('content-length') || 0) > maxBytes + 1024 * 1024) {
    return Promise.reject(new MultipartError('too-large', `The file is larger than ${maxBytes / 1024 / 1024} MB.`));
  }
  return new Promise((resolve, reject) => {
    let bb: BusboyInstance;
    try {
      bb = new Busboy({ headers: { ...ctx.req.headers, 'content-type': contentType }, limits: { fileSize: maxBytes, files: 1, fields: 20, parts: 25 } });
    } catch (err) {
      reject(new MultipartError('malformed', `The multipart body cannot be read: ${(err as Error).message}`));
      return;
    }
    let result: UploadedFile | undefined;
    let failed = false;
    const fail = (e: MultipartError) => {
      if (failed) return;
      failed = true;
      ctx.req.unpipe(bb);
      ctx.set('Connection', 'close'); // do not read the rest of an oversized or broken upload
      reject(e);
    };
    bb.on('file', (name: string, stream: BusboyFileStream, fileName: string) => {
      if (name !== field || result) {
        stream.resume();
        return;
      }
      const hash = createHash('sha256');
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => {
        hash.update(chunk);
        chunks.push(chunk);
      });
      stream.on('limit', () => fail(new MultipartError('too-large', `The file is larger than ${maxBytes / 1024 / 1024} MB.`)));
      stream.on('end', () => {
        if (!stream.truncated) result = { bytes: Buffer.concat(chunks), fileName: fileName || null, sha256: hash.digest('hex') };
      });
    });
    bb.on('error', (err: Error) => fail(new MultipartError('malformed', `The multipart body cannot be read: ${err.message}`)));
    bb.on('finish', () => {
      if (failed) return;
      if (!result) fail(new MultipartError('no-file', `No file was sent in the form field "${field}".`));
      else resolve(result);
    });
    ctx.req.pipe(bb);
  });
}
