// The SHA-256 digests an audit entry names instead of values (issue 21): of a text or bytes as
// given, of a JSON value in its RFC 8785 canonical form (the same value hashes the same however it
// was spelled or stored), and of a decision as stored. Anyone holding the value can recompute the
// digest (the evidence bundle does); the digest alone gives nothing away. Pure: no I/O.
import canonicalize from 'canonicalize';
import { createHash, createHmac, randomBytes } from 'node:crypto';
import type { KybDecision } from './kyb.ts';
import type { Decision } from './reliance.ts';

/** SHA-256 (lowercase hex) of a text (UTF-8) or of bytes. */
export const sha256Hex = (data: string | Uint8Array): string => createHash('sha256').update(data).digest('hex');

/** SHA-256 of the value's RFC 8785 canonical JSON. */
export const canonicalSha256 = (value: unknown): string => sha256Hex(canonicalize(value) ?? 'null');

/**
 * A decision as stored: its status and, when REJECTED, the labels, reject type and comment the KYC
 * account keeps (kyc_accounts); a KYB decision also each owner's status, as its kyb_status_change
 * carries them. Nothing else of the object that made it counts.
 */
export function storedDecision(d: Decision | KybDecision): Record<string, unknown> {
  const base: Record<string, unknown> =
    d.status === 'APPROVED'
      ? { status: d.status }
      : { status: d.status, rejectLabels: d.rejectLabels, reviewRejectType: d.reviewRejectType, moderationComment: d.moderationComment };
  if ('owners' in d) base.owners = d.owners.map((o) => ({ entityId: o.entityId, externalId: o.externalId, status: o.status }));
  return base;
}

/** A decision's nonce: 256 random bits (hex), stored with the decision and never shown by the API. */
export const decisionNonce = (): string => randomBytes(32).toString('hex');

/**
 * What decision.recorded names instead of the outcome: the SHA-256 of the canonical JSON of
 * `{ nonce, decision }`, the decision as stored (storedDecision) with its nonce. Without the nonce an
 * APPROVED decision would hash the same for everyone, and the hash would tell the outcome.
 */
export const decisionSha256 = (d: Decision | KybDecision, nonce: string): string => canonicalSha256({ nonce, decision: storedDecision(d) });

/**
 * The rule set each path decides by, named in every decision it makes (issue 37): a compliance
 * officer can tell which rules approved a person years later. Change the name whenever the rules of
 * that path change (domain/reliance.ts, domain/kyb.ts, the hosted SDK's reading of a review).
 */
export const DECISION_RULES = {
  'token-sharing': 'reliance/2026-11',
  'universal-kyc': 'reliance/2026-11',
  'hosted-sdk': 'provider-review/2026-11',
  'universal-kyb': 'kyb/2026-11',
} as const;

/**
 * What a decision rested on, as ids and digests (never the data itself): a KYC decision, the person
 * data's version and its SHA-256; a KYB decision, each owner's decision, the profile's SHA-256 and
 * the documents' SHA-256.
 */
export type DecisionBasis =
  | { provider: string; applicantId: string; levelName: string | null; personDataId: string | null; personDataSha256: string | null }
  | {
      owners: { entityId: string; decisionId: string | null }[];
      profileSha256: string | null;
      documents: { fileId: string; sha256: string }[];
    };

/**
 * What decision.recorded names beside decisionSha256: the SHA-256 of the canonical JSON of
 * `{ nonce, rules, basis }`, so the audit chain proves the rules and the data a decision rested on
 * (the nonce keeps the digest from telling anything to whoever reads the log).
 */
export const basisSha256 = (nonce: string, rules: string, basis: DecisionBasis): string => canonicalSha256({ nonce, rules, basis });

/**
 * HMAC-SHA256 (lowercase hex) of the value's RFC 8785 canonical JSON under the entity's digest key
 * (store/migrations/028_digest_keys.sql): what the audit log names instead of a low-entropy value
 * (`<name>Hmac`). Without the key a guess cannot be checked; the key goes with the entity's record.
 */
export const keyedDigest = (key: Uint8Array, value: unknown): string =>
  createHmac('sha256', key)
    .update(canonicalize(value) ?? 'null')
    .digest('hex');
