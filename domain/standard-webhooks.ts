// The second webhook signature, in the Standard Webhooks form (https://www.standardwebhooks.com,
// asymmetric variant): `webhook-signature: v1a,<Base64 Ed25519 signature>` over
// `<webhook-id>.<webhook-timestamp>.<raw body>`. Unlike `vouch-signature` (the interface's, over the
// body alone), it covers the attempt's timestamp, so a receiver that refuses old timestamps refuses
// a captured delivery replayed later. Every key of the ring valid at send time signs (space-separated
// signatures, as the standard allows), so a receiver keeps verifying across a key rotation.
// Public keys are published as `whpk_<Base64 of the raw 32-byte key>` and as PEM.
import { createPrivateKey, createPublicKey, sign, type KeyObject } from 'node:crypto';
import { z } from 'zod';
import { validKeysAt, type SigningKey } from './webhook-signature.ts';

/** An Ed25519 key of the Standard Webhooks ring (same shape as every ring's key). */
export type Ed25519Key = SigningKey;

export const STANDARD_WEBHOOK_SCHEME = 'v1a: Ed25519 over "<webhook-id>.<webhook-timestamp>.<body>", Base64' as const;

/** The content a signature covers. */
export const signedContent = (m: { id: string; timestamp: string; body: string }) => `${m.id}.${m.timestamp}.${m.body}`;

const parsed = new Map<string, KeyObject>();
const privateKeyOf = (k: Ed25519Key) => {
  let key = parsed.get(k.keyId);
  if (!key) parsed.set(k.keyId, (key = createPrivateKey(k.privateKeyPem)));
  return key;
};

/** The `webhook-signature` header's value: one `v1a,…` per key valid at `at`. */
export function standardWebhookSignature(ring: readonly Ed25519Key[], message: { id: string; timestamp: string; body: string }, at: Date): string {
  const { keys, content } = signing(ring, message, at);
  return keys.map((k) => `v1a,${sign(null, content, privateKeyOf(k)).toString('base64')}`).join(' ');
}

/** standardWebhookSignature on libuv's thread pool, off the event loop (the dispatcher signs hundreds a second). */
export async function standardWebhookSignatureOffLoop(
  ring: readonly Ed25519Key[],
  message: { id: string; timestamp: string; body: string },
  at: Date,
): Promise<string> {
  const { keys, content } = signing(ring, message, at);
  const signatures = await Promise.all(
    keys.map((k) => new Promise<Buffer>((resolve, reject) => sign(null, content, privateKeyOf(k), (err, sig) => (err ? reject(err) : resolve(sig))))),
  );
  return signatures.map((sig) => `v1a,${sig.toString('base64')}`).join(' ');
}

function signing(ring: readonly Ed25519Key[], message: { id: string; timestamp: string; body: string }, at: Date) {
  const keys = validKeysAt(ring, at);
  if (keys.length === 0) throw new Error(`no Standard Webhooks key of the ring is valid at ${at.toISOString()}`);
  return { keys, content: Buffer.from(signedContent(message), 'utf8') };
}

/** A public key of the ring as GET /webhook-keys lists it, in both forms. */
export const standardWebhookPublicKeySchema = z.object({
  keyId: z.string(),
  algorithm: z.literal('Ed25519'),
  publicKey: z.string().meta({ description: 'whpk_ and the Base64 of the raw 32-byte key (the Standard Webhooks form)' }),
  publicKeyPem: z.string(),
  validFrom: z.string(),
  validUntil: z.string(),
});
export type StandardWebhookPublicKey = z.input<typeof standardWebhookPublicKeySchema>;

export function standardWebhookPublicKeyOf(key: Ed25519Key): StandardWebhookPublicKey {
  const pub = createPublicKey(key.privateKeyPem);
  const der = pub.export({ type: 'spki', format: 'der' });
  return {
    keyId: key.keyId,
    algorithm: 'Ed25519',
    publicKey: `whpk_${der.subarray(der.length - 32).toString('base64')}`,
    publicKeyPem: pub.export({ type: 'spki', format: 'pem' }).toString(),
    validFrom: key.validFrom,
    validUntil: key.validUntil,
  };
}
