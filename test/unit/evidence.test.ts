// The evidence bundle's checks (domain/evidence.ts), each with a passing and a failing case, on
// bundles made in memory: the signature and its key, the audit entries (own hash, order, links,
// the head), the bundled files, and each decision tied to its decision.recorded entry — KYC from
// the account's columns, KYB from the event that carried it, a re-decided account by its last entry.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { entryHash, GENESIS_HASH, type AuditEntry } from '../../domain/audit-chain.ts';
import { decisionNonce, decisionSha256 } from '../../domain/digests.ts';
import { checkAudit, checkDecisions, checkFiles, checkSignature, evidenceBundle, signEvidence, type EvidenceRecord } from '../../domain/evidence.ts';
import type { KybDecision } from '../../domain/kyb.ts';
import { generateKeyRing } from '../../runtime/signing-keys.ts';

const businessId = randomUUID();
const entityId = randomUUID();

/** A chain of entries for the business, seq 1..n, each linked to the one before. */
function chain(details: { action: string; details: AuditEntry['details'] }[]): AuditEntry[] {
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
      subjectType: null,
      subjectId: null,
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
  decisions: { kyc: [], universalKyc: [], kyb: [] },
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

  it('a KYC decision is tied to the last decision.recorded entry of its account; another decision, or an older entry, is not', () => {
    const [older, nonce] = [decisionNonce(), decisionNonce()];
    const rejected = { status: 'REJECTED' as const, rejectLabels: ['UNDER_18'], reviewRejectType: 'FINAL' as const, moderationComment: 'too young' };
    const account = { provider: 'sumsub', applicantId: 'app-1' };
    const entries = chain([
      { action: 'decision.recorded', details: { ...account, decisionSha256: decisionSha256({ status: 'APPROVED' }, older) } },
      { action: 'decision.recorded', details: { ...account, decisionSha256: decisionSha256(rejected, nonce) } },
    ]);
    const record = emptyRecord();
    const kyc = {
      id: randomUUID(),
      ...account,
      levelName: null,
      source: 'sync',
      sourceRef: randomUUID(),
      decision: 'REJECTED',
      rejectLabels: ['UNDER_18'],
      reviewRejectType: 'FINAL',
      moderationComment: 'too young',
      decisionNonce: nonce,
      createdAt: '2026-01-01T00:00:00.000Z',
      decidedAt: '2026-01-01T00:00:00.000Z',
    };
    const bundle = { decisions: { ...record.decisions, kyc: [kyc] }, events: [], audit: { chainHead: null, entries } };
    assert.deepEqual(checkDecisions(bundle), { failures: [], tied: 1 });
    const relabelled = { ...bundle, decisions: { ...bundle.decisions, kyc: [{ ...kyc, rejectLabels: ['DOCUMENT_EXPIRED'] }] } };
    assert.match(checkDecisions(relabelled).failures[0]!.detail, new RegExp(`KYC decision ${kyc.id} .*names another decision`));
    const approved = { ...bundle, decisions: { ...bundle.decisions, kyc: [{ ...kyc, decision: 'APPROVED', decisionNonce: older }] } };
    assert.equal(checkDecisions(approved).failures.length, 1, 'the older entry is not the stored decision');
    // no nonce (decided before the audit log): nothing to tie, nothing failed
    assert.deepEqual(checkDecisions({ ...bundle, decisions: { ...bundle.decisions, kyc: [{ ...kyc, decisionNonce: null }] } }), { failures: [], tied: 0 });
  });

  it('a KYB decision is tied through the kyb_status_change event that carried it', () => {
    const nonce = decisionNonce();
    const submissionId = randomUUID();
    const eventId = randomUUID();
    const decision: KybDecision = {
      status: 'REJECTED',
      rejectLabels: ['DOCUMENTS_INCOMPLETE'],
      reviewRejectType: 'RETRY',
      moderationComment: 'The business could not be verified: documents are missing: x.',
      owners: [{ entityId: randomUUID(), externalId: 'owner-1', status: 'APPROVED' }],
    };
    const entries = chain([
      {
        action: 'decision.recorded',
        details: { path: 'universal-kyb', source: 'universal-kyb', sourceRef: submissionId, eventId, decisionSha256: decisionSha256(decision, nonce) },
      },
    ]);
    const { owners, ...rest } = decision;
    const data = { eventId, message: 'The business could not be verified.', entityId, submissionId, timestamp: 't', ...rest, ubos: owners };
    const kyb = {
      id: submissionId,
      status: 'decided',
      decision: 'REJECTED',
      owners: [owners[0]!.entityId],
      eventId,
      decisionNonce: nonce,
      deadlineAt: 't',
      createdAt: 't',
      settledAt: 't',
    };
    const event = { id: eventId, eventName: 'kyb_status_updated', eventType: 'kyb_status_change', createdAt: 't', payload: { data } };
    const bundle = { decisions: { kyc: [], universalKyc: [], kyb: [kyb] }, events: [event], audit: { chainHead: null, entries } };
    assert.deepEqual(checkDecisions(bundle), { failures: [], tied: 1 });
    const otherOwner = { ...event, payload: { data: { ...data, ubos: [{ ...owners[0]!, status: 'REJECTED' }] } } };
    assert.match(checkDecisions({ ...bundle, events: [otherOwner] }).failures[0]!.detail, /KYB submission .* names another decision/);
    assert.match(checkDecisions({ ...bundle, events: [] }).failures[0]!.detail, /is not in the bundle/);
  });
});
