// Signed checkpoints of the audit chain (issue 37). The chain proves no entry was changed, removed
// or reordered before its head; but whoever holds the service's own database credentials could
// rewrite the whole chain and move the head, and the chain would still agree with itself. A
// checkpoint is a head — business, seq, hash, when — signed with an Ed25519 key the database does
// not hold, written where the database's role cannot rewrite it (the file store). `vouch audit
// verify` holds the chain against every checkpoint: an entry cut, changed or reordered after one was
// signed no longer matches it, and the checkpoint is named. Pure: no I/O.
import canonicalize from 'canonicalize';
import { createPrivateKey, createPublicKey, sign, verify } from 'node:crypto';
import type { HeadAttested } from './audit-chain.ts';
import type { SigningKey } from './webhook-signature.ts';

export const CHECKPOINT_FORMAT = 'vouch-audit-checkpoint/1' as const;

/** What is signed: the RFC 8785 JSON of these fields. */
export type CheckpointContent = { format: typeof CHECKPOINT_FORMAT; businessId: string; seq: number; hash: string; at: string; keyId: string };

/** A checkpoint as written and published: its content and the Base64 Ed25519 signature over the content's canonical JSON. */
export type Checkpoint = CheckpointContent & { signature: string };

/** Where a business's checkpoints are kept in the file store: one object each, named so that they list in order. */
export const checkpointPrefix = (businessId: string) => `audit-checkpoints/${businessId}/`;
export const checkpointKey = (c: Pick<CheckpointContent, 'businessId' | 'seq' | 'at'>) =>
  `${checkpointPrefix(c.businessId)}${String(c.seq).padStart(15, '0')}-${c.at.replace(/[:.]/g, '')}.json`;

const contentOf = (c: CheckpointContent): CheckpointContent => ({
  format: c.format,
  businessId: c.businessId,
  seq: c.seq,
  hash: c.hash,
  at: c.at,
  keyId: c.keyId,
});

/** The exact bytes signed. */
export const checkpointBytes = (c: CheckpointContent): Buffer => Buffer.from(canonicalize(contentOf(c))!, 'utf8');

export function signCheckpoint(head: { businessId: string; seq: number; hash: string }, at: Date, key: SigningKey): Checkpoint {
  const content: CheckpointContent = {
    format: CHECKPOINT_FORMAT,
    businessId: head.businessId,
    seq: head.seq,
    hash: head.hash,
    at: at.toISOString(),
    keyId: key.keyId,
  };
  return { ...content, signature: sign(null, checkpointBytes(content), createPrivateKey(key.privateKeyPem)).toString('base64') };
}

/** A published key that checks checkpoints (no private half: what the API and `vouch audit verify` hold). */
export type CheckpointPublicKey = { keyId: string; algorithm: 'Ed25519'; publicKeyPem: string; validFrom: string; validUntil: string };

/** Why a checkpoint cannot be trusted (null when it is a checkpoint of this business signed by the key it names, while that key was valid). */
export function checkpointProblem(c: unknown, businessId: string, keys: readonly CheckpointPublicKey[]): string | null {
  const x = c as Partial<Checkpoint> | null;
  if (!x || x.format !== CHECKPOINT_FORMAT || typeof x.signature !== 'string' || typeof x.keyId !== 'string') return 'not a signed checkpoint';
  if (x.businessId !== businessId) return `of business ${String(x.businessId)}`;
  if (!Number.isSafeInteger(x.seq) || typeof x.hash !== 'string' || typeof x.at !== 'string') return 'not a signed checkpoint';
  const key = keys.find((k) => k.keyId === x.keyId);
  if (!key) return `signed by key ${x.keyId}, which is not among the checkpoint keys`;
  const at = Date.parse(x.at);
  if (!(Date.parse(key.validFrom) <= at && at < Date.parse(key.validUntil))) return `key ${key.keyId} was not valid at ${x.at}`;
  const ok = verify(null, checkpointBytes(x as Checkpoint), createPublicKey(key.publicKeyPem), Buffer.from(x.signature, 'base64'));
  return ok ? null : `its signature is not key ${key.keyId}'s over its content`;
}

/** A checkpoint as the chain checker holds the chain against it. */
export const attestedBy = (c: Checkpoint): HeadAttested => ({ id: checkpointKey(c), seq: c.seq, hash: c.hash, at: c.at });

/** A public key of the checkpoint ring, as published (GET /audit-log/checkpoint-keys; SPKI PEM, what openssl reads). */
export function checkpointPublicKeyOf(key: Pick<SigningKey, 'keyId' | 'privateKeyPem' | 'validFrom' | 'validUntil'>): CheckpointPublicKey {
  return {
    keyId: key.keyId,
    algorithm: 'Ed25519',
    publicKeyPem: createPublicKey(key.privateKeyPem).export({ type: 'spki', format: 'pem' }).toString(),
    validFrom: key.validFrom,
    validUntil: key.validUntil,
  };
}
