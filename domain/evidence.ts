// Evidence bundles (issue 21, item 4): what Vouch holds about one entity, for a regulator who asks
// why a person was approved or rejected and on what data — the verified data, each decision with
// the rule labels it applied and where it came from, the files with their SHA-256, and the audit
// entries with the chain head at export time — signed so it can be checked offline with openssl
// alone. A bundle is a directory: bundle.json (the content, RFC 8785 canonical JSON), bundle.sig
// (the raw 64-byte Ed25519 signature over bundle.json's exact bytes, by a key of the evidence ring
// named in the content) and, with --with-files, files/<fileId> (each file's bytes). The public key
// is never taken from the bundle: the operator publishes the ring's public keys. Pure: no I/O.
import canonicalize from 'canonicalize';
import { createPrivateKey, createPublicKey, sign, verify } from 'node:crypto';
import { entryHash, type AuditEntry, type ChainHead } from './audit-chain.ts';
import { basisSha256, canonicalSha256, decisionSha256, keyedDigest, type DecisionBasis } from './digests.ts';
import type { KybDecision } from './kyb.ts';
import type { Decision } from './reliance.ts';
import type { SigningKey } from './webhook-signature.ts';

export const EVIDENCE_FORMAT = 'vouch-evidence/2' as const;
export const EVIDENCE_ALGORITHM = 'Ed25519' as const;
export const BUNDLE_FILE = 'bundle.json';
export const SIGNATURE_FILE = 'bundle.sig';
export const FILES_DIR = 'files';

/** The check a regulator runs, in the bundle's directory, with the published public key saved as evidence-key.pem (OpenSSL 3). */
export const OPENSSL_CHECK = `openssl pkeyutl -verify -pubin -inkey evidence-key.pem -rawin -in ${BUNDLE_FILE} -sigfile ${SIGNATURE_FILE}`;

/** The check of the bundled files' bytes against the SHA-256 that bundle.json records (jq and openssl; exit 1 at the first changed file). */
export const OPENSSL_FILES_CHECK =
  `jq -r '.files[] | select(.bytes) | "\\(.sha256) \\(.bytes)"' ${BUNDLE_FILE} | while read -r sum file; do\n` +
  `  [ "$(openssl dgst -sha256 -r "$file" | cut -d' ' -f1)" = "$sum" ] && echo "ok $file" || { echo "CHANGED $file"; exit 1; }\n` +
  'done';

