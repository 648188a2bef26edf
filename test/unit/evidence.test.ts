// The evidence bundle's checks (domain/evidence.ts), each with a passing and a failing case, on
// bundles made in memory: the signature and its key, the audit entries (own hash, order, links,
// the head), the bundled files, and every decision tied to its own decision.recorded entry with its
// rules and basis — a RED then a GREEN both, a KYB decision with its owners' decisions.
import assert from 'node:assert/strict';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { entryHash, GENESIS_HASH, type AuditEntry } from '../../domain/audit-chain.ts';
import { basisSha256, canonicalSha256, DECISION_RULES, decisionNonce, decisionSha256, keyedDigest, type DecisionBasis } from '../../domain/digests.ts';
import {
  checkAudit,
  checkDecisions,
  checkDigests,
  checkFiles,
  checkSignature,
  evidenceBundle,
  signEvidence,
  type EvidenceDecision,
  type EvidenceRecord,
} from '../../domain/evidence.ts';
import type { KybDecision } from '../../domain/kyb.ts';
import type { Decision } from '../../domain/reliance.ts';
import { generateKeyRing } from '../../runtime/signing-keys.ts';

const businessId = randomUUID();
const entityId = randomUUID();

/** A chain of entries for the business, seq 1..n, each linked to the one before. */
function chain(details: { action: string; details: AuditEntry['details']; subject?: string; subjectType?: string }[]): AuditEntry[] {
  let prevHash = GENESIS_HASH;
  return details.map((d, i) => {
    const fields = {
      businessId,
      seq: i + 1,
      id: randomUUID(),
      occurredAt: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
      actorType: 'system' as const,
      actorId: 'test',
      runId: null,
      requestId: null,
      action: d.action,
      entityId,
      subjectType: d.subject ? (d.subjectType ?? 'decision') : null,
      subjectId: d.subject ?? null,
      details: d.details,
      outcome: 'ok',
      prevHash,
    };
    const entry = { ...fields, hash: entryHash(fields) };
    prevHash = entry.hash;
    return entry;
  });
}

const emptyRecord = (): EvidenceRecord => ({
  entity: {
    id: entityId,
    businessId,
    externalId: 'x-1',
    type: 'INDIVIDUAL',
    verifiedBy: null,
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
    sealedAt: null,
    purgeAfter: null,
  },
  business: { id: businessId, retentionYears: null },
  verifiedPersons: [],
  requirements: [],
  kybProfile: null,
  members: [],
  decisions: { kyc: [], kyb: [], universalKyc: [], kybSubmissions: [] },
  owners: [],
  digestKeys: [],
  events: [],
  files: [],
  audit: { chainHead: null, entries: [] },
});

