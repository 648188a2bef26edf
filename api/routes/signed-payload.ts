// Signed payloads (interface 2.8, 4.4): read one for a verified person, verify one, and the public
// keys that verify offline.
import { z } from 'zod';
import { entityIdParams } from '../../domain/entity.ts';
import { memberIdQuery } from '../../domain/members.ts';
import { SIGNED_PAYLOAD_ALGORITHM, SIGNED_PAYLOAD_CANONICAL_FORM, signedPayloadSchema } from '../../domain/signed-payload.ts';
import type { UseCaseContext } from '../../usecases/context.ts';
import { readSignedPayload, signedPayloadKeys, verifySignedPayload } from '../../usecases/signed-payload.ts';
import { route } from '../route.ts';

const signedPayloadDoc = signedPayloadSchema.meta({
  description: `The verified person's data with an ${SIGNED_PAYLOAD_ALGORITHM} signature (Base64) over its canonical form: ${SIGNED_PAYLOAD_CANONICAL_FORM}. keyId names the key (GET /signed-payload-keys); expiresAt bounds its validity (the read's time plus SIGNED_PAYLOAD_TTL_SECONDS, never past the identity document's expiry).`,
});

export function signedPayloadRoutes(uc: UseCaseContext) {
  return [
    route({
      method: 'get',
      path: '/entity/:entityId/signed-payload',
      operationId: 'readSignedPayload',
      summary: "The verified person's data, signed",
      description: 'For an INDIVIDUAL entity (or with memberId a declared member of the BUSINESS entity) whose latest decision, by any verification path, is APPROVED. Each read signs anew with the current key.',
      tag: 'Verification',
      params: entityIdParams,
      query: memberIdQuery,
      responses: { 200: { description: 'The signed payload', schema: signedPayloadDoc } },
      errors: ['invalidRequest', 'entityNotFound', 'personRequired', 'memberNotFound', 'entityNotVerified'],
      handler: ({ params, query, business }) => readSignedPayload(uc, business, params.entityId, query.memberId),
    }),
    route({
      method: 'post',
      path: '/entity/verify-signed-payload',
      operationId: 'verifySignedPayload',
      summary: 'Whether a signed payload is untampered and unexpired',
      description: 'valid is false when any field (or an added one) differs from what was signed, the signature or keyId is not ours, or expiresAt has passed. keyId may be left out (the interface names the person fields, expiresAt and the signature): then any key of the ring valid before expiresAt may have signed. A missing field answers 400 naming it.',
      tag: 'Verification',
      body: signedPayloadDoc,
      responses: { 200: { description: 'The verdict', schema: z.object({ valid: z.boolean() }) } },
      errors: ['invalidRequest', 'malformedJson', 'unsupportedMediaType', 'bodyTooLarge'],
      handler: ({ body }) => verifySignedPayload(uc, body),
    }),
    route({
      method: 'get',
      path: '/signed-payload-keys',
      operationId: 'signedPayloadKeys',
      summary: 'Public keys that verify signed payloads offline, with their validity windows',
      description: 'Beside GET /webhook-keys. Verify a payload with the key its keyId names.',
      tag: 'Verification',
      responses: {
        200: {
          description: 'The signed-payload key ring of this environment',
          schema: z.object({
            environment: z.string(),
            algorithm: z.literal(SIGNED_PAYLOAD_ALGORITHM),
            canonicalForm: z.string(),
            keys: z.array(z.object({ keyId: z.string(), algorithm: z.literal(SIGNED_PAYLOAD_ALGORITHM), publicKeyPem: z.string(), validFrom: z.string(), validUntil: z.string() })),
          }),
        },
      },
      handler: () => signedPayloadKeys(uc),
    }),
  ];
}