/** What each part of a bundle is: written into every bundle (its `manifest`), so the bundle explains itself. */
export const EVIDENCE_MANIFEST = {
  about:
    "Vouch's record of one entity (a person, or a business and its declared owners) as it stood when exported: the data it was " +
    'verified on, every decision with the rules it applied and where it came from, its files, and the audit entries that name it.',
  signature:
    `${SIGNATURE_FILE} is the raw 64-byte ${EVIDENCE_ALGORITHM} signature over the exact bytes of ${BUNDLE_FILE}, by the key of ` +
    "Vouch's evidence ring that signedWith.keyId names. The public key is not in the bundle: take it from the operator's " +
    'published evidence keys (`vouch evidence-keys generate` prints them). Check, with the key saved as evidence-key.pem: ' +
    `${OPENSSL_CHECK} (prints "Signature Verified Successfully"). Changing one byte of ${BUNDLE_FILE} fails it.`,
  canonicalForm:
    `${BUNDLE_FILE} is RFC 8785 (JSON Canonicalization Scheme) of this content, so any RFC 8785 implementation re-creates the ` +
    'signed bytes from the parsed content. Read it with `jq . bundle.json`.',
  parts: {
    entity:
      'The entity record: ids, the client reference (externalId), type, who verified it, when it was created; sealedAt and ' +
      "purgeAfter when it was deleted under the business's retention policy (business.retentionYears) and is kept sealed until then.",
    business: "The entity's business: its id and retention period in years (null: the spec's delete, at once).",
    verifiedPersons:
      'Every version of the person data the KYC decisions rested on, as read from each provider applicant (name, date of birth, ' +
      'residential address, identity document), oldest first, each with its id (a decision names the version it rested on).',
    requirements: "The data the client submitted for the entity (requirement slug, value, status), universal KYC's canonical data included.",
    kybProfile: "A business entity's KYB profile as last saved, and its status; versions: every version as saved, oldest first.",
    members: 'Member links: the individuals declared as owners or directors of a business entity, or the business entities this person belongs to.',
    decisions:
      'kyc and kyb: every decision, oldest first — none is ever overwritten — with its outcome and rule labels (rejectLabels, ' +
      'reviewRejectType, moderationComment), the rule set that made it (rules), its provenance (path; source: batch, sync, hosted-sdk, ' +
      'universal-kyc, universal-kyb; sourceRef: the batch row, the sync request, the review round or the submission), the event ' +
      'that carried it, and what it rested on (basis: a KYC decision, the provider applicant and the id and SHA-256 of the person ' +
      "data's version in verifiedPersons; a KYB decision, each owner's decision id, the profile's SHA-256 and the documents' SHA-256). " +
      "Each is tied to its decision.recorded entry (subject: the decision's id): decisionSha256 is SHA-256 of the RFC 8785 JSON of " +
      '{ nonce: decisionNonce, decision: { status, and when REJECTED rejectLabels, reviewRejectType, moderationComment; for KYB also ' +
      'owners: [{ entityId, externalId, status }] } }, and basisSha256 of { nonce: decisionNonce, rules, basis }. Decisions made ' +
      'before rule sets were recorded say rules "unrecorded" and have no basis. universalKyc and kybSubmissions: each submission ' +
      'and how it ended.',
    digestKeys:
      "The entity's (and its owners') digest keys, hex: the audit log names low-entropy values (externalId, a requirement's " +
      "value, person data, a hold's reason) by HMAC-SHA256 of their RFC 8785 JSON under the key (`<name>Hmac`), so that a guess " +
      'cannot be checked against the log without it; the key goes with the record when it is purged. With it, each digest ' +
      'of a value in this bundle is checked.',
    owners:
      "A business entity's declared owners: each one's decisions and the person data they rested on, as above, and their " +
      "documents' metadata and SHA-256; their audit entries are in audit. A KYB decision rests on these.",
    events: 'Every event recorded for the entity, with its payload: what the webhooks told the client (decisions, stages, features).',
    files:
      'Every file stored for the entity (retired ones included): its metadata and SHA-256. With --with-files, `bytes` names its ' +
      `copy in this bundle (files/<fileId>), checked against the SHA-256 when exported; check them all again with: ${OPENSSL_FILES_CHECK}`,
    audit:
      "The audit entries of the entity's business naming the entity (or, for a business, its owners), in the chain's order, " +
      "and the chain's head (seq, hash) at export time. " +
      "Each entry's hash is SHA-256 of `<prevHash>\\n<RFC 8785 JSON of its other fields>`; entries of one entity are not contiguous " +
      'in the chain, so each is checked on its own, and consecutive ones against each other. The head, kept elsewhere too ' +
      '(`vouch audit verify` prints it), proves the chain was not rewritten after the export.',
  },
} as const;

type Json = unknown;

/** A version of a person's data as read from a provider applicant. */
export type EvidencePerson = { id: string; entityId: string; provider: string; applicantId: string; person: Json; keptAt: string };

/** A decision as kept (record_decisions): never overwritten, with its rule set and what it rested on. */
export type EvidenceDecision = {
  id: string;
  entityId: string;
  kind: 'kyc' | 'kyb';
  path: string;
  source: string;
  sourceRef: string;
  accountId: string | null;
  provider: string | null;
  applicantId: string | null;
  levelName: string | null;
  submissionId: string | null;
  decision: 'APPROVED' | 'REJECTED';
  rejectLabels: string[];
  reviewRejectType: string | null;
  moderationComment: string | null;
  /** A KYB decision's owners as it stated them. */
  owners: Json;
  rules: string;
  basis: Json;
  /** Hashed with the decision in its decision.recorded entry; null for decisions recorded before there was one. */
  decisionNonce: string | null;
  eventId: string | null;
  decidedAt: string;
};

