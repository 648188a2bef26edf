// Turns a route's params, query and JSON body into typed values, or a 400 naming the first bad field.
import { Readable } from 'node:stream';
import type { Context } from 'koa';
import type { z } from 'zod';
import { ApiError } from '../api-error.ts';
import { clip } from '../../domain/audit-bounds.ts';

/** `requirements[0].value` from ['requirements', 0, 'value']. */
export function parameterName(path: readonly PropertyKey[]): string {
  return path.reduce<string>((acc, key) => (typeof key === 'number' ? `${acc}[${key}]` : acc ? `${acc}.${clip(String(key))}` : clip(String(key))), '');
}

export function parseOrThrow<T>(schema: z.ZodType<T>, value: unknown, where: string): T {
  const result = schema.safeParse(value, { reportInput: true });
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  let parameter = parameterName(issue.path);
  let message = issue.message;
  if (issue.code === 'unrecognized_keys') {
    // the caller's own name, echoed no longer than ECHO_MAX_CHARS (a name of 200 KB is not sent back)
    const key = clip(issue.keys[0]!);
    parameter = parameterName([...issue.path, key]);
    message = `unknown ${where === 'body' ? 'field' : `${where} parameter`} "${key}"`;
  } else if (issue.code === 'invalid_type' && issue.input === undefined) {
    message = `${parameter || where} is required`;
  }
  throw new ApiError('invalidRequest', parameter ? `${parameter}: ${message}` : message, { parameter });
}

/** Reads a JSON body's bytes, at most `limit` of them, as sent (a signature may be over them). */
export async function readRawJsonBody(ctx: Context, limit: number): Promise<Buffer> {
  if (!ctx.is('application/json')) {
    throw new ApiError('unsupportedMediaType', 'The Content-Type is not application/json; send the body as JSON with Content-Type: application/json.', {
      parameter: 'Content-Type',
    });
  }
  const declared = Number(ctx.get('content-length') || 0);
  if (declared > limit) throw new ApiError('bodyTooLarge', `The body is larger than the limit of ${limit} bytes; send a smaller body.`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as Readable) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new ApiError('bodyTooLarge', `The body is larger than the limit of ${limit} bytes; send a smaller body.`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** Reads a JSON body of at most `limit` bytes; the route must declare a body schema. */
export async function readJsonBody(ctx: Context, limit: number): Promise<unknown> {
  const text = (await readRawJsonBody(ctx, limit)).toString('utf8');
  try {
    return JSON.parse(text);
  } catch {
    throw new ApiError('malformedJson', 'The body is not valid JSON; check its quotes, commas and brackets and send it again.');
  }
}
