// Signed payloads (interface 1.2, 2.8, 4.4): the verified person's data signed for the client, and
// the check that a payload is untampered and unexpired. The rules are in domain/signed-payload.ts.
import { z } from 'zod';
import { done, refuse, type Outcome } from '../domain/outcome.ts';
import {
  isValidPayload,
  missingForPayload,
  payloadPublicKeyOf,
  payloadPublicKeySchema,
  signPayload,
  SIGNED_PAYLOAD_ALGORITHM,
  SIGNED_PAYLOAD_CANONICAL_FORM,
  signedPayloadSchema,
  type SignedPayload,
} from '../domain/signed-payload.ts';
import { errorCatalogue } from '../domain/errors.ts';
import { recordAuditAlone } from '../store/audit-log.ts';
import { currentVerification } from '../store/verified-persons.ts';
import type { Caller, UseCaseContext } from './context.ts';
import { personNamed } from './person-verification.ts';

/**
 * GET /entity/{entityId}/signed-payload: the person's latest approved data, signed now. A read of a
 * person's data: each one is an audit entry (signed_payload.issued), refusals too, with their code;
 * the payload is answered only once its entry is written.
 */
export async function readSignedPayload(
  context: UseCaseContext,
  caller: Caller,
  entityId: string,
  memberId: string | undefined,
): Promise<Outcome<SignedPayload>> {
  const person = await personNamed(context, caller, entityId, memberId, { requireWebhook: false });
  const answer = person.ok ? await signedPayloadOf(context, person.value) : person;
  await recordAuditAlone(context.db, {
    businessId: caller.id,
    action: 'signed_payload.issued',
    // the person read, once the path named one of the business's own; else only what was asked
    entityId: person.ok ? person.value : null,
    subject: { type: 'entity', id: person.ok ? person.value : entityId },
    details: { entityId, memberId: memberId ?? null, keyId: answer.ok ? answer.value.keyId : null },
    outcome: answer.ok ? 'ok' : errorCatalogue[answer.error].code,
  });
  return answer;
}

async function signedPayloadOf(context: UseCaseContext, personId: string): Promise<Outcome<SignedPayload>> {
  const current = await currentVerification(context.db, personId);
  if (!current || current.decision !== 'APPROVED') {
    // the same words whatever the reason: the decision is told by the webhook alone (interface 1.4)
    return refuse(
      'entityNotVerified',
      `Entity ${personId} has no approved verification to sign. A payload is signed once a ` +
        `verification (hosted SDK, universal KYC or token sharing) is approved, as its webhook ` +
        `tells you.`,
    );
  }
  const missing = current.person ? missingForPayload(current.person) : 'person data';
  if (missing || !current.person) {
    return refuse(
      'entityNotVerified',
      `Entity ${personId} was approved without ${missing} on record (approved before person data was kept): verify the person again to sign a payload.`,
    );
  }
  return done(signPayload(current.person, context.keys.signedPayloads, new Date(), context.config.signedPayloads.ttlSeconds));
}

export const payloadVerdictSchema = z.object({ valid: z.boolean() });

/** POST /entity/verify-signed-payload: valid when signed by our ring, unchanged and unexpired. */
export function verifySignedPayload(context: UseCaseContext, body: unknown): Outcome<z.input<typeof payloadVerdictSchema>> {
  const payload = signedPayloadSchema.safeParse(body);
  return done({ valid: payload.success && isValidPayload(payload.data, context.keys.signedPayloads, new Date()) });
}

export const signedPayloadKeysSchema = z.object({
  environment: z.string(),
  algorithm: z.literal(SIGNED_PAYLOAD_ALGORITHM),
  canonicalForm: z.string(),
  keys: z.array(payloadPublicKeySchema),
});

/** GET /signed-payload-keys: the public keys that verify signed payloads offline. */
export function signedPayloadKeys({ config, keys }: UseCaseContext): Outcome<z.input<typeof signedPayloadKeysSchema>> {
  return done({
    environment: config.environment,
    algorithm: SIGNED_PAYLOAD_ALGORITHM,
    canonicalForm: SIGNED_PAYLOAD_CANONICAL_FORM,
    keys: keys.signedPayloads.map(payloadPublicKeyOf),
  });
}