/** What the store reads of an entity for its bundle (store/evidence.ts). */
export type EvidenceRecord = {
  entity: {
    id: string;
    businessId: string;
    externalId: string;
    type: string;
    verifiedBy: string | null;
    createdAt: string;
    updatedAt: string;
    sealedAt: string | null;
    purgeAfter: string | null;
  };
  business: { id: string; retentionYears: number | null };
  verifiedPersons: EvidencePerson[];
  requirements: {
    id: string;
    slug: string;
    value: Json;
    status: string;
    submissionId: string | null;
    fileId: string | null;
    createdAt: string;
    updatedAt: string;
  }[];
  kybProfile: { profile: Json; status: string; createdAt: string; updatedAt: string; versions: { profile: Json; savedAt: string }[] } | null;
  members: {
    businessEntityId: string;
    memberEntityId: string;
    role: string;
    ownershipPercent: string | null;
    externalId: string | null;
    declared: Json;
    createdAt: string;
  }[];
  decisions: {
    kyc: EvidenceDecision[];
    kyb: EvidenceDecision[];
    universalKyc: {
      id: string;
      status: string;
      decision: string | null;
      eventId: string | null;
      deadlineAt: string;
      createdAt: string;
      settledAt: string | null;
    }[];
    kybSubmissions: {
      id: string;
      status: string;
      decision: string | null;
      owners: string[];
      eventId: string | null;
      deadlineAt: string;
      createdAt: string;
      settledAt: string | null;
    }[];
  };
  owners: {
    entityId: string;
    verifiedPersons: EvidencePerson[];
    decisions: EvidenceDecision[];
    /** The owner's documents (metadata and SHA-256; their bytes stay with the owner's own bundle). */
    files: { id: string; slug: string; documentType: string | null; sha256: string; uploadedAt: string; retiredAt: string | null }[];
  }[];
  /** The digest keys of the entity and its owners (hex): what checks their entries' `<name>Hmac` digests. */
  digestKeys: { entityId: string; key: string }[];
  events: { id: string; eventName: string; eventType: string; createdAt: string; payload: Json }[];
  files: EvidenceFileRow[];
  audit: { chainHead: ChainHead | null; entries: AuditEntry[] };
};

export type EvidenceFileRow = {
  id: string;
  slug: string;
  documentType: string | null;
  fileName: string | null;
  contentType: string;
  size: number;
  sha256: string;
  submissionId: string | null;
  uploadedAt: string;
  retiredAt: string | null;
  /** Where the bytes are (the file store's key): not written into the bundle. */
  storageKey: string;
};

/** What became of a file's bytes at export: copied (and matching its SHA-256), or why not. */
export type FileBytes = { copied: true } | { copied: false; problem: string };

export type EvidenceFile = Omit<EvidenceFileRow, 'storageKey'> & { bytes: string | null; bytesProblem?: string };

export type EvidenceBundle = Omit<EvidenceRecord, 'files'> & {
  format: typeof EVIDENCE_FORMAT;
  manifest: typeof EVIDENCE_MANIFEST;
  exportedAt: string;
  exportedBy: { type: string; id: string };
  signedWith: { algorithm: typeof EVIDENCE_ALGORITHM; keyId: string; signatureFile: typeof SIGNATURE_FILE };
  withFiles: boolean;
  files: EvidenceFile[];
};

/** Where a file's bytes go inside the bundle. */
export const bundledFilePath = (fileId: string) => `${FILES_DIR}/${fileId}`;

/** The bundle: the record with its manifest, who exported it when, the signing key's id, and each file's bytes as copied (or not). */
export function evidenceBundle(
  record: EvidenceRecord,
  meta: { exportedAt: Date; exportedBy: { type: string; id: string }; keyId: string; fileBytes: ReadonlyMap<string, FileBytes> | null },
): EvidenceBundle {
  const files = record.files.map(({ storageKey: _key, ...f }): EvidenceFile => {
    const bytes = meta.fileBytes?.get(f.id);
    if (!bytes) return { ...f, bytes: null };
    return bytes.copied ? { ...f, bytes: bundledFilePath(f.id) } : { ...f, bytes: null, bytesProblem: bytes.problem };
  });
  return {
    format: EVIDENCE_FORMAT,
    manifest: EVIDENCE_MANIFEST,
    exportedAt: meta.exportedAt.toISOString(),
    exportedBy: meta.exportedBy,
    signedWith: { algorithm: EVIDENCE_ALGORITHM, keyId: meta.keyId, signatureFile: SIGNATURE_FILE },
    withFiles: meta.fileBytes !== null,
    ...record,
    files,
  };
}

/** The exact bytes of bundle.json: RFC 8785 canonical JSON of the bundle. */
export const bundleBytes = (bundle: EvidenceBundle): Buffer => Buffer.from(canonicalize(bundle)!, 'utf8');

/** The raw 64-byte Ed25519 signature over the bytes. */
export const signEvidence = (bytes: Buffer, key: SigningKey): Buffer => sign(null, bytes, createPrivateKey(key.privateKeyPem));

