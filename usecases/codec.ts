// The Temporal codec server protocol (POST /codec/encode, /codec/decode): the Temporal UI and CLI
// send payloads as { payloads: [{ metadata: { key: base64 }, data: base64 }] } and get them back
// encoded or decoded with the same codec our clients and workers use (temporal/payload-codec.ts),
// so an operator reads decrypted inputs and results. In the sandbox the endpoint is open; elsewhere
// it needs CODEC_ACCESS_TOKEN as a bearer token.
import type { Payload } from '@temporalio/common';
import { z } from 'zod';
import { done, refuse, type Outcome } from '../domain/outcome.ts';
import { bearerAllowed } from '../domain/bearer.ts';
import type { UseCaseContext } from './context.ts';

const base64 = z
  .string()
  .max(4 * 1024 * 1024)
  .regex(/^[A-Za-z0-9+/]*={0,2}$/, 'must be base64');
/** The protocol's body, both ways; protobuf's JSON leaves an empty list out: the Temporal CLI and UI send {} for no payloads. */
const jsonPayloadSchema = z.object({ metadata: z.record(z.string().max(256), base64).optional(), data: base64.optional() }).strict();
export const codecPayloadsSchema = z.object({ payloads: z.array(jsonPayloadSchema).max(1000).default([]) }).strict();
type CodecPayloads = z.output<typeof codecPayloadsSchema>;
export type JsonPayload = z.output<typeof jsonPayloadSchema>;

const toPayload = (p: JsonPayload): Payload => ({
  metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
  data: Buffer.from(p.data ?? '', 'base64'),
});
const toJson = (p: Payload): JsonPayload => ({
  metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v ?? new Uint8Array()).toString('base64')])),
  data: Buffer.from(p.data ?? new Uint8Array()).toString('base64'),
});

const authorised = (context: UseCaseContext, authorization: string | undefined) =>
  bearerAllowed(context.config.environment, context.config.payloadCodec.accessToken, authorization);

export async function runCodec(
  context: UseCaseContext,
  direction: 'encode' | 'decode',
  payloads: JsonPayload[],
  authorization: string | undefined,
): Promise<Outcome<CodecPayloads>> {
  if (!authorised(context, authorization)) {
    return refuse(
      'codecUnauthorized',
      context.config.payloadCodec.accessToken
        ? 'The Authorization header is missing or does not hold the codec token; send Authorization: Bearer <CODEC_ACCESS_TOKEN>.'
        : 'The codec endpoint is closed here: set CODEC_ACCESS_TOKEN to open it to holders of that token.',
      {
        parameter: 'Authorization',
      },
    );
  }
  const codec = context.runs.payloadCodec();
  try {
    const out = direction === 'encode' ? await codec.encode(payloads.map(toPayload)) : await codec.decode(payloads.map(toPayload));
    return done({ payloads: out.map(toJson) });
  } catch (err) {
    return refuse('codecUndecodable', `A payload could not be ${direction}d: ${(err as Error).message}`, { parameter: 'payloads' });
  }
}
