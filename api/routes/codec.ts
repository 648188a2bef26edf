// The Temporal codec server endpoints (the UI's and CLI's --codec-endpoint point at /codec).
import type { UseCaseContext } from '../../usecases/context.ts';
import { codecPayloadsSchema, runCodec } from '../../usecases/codec.ts';
import { route } from '../route.ts';

export function codecRoutes(context: UseCaseContext) {
  const open = context.settings.sandbox;
  const auth = open ? 'Open in the sandbox.' : 'Needs Authorization: Bearer <CODEC_ACCESS_TOKEN>.';
  return (['encode', 'decode'] as const).map((direction) =>
    route({
      method: 'post',
      path: `/codec/${direction}`,
      operationId: `codec${direction === 'encode' ? 'Encode' : 'Decode'}`,
      summary: direction === 'decode' ? 'Decode Temporal payloads (for the Temporal UI and CLI)' : 'Encode Temporal payloads (for the Temporal UI and CLI)',
      description:
        `Temporal's codec server protocol: payloads ` +
        (direction === 'decode'
          ? 'encrypted by Vouch (binary/encrypted) come back readable; others come back unchanged'
          : 'come back encrypted with the current payload key') +
        `. No API key. ${auth} CORS allows the Temporal UI's origin (CODEC_CORS_ORIGINS).`,
      tag: 'Operations',
      auth: false,
      body: codecPayloadsSchema,
      responses: { 200: { description: `The payloads, ${direction}d`, schema: codecPayloadsSchema } },
      errors: ['invalidRequest', 'malformedJson', 'codecUnauthorized', 'codecUndecodable'],
      docHeaders: [{ name: 'Authorization', required: !open, description: 'Bearer <CODEC_ACCESS_TOKEN> (outside the sandbox)' }],
      handler: ({ body, ctx }) => runCodec(context, direction, body.payloads, ctx.get('authorization') || undefined),
    }),
  );
}