/** A public key of the evidence ring, as `vouch evidence-keys generate` prints it (SPKI PEM: what openssl's -pubin reads). */
export function evidencePublicKeyOf(key: SigningKey) {
  return {
    keyId: key.keyId,
    algorithm: EVIDENCE_ALGORITHM,
    publicKeyPem: createPublicKey(key.privateKeyPem).export({ type: 'spki', format: 'pem' }).toString(),
    validFrom: key.validFrom,
    validUntil: key.validUntil,
  };
}

/** One thing a check found wrong, named: the part of the bundle and what. */
export type EvidenceFailure = { part: 'bundle' | 'signature' | 'file' | 'audit' | 'decision'; detail: string };

/**
 * The signature over the bytes, by the ring's key that the (parsed) bundle names, made while that
 * key was valid. A bundle that names no key or cannot be parsed is checked against every key of
 * the ring, so the answer says "signature" whatever byte was changed.
 */
export function checkSignature(
  bytes: Buffer,
  signature: Buffer,
  ring: readonly SigningKey[],
  named: { keyId: string | undefined; exportedAt: string | undefined },
): EvidenceFailure[] {
  const by = (key: SigningKey) => {
    try {
      return verify(null, bytes, createPublicKey(key.privateKeyPem), signature);
    } catch {
      return false;
    }
  };
  if (signature.length !== 64) return [{ part: 'signature', detail: `${SIGNATURE_FILE} holds ${signature.length} bytes, not a 64-byte Ed25519 signature` }];
  if (named.keyId === undefined) {
    return ring.some(by) ? [] : [{ part: 'signature', detail: `${SIGNATURE_FILE} is not a signature of ${BUNDLE_FILE} by any key of the evidence ring` }];
  }
  const key = ring.find((k) => k.keyId === named.keyId);
  if (!key) return [{ part: 'signature', detail: `key ${named.keyId} is not in the evidence ring` }];
  if (!by(key)) return [{ part: 'signature', detail: `${SIGNATURE_FILE} is not key ${key.keyId}'s signature of ${BUNDLE_FILE} (changed since it was signed)` }];
  const at = Date.parse(named.exportedAt ?? '');
  if (!(Date.parse(key.validFrom) <= at && at < Date.parse(key.validUntil)))
    return [{ part: 'signature', detail: `key ${key.keyId} was not valid at exportedAt (${named.exportedAt})` }];
  return [];
}

/** Each bundled file's bytes against its recorded SHA-256 and size; `observed` holds what was found at each `bytes` path (null: absent). */
export function checkFiles(files: readonly EvidenceFile[], observed: ReadonlyMap<string, { sha256: string; size: number } | null>): EvidenceFailure[] {
  const failures: EvidenceFailure[] = [];
  for (const f of files) {
    if (f.bytes === null) continue;
    if (f.bytes !== bundledFilePath(f.id)) {
      failures.push({ part: 'file', detail: `file ${f.id}: its bytes are said to be at ${f.bytes}, not ${bundledFilePath(f.id)}` });
      continue;
    }
    const seen = observed.get(f.bytes);
    if (!seen) failures.push({ part: 'file', detail: `${f.bytes} is missing` });
    else if (seen.sha256 !== f.sha256 || seen.size !== f.size)
      failures.push({ part: 'file', detail: `${f.bytes}: SHA-256 ${seen.sha256} (${seen.size} bytes), recorded ${f.sha256} (${f.size} bytes)` });
  }
  const named = new Set(files.map((f) => f.bytes));
  for (const where of observed.keys()) if (!named.has(where)) failures.push({ part: 'file', detail: `${where} is not in the bundle's file list` });
  return failures;
}

/**
 * The audit entries: each one's own hash, seq order within the business, the link between entries
 * that follow each other in the chain, and agreement with the chain head taken at export time.
 */
