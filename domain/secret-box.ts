// Subscription secrets at rest (issue 38, item 2): sealed with AES-256-GCM under a key derived
// (HKDF-SHA256, an info string of this purpose alone) from each key of the payload codec ring — the
// ring every API and worker already holds to encrypt Temporal payloads, so there is no second ring
// to keep, rotate and back up. The ring's first key seals; any key of it opens. The sealed form
// names its key and is bound to its subscription (associated data), so a sealed secret copied onto
// another subscription's row does not open. Whoever reads the database alone (a dump, the service's
// credentials without the ring) reads no secret.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/** A key of the payload codec ring (temporal/payload-codec.ts's CodecKey has this shape). */
export type SealingKey = { id: string; key: Buffer };

const FORMAT = 'v1';
const INFO = 'vouch webhook subscription secret v1';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

export type SecretBox = {
  /** The secret sealed for this subscription, as stored: `v1.<keyId>.<Base64 nonce|ciphertext|tag>`. */
  seal(subscriptionId: string, secret: string): string;
  /** The secret; throws when no key of the ring opens it, or it was sealed for another subscription. */
  open(subscriptionId: string, sealed: string): string;
  /** How every value sealed now begins (`v1.<first key's id>.`): one that does not was sealed under an older key. */
  readonly sealingPrefix: string;
};

export function createSecretBox(ring: readonly SealingKey[]): SecretBox {
  if (ring.length === 0) throw new Error('the sealing ring is empty');
  const derived = new Map(ring.map((k) => [k.id, Buffer.from(hkdfSync('sha256', k.key, Buffer.alloc(0), INFO, 32))]));
  const aad = (subscriptionId: string, keyId: string) => Buffer.from(`${FORMAT}.${keyId}.${subscriptionId}`, 'utf8');
  return {
    sealingPrefix: `${FORMAT}.${ring[0]!.id}.`,
    seal(subscriptionId, secret) {
      const keyId = ring[0]!.id;
      const nonce = randomBytes(NONCE_BYTES);
      const cipher = createCipheriv('aes-256-gcm', derived.get(keyId)!, nonce);
      cipher.setAAD(aad(subscriptionId, keyId));
      const sealed = Buffer.concat([nonce, cipher.update(secret, 'utf8'), cipher.final(), cipher.getAuthTag()]);
      return `${FORMAT}.${keyId}.${sealed.toString('base64')}`;
    },
    open(subscriptionId, sealed) {
      // `v1.<keyId>.<Base64>`: a key id may hold dots, Base64 never does
      const first = sealed.indexOf('.');
      const last = sealed.lastIndexOf('.');
      const [format, keyId, data] = [sealed.slice(0, first), sealed.slice(first + 1, last), sealed.slice(last + 1)];
      if (first < 0 || last <= first || format !== FORMAT || !keyId || !data) throw new Error('not a sealed subscription secret');
      const key = derived.get(keyId);
      if (!key) throw new Error(`subscription secret sealed with key "${keyId}", which is not in the payload codec key ring`);
      const bytes = Buffer.from(data, 'base64');
      const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, NONCE_BYTES));
      decipher.setAAD(aad(subscriptionId, keyId));
      decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
      return Buffer.concat([decipher.update(bytes.subarray(NONCE_BYTES, bytes.length - TAG_BYTES)), decipher.final()]).toString('utf8');
    },
  };
}