describe('evidence bundle checks', () => {
  const ring = generateKeyRing('evidence', 'sandbox');
  const key = ring[0]!;

  it('the signature: by the named key of the ring, while it was valid; any changed byte, another ring or a key not yet valid fails', () => {
    const bytes = Buffer.from('{"a":1}');
    const signature = signEvidence(bytes, key);
    const named = { keyId: key.keyId, exportedAt: new Date().toISOString() };
    assert.equal(signature.length, 64);
    assert.deepEqual(checkSignature(bytes, signature, ring, named), []);
    assert.deepEqual(checkSignature(bytes, signature, ring, { keyId: undefined, exportedAt: undefined }), [], 'unnamed: any key of the ring');
    assert.match(checkSignature(Buffer.from('{"a":2}'), signature, ring, named)[0]!.detail, /changed since it was signed/);
    assert.match(checkSignature(bytes, signature, generateKeyRing('evidence', 'sandbox'), named)[0]!.detail, /not in the evidence ring/);
    assert.match(checkSignature(bytes, signature.subarray(1), ring, named)[0]!.detail, /63 bytes/);
    assert.match(checkSignature(bytes, signature, ring, { ...named, exportedAt: '2020-01-01T00:00:00.000Z' })[0]!.detail, /not valid at exportedAt/);
  });

  it("the audit entries: each one's hash, seq order, links between consecutive ones, and the head", () => {
    const entries = chain([
      { action: 'entity.created', details: {} },
      { action: 'feature.enabled', details: {} },
      { action: 'file.submitted', details: { sha256: 'a'.repeat(64) } },
    ]);
    const head = { seq: 3, hash: entries[2]!.hash };
    // not contiguous: the entity's entries skip seq 2, and still hold
    assert.deepEqual(checkAudit({ chainHead: head, entries: [entries[0]!, entries[2]!] }, businessId), []);
    assert.deepEqual(checkAudit({ chainHead: { seq: 9, hash: 'f'.repeat(64) }, entries }, businessId), []);
    const changed = { ...entries[2]!, details: { sha256: 'b'.repeat(64) } };
    assert.deepEqual(
      checkAudit({ chainHead: head, entries: [entries[0]!, entries[1]!, changed] }, businessId).map((f) => f.detail),
      ['audit entry seq 3 (file.submitted): its fields no longer match its hash'],
    );
    // changed and hashed again: the head taken at export names another hash
    const { hash: _old, ...rehashed } = changed;
    assert.deepEqual(
      checkAudit({ chainHead: head, entries: [entries[0]!, entries[1]!, { ...rehashed, hash: entryHash(rehashed) }] }, businessId).map((f) => f.detail),
      ["audit entry seq 3 (file.submitted) is the chain head's seq but not its hash"],
    );
    assert.match(checkAudit({ chainHead: head, entries: [entries[1]!, entries[0]!] }, businessId)[0]!.detail, /not in chain order/);
    // a replaced entry with a hash of its own still breaks the link from the next
    const { hash: _h, ...fields } = { ...entries[1]!, occurredAt: '2027-01-01T00:00:00.000Z' };
    const forged = { ...fields, hash: entryHash(fields) };
    assert.match(
      checkAudit({ chainHead: head, entries: [entries[0]!, forged, entries[2]!] }, businessId)[0]!.detail,
      /prevHash does not name the hash of seq 2/,
    );
    assert.match(checkAudit({ chainHead: { seq: 2, hash: entries[1]!.hash }, entries }, businessId)[0]!.detail, /past the chain head/);
    assert.match(checkAudit({ chainHead: head, entries }, randomUUID())[0]!.detail, /belongs to business/);
  });

  it('the files: each bundled copy against its SHA-256 and size; missing, changed, misplaced or unlisted bytes fail', () => {
    const record = emptyRecord();
    const file = {
      id: randomUUID(),
      slug: 'ukyc-id-document',
      documentType: null,
      fileName: 'p.pdf',
      contentType: 'application/pdf',
      size: 3,
      sha256: 'c'.repeat(64),
      submissionId: null,
      uploadedAt: '2026-01-01T00:00:00.000Z',
      retiredAt: null,
      storageKey: 'k',
    };
    record.files = [file];
    const bundle = evidenceBundle(record, {
      exportedAt: new Date(),
      exportedBy: { type: 'operator', id: 'o' },
      keyId: key.keyId,
      fileBytes: new Map([[file.id, { copied: true }]]),
    });
    const where = `files/${file.id}`;
    assert.equal(bundle.files[0]!.bytes, where);
    assert.ok(!('storageKey' in bundle.files[0]!));
    assert.deepEqual(checkFiles(bundle.files, new Map([[where, { sha256: file.sha256, size: 3 }]])), []);
    assert.match(checkFiles(bundle.files, new Map([[where, { sha256: 'd'.repeat(64), size: 3 }]]))[0]!.detail, /SHA-256 d+ \(3 bytes\), recorded c+/);
    assert.match(checkFiles(bundle.files, new Map())[0]!.detail, /is missing/);
    assert.match(
      checkFiles(
        bundle.files,
        new Map([
          [where, { sha256: file.sha256, size: 3 }],
          ['files/extra', { sha256: file.sha256, size: 3 }],
        ]),
      )[0]!.detail,
      /files\/extra is not in the bundle's file list/,
    );
    assert.match(checkFiles([{ ...bundle.files[0]!, bytes: '../../etc/passwd' }], new Map())[0]!.detail, /not files\//);
  });

  /** A kept decision as the store reads it, with its basis. */
  const decided = (over: Partial<EvidenceDecision> = {}): EvidenceDecision => ({
    id: randomUUID(),
    entityId,
    kind: 'kyc',
    path: 'hosted-sdk',
    source: 'hosted-sdk',
    sourceRef: 'sumsub:app-1',
    accountId: randomUUID(),
    provider: 'sumsub',
    applicantId: 'app-1',
    levelName: null,
    submissionId: null,
    decision: 'APPROVED',
    rejectLabels: [],
    reviewRejectType: null,
    moderationComment: null,
    owners: null,
    rules: DECISION_RULES['hosted-sdk'],
    basis: null,
    decisionNonce: decisionNonce(),
    eventId: randomUUID(),
    decidedAt: '2026-01-01T00:00:00.000Z',
    ...over,
  });
  /** Its decision.recorded entry's details, as onboarding/decisions.ts writes them. */
  const recorded = (d: EvidenceDecision, decision: Decision | KybDecision) => ({
    action: 'decision.recorded',
    subject: d.id,
    details: {
      decisionSha256: decisionSha256(decision, d.decisionNonce!),
      basisSha256: basisSha256(d.decisionNonce!, d.rules, d.basis as DecisionBasis),
    },
  });

  it('every KYC decision is kept and tied to its own entry, with its rules and the person data it rested on: RED, then GREEN', () => {
    const rejected = { status: 'REJECTED' as const, rejectLabels: ['UNDER_18'], reviewRejectType: 'FINAL' as const, moderationComment: 'too young' };
    const first = { id: randomUUID(), entityId, provider: 'sumsub', applicantId: 'app-1', person: { firstName: 'Ann', dob: '2010-01-01' }, keptAt: 't' };
    const second = { ...first, id: randomUUID(), person: { firstName: 'Ann', dob: '1990-01-01' } };
    const basisOf = (p: typeof first) => ({
      provider: 'sumsub',
      applicantId: 'app-1',
      levelName: null,
      personDataId: p.id,
      personDataSha256: canonicalSha256(p.person),
    });
    const red = decided({ decision: 'REJECTED', rejectLabels: ['UNDER_18'], reviewRejectType: 'FINAL', moderationComment: 'too young', basis: basisOf(first) });
    const green = decided({ basis: basisOf(second) });
    const entries = chain([recorded(red, rejected), recorded(green, { status: 'APPROVED' })]);
    const bundle = {
      decisions: { ...emptyRecord().decisions, kyc: [red, green] },
      verifiedPersons: [first, second],
      owners: [],
      kybProfile: null,
      files: [],
      audit: { chainHead: null, entries },
    };
    assert.deepEqual(checkDecisions(bundle), { failures: [], tied: 2 }, 'both decisions, each by its own entry');
    const relabelled = { ...bundle, decisions: { ...bundle.decisions, kyc: [{ ...red, rejectLabels: ['DOCUMENT_EXPIRED'] }, green] } };
    assert.match(checkDecisions(relabelled).failures[0]!.detail, new RegExp(`KYC decision ${red.id} .*names another decision`));
    const otherRules = { ...bundle, decisions: { ...bundle.decisions, kyc: [red, { ...green, rules: 'reliance/1999-01' }] } };
    assert.match(checkDecisions(otherRules).failures[0]!.detail, /rules or basis are not those its entry/);
    const otherData = { ...bundle, verifiedPersons: [{ ...first, person: { firstName: 'Bob', dob: '2010-01-01' } }, second] };
    assert.match(checkDecisions(otherData).failures[0]!.detail, /the person data it rested on .* is not in the bundle as it was/);
    assert.match(
      checkDecisions({ ...bundle, audit: { chainHead: null, entries: entries.slice(1) } }).failures[0]!.detail,
      /no decision.recorded entry names it/,
    );
    // no nonce (decided before the audit log, kept with rules `unrecorded`): nothing to tie, nothing failed
    const older = { ...red, decisionNonce: null, rules: 'unrecorded', basis: {} };
    assert.deepEqual(checkDecisions({ ...bundle, decisions: { ...bundle.decisions, kyc: [older] } }), { failures: [], tied: 0 });
  });

  it('a decision kept from before rule sets were recorded is tied by the last entry naming its account', () => {
    const legacy = decided({ rules: 'unrecorded', basis: {} });
    const details = { decisionSha256: decisionSha256({ status: 'APPROVED' }, legacy.decisionNonce!) };
    const entries = chain([{ action: 'decision.recorded', subjectType: 'kyc_account', subject: legacy.accountId!, details }]);
    const bundle = {
      decisions: { ...emptyRecord().decisions, kyc: [legacy] },
      verifiedPersons: [],
      owners: [],
      kybProfile: null,
      files: [],
      audit: { chainHead: null, entries },
    };
    assert.deepEqual(checkDecisions(bundle), { failures: [], tied: 1 });
  });

  it("a KYB decision is tied with the owners' decisions, the profile version and the documents it rested on, which the bundle carries", () => {
    const ownerId = randomUUID();
    const owner = decided({
      entityId: ownerId,
      basis: { provider: 'sumsub', applicantId: 'app-1', levelName: null, personDataId: null, personDataSha256: null },
    });
    const decision: KybDecision = {
      status: 'REJECTED',
      rejectLabels: ['DOCUMENTS_INCOMPLETE'],
      reviewRejectType: 'RETRY',
      moderationComment: 'The business could not be verified: documents are missing: x.',
      owners: [{ entityId: ownerId, externalId: 'owner-1', status: 'APPROVED' }],
    };
    const profile = { legalName: 'Acme Ltd' };
    const passport = { id: randomUUID(), slug: 'ukyb-owner-document', documentType: 'PASSPORT', sha256: 'a'.repeat(64), uploadedAt: 't', retiredAt: null };
    const kyb = decided({
      kind: 'kyb',
      path: 'universal-kyb',
      source: 'universal-kyb',
      sourceRef: randomUUID(),
      accountId: null,
      provider: null,
      applicantId: null,
      decision: 'REJECTED',
      rejectLabels: decision.rejectLabels,
      reviewRejectType: 'RETRY',
      moderationComment: decision.moderationComment,
      owners: decision.owners,
      rules: DECISION_RULES['universal-kyb'],
      basis: {
        owners: [{ entityId: ownerId, decisionId: owner.id }],
        profileSha256: canonicalSha256(profile),
        documents: [{ fileId: passport.id, sha256: passport.sha256 }],
      },
    });
    const entries = chain([recorded(owner, { status: 'APPROVED' }), recorded(kyb, decision)]);
    const latest = { legalName: 'Acme Trading Ltd' };
    const bundle = {
      decisions: { ...emptyRecord().decisions, kyb: [kyb] },
      verifiedPersons: [],
      owners: [{ entityId: ownerId, verifiedPersons: [], decisions: [owner], files: [passport] }],
      kybProfile: {
        profile: latest,
        status: 'DECIDED',
        createdAt: 't',
        updatedAt: 't',
        versions: [
          { profile, savedAt: 't' },
          { profile: latest, savedAt: 't' },
        ],
      },
      files: [],
      audit: { chainHead: null, entries },
    };
    assert.deepEqual(checkDecisions(bundle), { failures: [], tied: 2 }, 'the profile it rested on is an earlier version: kept, and found');
    const otherOwner = { ...bundle, decisions: { ...bundle.decisions, kyb: [{ ...kyb, owners: [{ ...decision.owners[0]!, status: 'REJECTED' }] }] } };
    assert.match(checkDecisions(otherOwner).failures[0]!.detail, /KYB decision .* names another decision/);
    const noOwnerDecision = { ...bundle, owners: [{ ...bundle.owners[0]!, decisions: [] }] };
    assert.match(checkDecisions(noOwnerDecision).failures[0]!.detail, /the owners' decisions it rested on are not in the bundle/);
    const swapped = { ...bundle, owners: [{ ...bundle.owners[0]!, files: [{ ...passport, sha256: 'b'.repeat(64) }] }] };
    assert.match(checkDecisions(swapped).failures[0]!.detail, /the documents it rested on are not in the bundle as they were/);
    const rewritten = { ...bundle, kybProfile: { ...bundle.kybProfile, versions: [{ profile: latest, savedAt: 't' }] } };
    assert.match(checkDecisions(rewritten).failures[0]!.detail, /the KYB profile it rested on is not among/);
  });

  it('a decision made since decisions were kept with no nonce, or on another account than its basis names, fails', () => {
    const basis = { provider: 'sumsub', applicantId: 'app-1', levelName: null, personDataId: null, personDataSha256: null };
    const bare = decided({ decisionNonce: null, basis });
    const bundle = {
      decisions: { ...emptyRecord().decisions, kyc: [bare] },
      verifiedPersons: [],
      owners: [],
      kybProfile: null,
      files: [],
      audit: { chainHead: null, entries: [] as AuditEntry[] },
    };
    assert.match(checkDecisions(bundle).failures[0]!.detail, /it has no nonce/);
    const moved = decided({ basis: { ...basis, applicantId: 'app-2' } });
    const onAnother = {
      ...bundle,
      decisions: { ...bundle.decisions, kyc: [moved] },
      audit: { chainHead: null, entries: chain([recorded(moved, { status: 'APPROVED' })]) },
    };
    assert.match(checkDecisions(onAnother).failures[0]!.detail, /its account \(sumsub\/app-1\) is not the one its basis names/);
  });

  it('checks the keyed digests of the values it holds under the digest keys it carries; another value, or no key, fails', () => {
    const key = randomBytes(32);
    const person = { id: randomUUID(), entityId, provider: 'sumsub', applicantId: 'a', person: { firstName: 'Ann' }, keptAt: 't' };
    const requirement = {
      id: randomUUID(),
      slug: 'kyc-first-name',
      value: 'Ann',
      status: 'PENDING',
      submissionId: null,
      fileId: null,
      createdAt: 't',
      updatedAt: 't',
    };
    const entries = chain([
      { action: 'entity.created', details: { type: 'INDIVIDUAL', externalIdHmac: keyedDigest(key, 'x-1') } },
      {
        action: 'requirement.submitted',
        subjectType: 'requirement',
        subject: requirement.id,
        details: { slug: 'kyc-first-name', valueHmac: keyedDigest(key, 'Ann') },
      },
      { action: 'person_data.kept', subjectType: 'person_data', subject: person.id, details: { dataHmac: keyedDigest(key, person.person) } },
    ]);
    const bundle = {
      ...emptyRecord(),
      requirements: [requirement],
      verifiedPersons: [person],
      digestKeys: [{ entityId, key: key.toString('hex') }],
      audit: { chainHead: null, entries },
    };
    assert.deepEqual(checkDigests(bundle), { failures: [], checked: 3 });
    assert.notEqual(entries[0]!.details.externalIdHmac, createHash('sha256').update('"x-1"').digest('hex'), 'not the plain hash a guess would match');
    const renamed = { ...bundle, entity: { ...bundle.entity, externalId: 'x-2' } };
    assert.match(checkDigests(renamed).failures[0]!.detail, /its externalIdHmac is not that of the externalId in the bundle/);
    assert.match(checkDigests({ ...bundle, digestKeys: [] }).failures[0]!.detail, /no digest key of entity/);
    assert.match(checkDigests({ ...bundle, requirements: [] }).failures[0]!.detail, /names requirement .* which the bundle lacks/);
    assert.match(checkDigests({ ...bundle, verifiedPersons: [] }).failures[0]!.detail, /names the person data version .* which the bundle lacks/);
  });
});
