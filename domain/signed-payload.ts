// Signed payloads (interface 1.2, 2.8): a verified person's data that a client can hand on and
// anyone can check offline. The signature is Ed25519 over the payload's canonical form — RFC 8785
// (JSON Canonicalization Scheme) of every field except `signature` — made with a key of the
// environment's signed-payload ring, named by `keyId`; public keys are at GET /signed-payload-keys.
import canonicalize from 'canonicalize';
import { createPrivateKey, createPublicKey, sign, verify } from 'node:crypto';
import { z } from 'zod';
import type { VerifiedPerson } from './verified-person.ts';
import { signingKeyAt, type SigningKey } from './webhook-signature.ts';

export const SIGNED_PAYLOAD_ALGORITHM = 'Ed25519' as const;
export const SIGNED_PAYLOAD_CANONICAL_FORM = 'RFC 8785 JSON canonicalization of the payload without its signature field' as const;

const addressSchema = z.looseObject({
  country: z.string(),
  postCode: z.string(),
  street: z.string(),
  town: z.string().optional(),
  state: z.string().optional(),
  subStreet: z.string().optional(),
  buildingNumber: z.string().optional(),
  flatNumber: z.string().optional(),
});

/**
 * Every field of a signed payload: what a read answers and what the verification request sends.
 * Fields we do not know are kept, not refused: they are part of what the signature covers, so an
 * added field makes the payload invalid.
 */
export const signedPayloadSchema = z
  .looseObject({
    firstName: z.string(),
    lastName: z.string(),
    dob: z.string(),
    residentialAddress: addressSchema,
    idDocumentType: z.string(),
    idDocumentNumber: z.string(),
    // the payload is not valid after this
    expiresAt: z.iso.datetime({ offset: true, message: 'must be an ISO 8601 date-time' }),
    keyId: z.string().optional(),
    // Base64 Ed25519 signature over the canonical form
    signature: z.string().regex(/^[A-Za-z0-9+/]+={0,2}$/, 'must be Base64'),
  })
  .meta({
    description:
      `The verified person's data with an ${SIGNED_PAYLOAD_ALGORITHM} signature (Base64) over its canonical form: ${SIGNED_PAYLOAD_CANONICAL_FORM}. ` +
      "keyId names the key (GET /signed-payload-keys); expiresAt bounds its validity (the read's time plus SIGNED_PAYLOAD_TTL_SECONDS, " +
      "never past the identity document's expiry).",
  });

/**
 * POST /entity/verify-signed-payload's body (4.4: "returns {valid: boolean}"): any JSON. A body that
 * is a signed payload is checked; any other (a field missing or of another type) is simply not
 * valid — the verdict, not a 400, is what a relying party asks for (issue 38, item 10).
 */
export const verifyBodySchema = z.union([signedPayloadSchema, z.unknown()]).meta({
  description: 'A signed payload as read from GET /entity/{entityId}/signed-payload; any other JSON is judged not valid.',
});
/** A payload as we sign it: keyId is always named. */
export type SignedPayload = z.input<typeof signedPayloadSchema> & { keyId: string };

/** The canonical form the signature covers. */
export function canonicalForm(payload: Record<string, unknown>): string {
  const { signature: _signature, ...signed } = payload;
  return canonicalize(signed)!;
}

/** What is missing for a signed payload, or null when the person has every field. */
export function missingForPayload(person: VerifiedPerson): string | null {
  if (!person.firstName) return 'firstName';
  if (!person.lastName) return 'lastName';
  if (!person.dob) return 'dob';
  if (!person.residentialAddress) return 'residentialAddress';
  if (!person.idDocument) return 'idDocument';
  return null;
}

/**
 * The payload's expiry: `ttlSeconds` after `now`, but never past the identity document's last
 * valid day (the payload expires at the start of the following day, UTC).
 */
export function payloadExpiry(person: VerifiedPerson, now: Date, ttlSeconds: number): Date {
  const byTtl = now.getTime() + ttlSeconds * 1000;
  const until = person.idDocument?.validUntil;
  const byDocument = until ? Date.parse(`${until}T00:00:00.000Z`) + 86_400_000 : Infinity;
  return new Date(Math.min(byTtl, byDocument));
}

/** Signs the person's payload with the ring's key valid at `now`. The person must have every field (missingForPayload). */
export function signPayload(person: VerifiedPerson, ring: readonly SigningKey[], now: Date, ttlSeconds: number): SignedPayload {
  if (missingForPayload(person)) throw new Error(`cannot sign: ${missingForPayload(person)} is missing`);
  const key = signingKeyAt(ring, now);
  const unsigned = {
    firstName: person.firstName!,
    lastName: person.lastName!,
    dob: person.dob!,
    residentialAddress: person.residentialAddress!,
    idDocumentType: person.idDocument!.type,
    idDocumentNumber: person.idDocument!.number,
    expiresAt: payloadExpiry(person, now, ttlSeconds).toISOString(),
    keyId: key.keyId,
  };
  const signature = sign(null, Buffer.from(canonicalForm(unsigned), 'utf8'), createPrivateKey(key.privateKeyPem)).toString('base64');
  return { ...unsigned, signature };
}

/** True when the payload is signed by a key of the ring, unchanged, and not expired at `now`. */
export function isValidPayload(
  payload: Record<string, unknown> & { keyId?: string | undefined; signature: string; expiresAt: string },
  ring: readonly SigningKey[],
  now: Date,
): boolean {
  const expiresAt = Date.parse(payload.expiresAt);
  if (!(expiresAt > now.getTime())) return false;
  const signature = Buffer.from(payload.signature, 'base64');
  const signedBy = (key: SigningKey, signed: Record<string, unknown>) => {
    try {
      return verify(null, Buffer.from(canonicalForm(signed), 'utf8'), createPublicKey(key.privateKeyPem), signature);
    } catch {
      return false;
    }
  };
  if (payload.keyId !== undefined) {
    const key = ring.find((k) => k.keyId === payload.keyId);
    return key ? signedBy(key, payload) : false;
  }
  // Without keyId (the spec's request names none): any key of the ring that was valid before the
  // payload's expiry may have signed it, and its id was part of what it signed.
  return ring.filter((k) => Date.parse(k.validFrom) < expiresAt).some((k) => signedBy(k, { ...payload, keyId: k.keyId }));
}

/** A public key of the ring as GET /signed-payload-keys lists it. */
export const payloadPublicKeySchema = z.object({
  keyId: z.string(),
  algorithm: z.literal(SIGNED_PAYLOAD_ALGORITHM),
  publicKeyPem: z.string(),
  validFrom: z.string(),
  validUntil: z.string(),
});

/** The ring's public half, as GET /signed-payload-keys lists it. */
export function payloadPublicKeyOf(key: SigningKey): z.input<typeof payloadPublicKeySchema> {
  return {
    keyId: key.keyId,
    algorithm: SIGNED_PAYLOAD_ALGORITHM,
    publicKeyPem: createPublicKey(key.privateKeyPem).export({ type: 'spki', format: 'pem' }).toString(),
    validFrom: key.validFrom,
    validUntil: key.validUntil,
  };
}
