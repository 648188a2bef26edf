// Reads one file field of a multipart/form-data request while it streams in, stopping at the size
// limit (the rest of the body is never buffered), and hashes it on the way. The client's mistakes
// are answered as a problem, never thrown.
import { createHash } from 'node:crypto';
import { Busboy, type BusboyFileStream, type BusboyInstance } from '@fastify/busboy';
import type { Context } from 'koa';
import type { FileRead, UploadedFile } from '../usecases/batch-imports.ts';

type Problem = Extract<FileRead, { ok: false }>;
const problem = (p: Problem['problem'], message: string): Problem => ({ ok: false, problem: p, message });

/** The file of form field `field`, or what is wrong with the request. */
export function readFileField(ctx: Context, field: string, maxBytes: number): Promise<FileRead> {
  const tooLarge = () => problem('too-large', `The file is larger than ${maxBytes / 1024 / 1024} MB.`);
  const contentType = ctx.get('content-type');
  if (!/^multipart\/form-data\b/i.test(contentType)) return Promise.resolve(problem('not-multipart', 'Send the file as multipart/form-data.'));
  if (Number(ctx.get('content-length') || 0) > maxBytes + 1024 * 1024) return Promise.resolve(tooLarge());
  return new Promise((resolve) => {
    let bb: BusboyInstance;
    try {
      bb = new Busboy({ headers: { ...ctx.req.headers, 'content-type': contentType }, limits: { fileSize: maxBytes, files: 1, fields: 20, parts: 25 } });
    } catch (err) {
      resolve(problem('malformed', `The multipart body cannot be read: ${(err as Error).message}`));
      return;
    }
    let file: UploadedFile | undefined;
    let failed = false;
    const fail = (p: Problem) => {
      if (failed) return;
      failed = true;
      ctx.req.unpipe(bb);
      ctx.set('Connection', 'close'); // do not read the rest of an oversized or broken upload
      resolve(p);
    };
    bb.on('file', (name: string, stream: BusboyFileStream, fileName: string) => {
      if (name !== field || file) {
        stream.resume();
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
        if (!stream.truncated) file = { bytes: Buffer.concat(chunks), fileName: fileName || null, sha256: hash.digest('hex') };
      });
    });
    bb.on('error', (err: Error) => fail(problem('malformed', `The multipart body cannot be read: ${err.message}`)));
    bb.on('finish', () => {
      if (failed) return;
      if (!file) fail(problem('no-file', `No file was sent in the form field "${field}".`));
      else resolve({ ok: true, file });
    });
    ctx.req.pipe(bb);
  });
}