export function checkAudit(audit: EvidenceBundle['audit'], businessId: string): EvidenceFailure[] {
  const failures: EvidenceFailure[] = [];
  const head = audit.chainHead;
  let before: AuditEntry | undefined;
  for (const e of audit.entries) {
    const at = `audit entry seq ${e.seq} (${e.action})`;
    if (e.businessId !== businessId) failures.push({ part: 'audit', detail: `${at} belongs to business ${e.businessId}, not the entity's` });
    if (entryHash(e) !== e.hash) failures.push({ part: 'audit', detail: `${at}: its fields no longer match its hash` });
    if (before && e.seq <= before.seq) failures.push({ part: 'audit', detail: `${at} comes after seq ${before.seq}: not in chain order` });
    if (before && e.seq === before.seq + 1 && e.prevHash !== before.hash)
      failures.push({ part: 'audit', detail: `${at}: its prevHash does not name the hash of seq ${before.seq}` });
    if (!head || e.seq > head.seq) failures.push({ part: 'audit', detail: `${at} is past the chain head at export (${head ? `seq ${head.seq}` : 'none'})` });
    else if (e.seq === head.seq && e.hash !== head.hash) failures.push({ part: 'audit', detail: `${at} is the chain head's seq but not its hash` });
    before = e;
  }
  return failures;
}

/**
 * The decision.recorded entry of a decision: by its id (its subject), or, for one recorded before
 * decisions were kept, the last entry naming its account or submission.
 */
function recordedEntry(entries: readonly AuditEntry[], d: EvidenceDecision): AuditEntry | undefined {
  const recorded = entries.filter((e) => e.action === 'decision.recorded');
  return (
    recorded.find((e) => e.subjectType === 'decision' && e.subjectId === d.id) ??
    (d.rules === 'unrecorded'
      ? recorded
          .filter((e) => (d.kind === 'kyc' ? e.subjectType === 'kyc_account' && e.subjectId === d.accountId : e.details.sourceRef === d.submissionId))
          .at(-1)
      : undefined)
  );
}

/** A decision as its digest states it (domain/digests.ts storedDecision). */
function asDecision(d: EvidenceDecision): Decision | KybDecision {
  const base: Decision =
    d.decision === 'APPROVED'
      ? { status: 'APPROVED' }
      : {
          status: 'REJECTED',
          rejectLabels: d.rejectLabels,
          reviewRejectType: d.reviewRejectType as 'RETRY' | 'FINAL',
          moderationComment: d.moderationComment!,
        };
  return d.kind === 'kyb' ? ({ ...base, owners: (d.owners as KybDecision['owners'] | null) ?? [] } as KybDecision) : base;
}

/**
 * Each decision (the entity's and, for a business, its owners') against its decision.recorded entry:
 * the entry's decisionSha256 must be the hash of the decision as the bundle states it, and its
 * basisSha256 the hash of its rule set and basis; a KYC basis must name a version of the person's
 * data in the bundle with that SHA-256, a KYB basis its owners' decisions in the bundle. So the
 * audit chain proves which decisions were taken, by which rules, on which data. Returns the failures
 * and how many decisions were tied.
 */
