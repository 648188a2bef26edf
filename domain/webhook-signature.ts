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
 * The key that signs at `at`: one of the oldest generation valid then — the keys whose window ends
 * first (then starts first), compared as instants, whatever their order in the ring; the pairs of
 * interface 5.5 share a window — so a newer generation signs only once the older one has ended.
 * `spread` (an event's id) picks among the generation's keys, so every key of a pair signs — the
 * same one for every attempt of one event — and a receiver must hold them all.
 */
export function signingKeyAt(ring: readonly SigningKey[], at: Date, spread?: string): SigningKey {
  const valid = validKeysAt(ring, at);
  if (valid.length === 0) throw new Error(`no signing key of the ring is valid at ${at.toISOString()}`);
  const window = (k: SigningKey) => [Date.parse(k.validUntil), Date.parse(k.validFrom)] as const;
  const [until, from] = valid.map(window).sort((a, b) => a[0] - b[0] || a[1] - b[1])[0]!;
  const generation = valid.filter((k) => window(k)[0] === until && window(k)[1] === from);
  if (spread === undefined) return generation[0]!;
  return generation[createHash('sha256').update(spread).digest().readUInt32BE(0) % generation.length]!;
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
