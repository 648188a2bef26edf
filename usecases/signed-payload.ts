// Signed payloads (interface 1.2, 2.8, 4.4): the verified person's data signed for the client, and
// the check that a payload is untampered and unexpired. The rules are in domain/signed-payload.ts.
import { done, refuse, type Outcome } from '../domain/outcome.ts';
import { isValidPayload, missingForPayload, payloadPublicKeyOf, signPayload, SIGNED_PAYLOAD_ALGORITHM, SIGNED_PAYLOAD_CANONICAL_FORM, type SignedPayload } from '../domain/signed-payload.ts';
import { currentVerification } from '../store/verified-persons.ts';
import type { Caller, UseCaseContext } from './context.ts';
import { personNamed } from './person-verification.ts';

/** GET /entity/{entityId}/signed-payload: the person's latest approved data, signed now. */
export async function readSignedPayload(ctx: UseCaseContext, caller: Caller, entityId: string, memberId: string | undefined): Promise<Outcome<SignedPayload>> {
  const person = await personNamed(ctx, caller, entityId, memberId, { requireWebhook: false });
  if (!person.ok) return person;
  const current = await currentVerification(ctx.db, person.value);
  if (!current || current.decision !== 'APPROVED') {
    const state = current ? 'its latest decision is REJECTED' : 'it has no decision yet';
    return refuse('entityNotVerified', `Entity ${person.value} is not verified: ${state}. Verify the person first (hosted SDK, universal KYC or token sharing) and wait for the APPROVED webhook.`);
  }
  const missing = current.person ? missingForPayload(current.person) : 'person data';
  if (missing || !current.person) {
    return refuse('entityNotVerified', `Entity ${person.value} was approved without ${missing} on record (approved before person data was kept): verify the person again to sign a payload.`);
  }
  return done(signPayload(current.person, ctx.keys.signedPayloads, new Date(), ctx.config.signedPayloads.ttlSeconds));
}

/** POST /entity/verify-signed-payload: valid when signed by our ring, unchanged and unexpired. */
export function verifySignedPayload(ctx: UseCaseContext, payload: Record<string, unknown> & { keyId?: string | undefined; signature: string; expiresAt: string }): Outcome<{ valid: boolean }> {
  return done({ valid: isValidPayload(payload, ctx.keys.signedPayloads, new Date()) });
}

/** GET /signed-payload-keys: the public keys that verify signed payloads offline. */
export function signedPayloadKeys({ config, keys }: UseCaseContext) {
  return done({
    environment: config.environment,
    algorithm: SIGNED_PAYLOAD_ALGORITHM,
    canonicalForm: SIGNED_PAYLOAD_CANONICAL_FORM,
    keys: keys.signedPayloads.map(payloadPublicKeyOf),
  });
}