export function checkDecisions(bundle: Pick<EvidenceBundle, 'decisions' | 'owners' | 'verifiedPersons' | 'kybProfile' | 'files' | 'audit'>): {
  failures: EvidenceFailure[];
  tied: number;
} {
  const failures: EvidenceFailure[] = [];
  let tied = 0;
  const persons = [...bundle.verifiedPersons, ...bundle.owners.flatMap((o) => o.verifiedPersons)];
  const all = [...bundle.decisions.kyc, ...bundle.decisions.kyb, ...bundle.owners.flatMap((o) => o.decisions)];
  const ids = new Set(all.map((d) => d.id));
  const documents = new Map([...bundle.files, ...bundle.owners.flatMap((o) => o.files)].map((f) => [f.id, f.sha256]));
  const profiles = new Set((bundle.kybProfile?.versions ?? []).map((v) => canonicalSha256(v.profile)));
  for (const d of all) {
    const what = `${d.kind.toUpperCase()} decision ${d.id} (${d.path}, ${d.decidedAt})`;
    if (!d.decisionNonce) {
      // only a decision kept from before the audit log has none; one made since without it would escape every check
      if (d.rules !== 'unrecorded') failures.push({ part: 'decision', detail: `${what}: it has no nonce, so no entry can name it` });
      continue;
    }
    const entry = recordedEntry(bundle.audit.entries, d);
    if (!entry) {
      failures.push({ part: 'decision', detail: `${what}: no decision.recorded entry names it` });
      continue;
    }
    if (entry.details.decisionSha256 !== decisionSha256(asDecision(d), d.decisionNonce)) {
      failures.push({ part: 'decision', detail: `${what}: its decision.recorded entry (seq ${entry.seq}) names another decision` });
      continue;
    }
    if (d.rules !== 'unrecorded') {
      const basis = d.basis as DecisionBasis;
      if (entry.details.basisSha256 !== basisSha256(d.decisionNonce, d.rules, basis)) {
        failures.push({ part: 'decision', detail: `${what}: its rules or basis are not those its entry (seq ${entry.seq}) recorded` });
        continue;
      }
      if ('personDataId' in basis && basis.personDataId !== null) {
        // a version kept before digests were kept with the data names no digest: its presence is what is checked
        const person = persons.find((p) => p.id === basis.personDataId);
        if (!person || (basis.personDataSha256 !== null && canonicalSha256(person.person) !== basis.personDataSha256)) {
          failures.push({ part: 'decision', detail: `${what}: the person data it rested on (${basis.personDataId}) is not in the bundle as it was` });
          continue;
        }
      }
      if ('personDataId' in basis && (basis.provider !== d.provider || basis.applicantId !== d.applicantId || basis.levelName !== d.levelName)) {
        failures.push({ part: 'decision', detail: `${what}: its account (${d.provider}/${d.applicantId}) is not the one its basis names` });
        continue;
      }
      if ('owners' in basis) {
        const missing = basis.owners.filter((o) => o.decisionId !== null && !ids.has(o.decisionId));
        if (missing.length) {
          failures.push({
            part: 'decision',
            detail: `${what}: the owners' decisions it rested on are not in the bundle (${missing.map((o) => o.decisionId).join(', ')})`,
          });
          continue;
        }
        const changed = basis.documents.filter((f) => documents.get(f.fileId) !== f.sha256);
        if (changed.length) {
          failures.push({
            part: 'decision',
            detail: `${what}: the documents it rested on are not in the bundle as they were (${changed.map((f) => f.fileId).join(', ')})`,
          });
          continue;
        }
        if (basis.profileSha256 !== null && !profiles.has(basis.profileSha256)) {
          failures.push({ part: 'decision', detail: `${what}: the KYB profile it rested on is not among the profile's versions in the bundle` });
          continue;
        }
      }
    }
    tied += 1;
  }
  return { failures, tied };
}

/**
 * The keyed digests of the entries against the values the bundle holds, under the digest keys it
 * carries: the entity's externalId (entity.created), each requirement's value (requirement.submitted)
 * and each version of person data (person_data.kept). Entries written before digests were keyed
 * name plain SHA-256 and are left as they are. Returns the failures and how many digests were checked.
 */
export function checkDigests(bundle: Pick<EvidenceBundle, 'entity' | 'requirements' | 'verifiedPersons' | 'owners' | 'digestKeys' | 'audit'>): {
  failures: EvidenceFailure[];
  checked: number;
} {
  const failures: EvidenceFailure[] = [];
  let checked = 0;
  const keyOf = new Map(bundle.digestKeys.map((k) => [k.entityId, Buffer.from(k.key, 'hex')]));
  const persons = [...bundle.verifiedPersons, ...bundle.owners.flatMap((o) => o.verifiedPersons)];
  for (const e of bundle.audit.entries) {
    const key = e.entityId ? keyOf.get(e.entityId) : undefined;
    const expect = (name: string, value: unknown) => {
      const stated = e.details[`${name}Hmac`];
      if (stated === undefined) return;
      if (!key) return void failures.push({ part: 'audit', detail: `audit entry seq ${e.seq} (${e.action}): no digest key of entity ${e.entityId}` });
      checked += 1;
      if (stated !== keyedDigest(key, value))
        failures.push({ part: 'audit', detail: `audit entry seq ${e.seq} (${e.action}): its ${name}Hmac is not that of the ${name} in the bundle` });
    };
    if (e.action === 'entity.created' && e.entityId === bundle.entity.id) expect('externalId', bundle.entity.externalId);
    // an entry naming a value of the entity (or a version of its owners' data) that the bundle lacks: the row is gone
    const missing = (what: string) =>
      failures.push({ part: 'audit', detail: `audit entry seq ${e.seq} (${e.action}) names ${what} ${e.subjectId}, which the bundle lacks` });
    if (e.action === 'requirement.submitted' && e.entityId === bundle.entity.id) {
      const r = bundle.requirements.find((x) => x.id === e.subjectId);
      if (r) expect('value', r.value);
      else missing('requirement');
    }
    if (e.action === 'person_data.kept' && e.subjectType === 'person_data') {
      const p = persons.find((x) => x.id === e.subjectId);
      if (p) expect('data', p.person);
      else missing('the person data version');
    }
  }
  return { failures, checked };
}
