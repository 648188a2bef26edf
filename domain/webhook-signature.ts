// Webhook signatures (interface 5.4-5.5): `vouch-signature` is a Base64 RSA-SHA512 (PKCS#1 v1.5)
// signature over the raw body bytes, made with the key of the ring that is valid at send time.
import { createHash, createPrivateKey, createPublicKey, sign, constants, type KeyObject } from 'node:crypto';
import { z } from 'zod';

export type SigningKey = {
  keyId: string;
  privateKeyPem: string;
  /** ISO 8601; the key signs deliveries sent in [validFrom, validUntil). */
  validFrom: string;
  validUntil: string;
};

/** How signatures are made, as GET /webhook-keys states it. */
export const SIGNATURE_SCHEME = 'RSA-SHA512 (PKCS#1 v1.5), Base64' as const;

/** A public key of the ring as GET /webhook-keys lists it. */
export const publicKeySchema = z.object({
  keyId: z.string(),
  algorithm: z.literal('RSA-SHA512'),
  publicKeyPem: z.string(),
  validFrom: z.string(),
  validUntil: z.string(),
});
export type PublicKey = z.input<typeof publicKeySchema>;

/** `privateKey`: PEM, or a parsed key (parsing the PEM costs more than the signature itself). */
export function signWebhookBody(body: string | Buffer, privateKey: string | KeyObject): string {
  const { data, key } = rsaSigning(body, privateKey);
  return sign('sha512', data, key).toString('base64');
}

/** signWebhookBody on libuv's thread pool, off the event loop (the dispatcher signs hundreds of events a second). */
export function signWebhookBodyOffLoop(body: string | Buffer, privateKey: string | KeyObject): Promise<string> {
  const { data, key } = rsaSigning(body, privateKey);
  return new Promise((resolve, reject) => sign('sha512', data, key, (err, signature) => (err ? reject(err) : resolve(signature.toString('base64')))));
}

const rsaSigning = (body: string | Buffer, privateKey: string | KeyObject) => ({
  data: typeof body === 'string' ? Buffer.from(body, 'utf8') : body,
  key: { key: typeof privateKey === 'string' ? createPrivateKey(privateKey) : privateKey, padding: constants.RSA_PKCS1_PADDING },
});

/** Keys of the ring whose window [validFrom, validUntil) holds `at`, in ring order. */
export function validKeysAt<K extends SigningKey>(ring: readonly K[], at: Date): K[] {
  const t = at.getTime();
  return ring.filter((k) => Date.parse(k.validFrom) <= t && t < Date.parse(k.validUntil));
}

/**
 * The one key that signs at `at` (issue 38, item 1): of the keys valid then, the one that started
 * last — a successor, published ahead in the ring, takes over at its validFrom (interface 5.5) — and
 * of a pair sharing that start, the first by keyId; the other key of a pair is a standby, published
 * and never signing. Exactly one key signs at any instant, whatever the keys' order in the ring, so a
 * receiver that installs the one public key matching the environment (5.4) verifies every delivery
 * until the next switch, and every retry of an event signed before it.
 */
export function signingKeyAt(ring: readonly SigningKey[], at: Date): SigningKey {
  const valid = validKeysAt(ring, at);
  if (valid.length === 0) throw new Error(`no signing key of the ring is valid at ${at.toISOString()}`);
  return [...valid].sort((a, b) => Date.parse(b.validFrom) - Date.parse(a.validFrom) || (a.keyId < b.keyId ? -1 : a.keyId > b.keyId ? 1 : 0))[0]!;
}

export function publicKeyOf(key: SigningKey): PublicKey {
  return {
    keyId: key.keyId,
    algorithm: 'RSA-SHA512',
    publicKeyPem: createPublicKey(key.privateKeyPem).export({ type: 'spki', format: 'pem' }).toString(),
    validFrom: key.validFrom,
    validUntil: key.validUntil,
  };
}
