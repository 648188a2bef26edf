// Signed payloads (interface 2.8, 4.4): read one for a verified person, verify one, and the public
// keys that verify offline.
import { entityIdParams } from '../../domain/entity.ts';
import { memberIdQuery } from '../../domain/members.ts';
import { signedPayloadSchema, verifyBodySchema } from '../../domain/signed-payload.ts';
import type { UseCaseContext } from '../../usecases/context.ts';
import { payloadVerdictSchema, readSignedPayload, signedPayloadKeys, signedPayloadKeysSchema, verifySignedPayload } from '../../usecases/signed-payload.ts';
import { route } from '../route.ts';

export function signedPayloadRoutes(context: UseCaseContext) {
  return [
    route({
      method: 'get',
      path: '/entity/:entityId/signed-payload',
      operationId: 'readSignedPayload',
      summary: "The verified person's data, signed",
      description:
        'For an INDIVIDUAL entity (or with memberId a declared member of the BUSINESS entity) whose' +
        ' latest decision, by any verification path, is APPROVED. Each read signs anew with the ' +
        'current key.',
      tag: 'Verification',
      params: entityIdParams,
      query: memberIdQuery,
      responses: { 200: { description: 'The signed payload', schema: signedPayloadSchema } },
      errors: ['invalidRequest', 'entityNotFound', 'personRequired', 'memberNotFound', 'entityNotVerified'],
      handler: ({ params, query, business }) => readSignedPayload(context, business, params.entityId, query.memberId),
    }),
    route({
      method: 'post',
      path: '/entity/verify-signed-payload',
      operationId: 'verifySignedPayload',
      summary: 'Whether a signed payload is untampered and unexpired',
      description:
        'valid is false when any field (or an added one) differs from what was signed, the ' +
        'signature or keyId is not ours, or expiresAt has passed. keyId may be left out (the ' +
        'interface names the person fields, expiresAt and the signature): then any key of the ring ' +
        'valid before expiresAt may have signed. Any JSON body is judged: one that is not a signed ' +
        'payload of ours (a field missing or of another type, a signature not Base64) is not valid. ' +
        'Only a body that is not JSON is refused (400).',
      tag: 'Verification',
      body: verifyBodySchema,
      responses: { 200: { description: 'The verdict', schema: payloadVerdictSchema } },
      // any JSON body gets a verdict: only a body that is not JSON (or too large, or not JSON's media type) is refused
      errors: ['malformedJson', 'unsupportedMediaType', 'bodyTooLarge'],
      handler: ({ body }) => verifySignedPayload(context, body),
    }),
    route({
      method: 'get',
      path: '/signed-payload-keys',
      operationId: 'signedPayloadKeys',
      summary: 'Public keys that verify signed payloads offline, with their validity windows',
      description: 'Beside GET /webhook-keys. Verify a payload with the key its keyId names.',
      tag: 'Verification',
      responses: { 200: { description: 'The signed-payload key ring of this environment', schema: signedPayloadKeysSchema } },
      handler: () => signedPayloadKeys(context),
    }),
  ];
}
