// What an evidence bundle holds of one entity (domain/evidence.ts), read in one snapshot of the
// record (store/record-reader.ts) — so a sealed entity (deleted under a retention policy) is read too —
// every version of its verified person data, submitted requirements, KYB profile, member links,
// every decision with its rules and basis, events, file metadata, a business entity's owners (their
// decisions and the data those rested on), and the audit entries that name it or its owners with
// its business's chain head. Reads only.
import type { AuditEntry } from '../domain/audit-chain.ts';
import type { EvidenceRecord, EvidencePerson } from '../domain/evidence.ts';
import { keptDecisions as decisionsOf } from './kept-decisions.ts';
import { auditOfEntity, chainHead } from './audit-log.ts';
import { iso, type Db, type Queryable, type Row } from './db.ts';
import { readRecord } from './record-reader.ts';

const isoOrNull = (v: unknown) => (v == null ? null : iso(v));
const textOrNull = (v: unknown) => (v == null ? null : String(v));

/** The entity's record, or null when no entity (sealed or not) has this id. */
export async function evidenceOf(db: Db, entityId: string): Promise<EvidenceRecord | null> {
  // one snapshot: the chain head and the entries are of the same moment as the rest
  return readRecord(db, async (tx) => {
    const [e] = await tx.query(`SELECT r.*, b.retention_years FROM entity_records r JOIN businesses b ON b.id = r.business_id WHERE r.id = $1`, [entityId]);
    if (!e) return null;
    // one after another: a transaction is one connection, which runs one query at a time
    const all = (sql: string) => tx.query(sql, [entityId]);
    const persons = await personsOf(tx, [entityId]);
    const requirements = await all(
      'SELECT id, requirement_slug, value, status, submission_id, file_id, created_at, updated_at FROM entity_requirements ' +
        'WHERE entity_id = $1 ORDER BY created_at, id',
    );
    const profiles = await all('SELECT profile, status, created_at, updated_at FROM kyb_profiles WHERE entity_id = $1');
    const profileVersions = await all('SELECT profile, saved_at FROM record_kyb_profile_versions WHERE entity_id = $1 ORDER BY seq');
    const members = await all(
      'SELECT business_entity_id, member_entity_id, role, ownership_percent, external_id, declared, created_at FROM entity_members ' +
        'WHERE business_entity_id = $1 OR member_entity_id = $1 ORDER BY business_entity_id, position, created_at',
    );
    const decisions = await decisionsOf(tx, [entityId]);
    const ukyc = await all(
      'SELECT id, status, decision, event_id, deadline_at, created_at, settled_at FROM ukyc_submissions WHERE entity_id = $1 ORDER BY created_at',
    );
    const kyb = await all('SELECT * FROM kyb_submissions WHERE entity_id = $1 ORDER BY created_at');
    const events = await all('SELECT id, event_name, event_type, payload, created_at FROM events WHERE entity_id = $1 ORDER BY created_at, id');
    const files = await all(
      'SELECT id, slug, document_type, file_name, content_type, size, sha256, submission_id, uploaded_at, retired_at, storage_key FROM files ' +
        'WHERE entity_id = $1 ORDER BY uploaded_at, id',
    );
    // a business entity's owners: the decisions its KYB decisions rested on, the data those rested on, and their entries
    const ownerIds = members.filter((m) => String(m.business_entity_id) === entityId).map((m) => String(m.member_entity_id));
    const ownerPersons = await personsOf(tx, ownerIds);
    const ownerDecisions = await decisionsOf(tx, ownerIds);
    const ownerFiles = ownerIds.length
      ? await tx.query(
          'SELECT id, entity_id, slug, document_type, sha256, uploaded_at, retired_at FROM files WHERE entity_id = ANY ($1::uuid[]) ORDER BY uploaded_at, id',
          [ownerIds],
        )
      : [];
    const businessId = String(e.business_id);
    const entries = new Map<number, AuditEntry>();
    for (const id of [entityId, ...ownerIds]) for (const x of await auditOfEntity(tx, businessId, id)) entries.set(x.seq, x);
    const head = await chainHead(tx, businessId);
    const keys = await tx.query<{ entity_id: string; key: Buffer }>('SELECT entity_id, key FROM entity_digest_keys WHERE entity_id = ANY ($1::uuid[])', [
      [entityId, ...ownerIds],
    ]);
    const profile: Row | undefined = profiles[0];
    return {
      entity: {
        id: String(e.id),
        businessId: String(e.business_id),
        externalId: String(e.external_id),
        type: String(e.type),
        verifiedBy: textOrNull(e.verified_by),
        createdAt: iso(e.created_at),
        updatedAt: iso(e.updated_at),
        sealedAt: isoOrNull(e.sealed_at),
        purgeAfter: isoOrNull(e.purge_after),
      },
      business: { id: String(e.business_id), retentionYears: e.retention_years == null ? null : Number(e.retention_years) },
      verifiedPersons: persons,
      requirements: requirements.map((r) => ({
        id: String(r.id),
        slug: String(r.requirement_slug),
        value: r.value,
        status: String(r.status),
        submissionId: textOrNull(r.submission_id),
        fileId: textOrNull(r.file_id),
        createdAt: iso(r.created_at),
        updatedAt: iso(r.updated_at),
      })),
      kybProfile: profile
        ? {
            profile: profile.profile,
            status: String(profile.status),
            createdAt: iso(profile.created_at),
            updatedAt: iso(profile.updated_at),
            versions: profileVersions.map((v) => ({ profile: v.profile, savedAt: iso(v.saved_at) })),
          }
        : null,
      members: members.map((r) => ({
        businessEntityId: String(r.business_entity_id),
        memberEntityId: String(r.member_entity_id),
        role: String(r.role),
        ownershipPercent: textOrNull(r.ownership_percent),
        externalId: textOrNull(r.external_id),
        declared: r.declared ?? null,
        createdAt: iso(r.created_at),
      })),
      decisions: {
        kyc: decisions.filter((d) => d.kind === 'kyc'),
        kyb: decisions.filter((d) => d.kind === 'kyb'),
        universalKyc: ukyc.map((r) => ({
          id: String(r.id),
          status: String(r.status),
          decision: textOrNull(r.decision),
          eventId: textOrNull(r.event_id),
          deadlineAt: iso(r.deadline_at),
          createdAt: iso(r.created_at),
          settledAt: isoOrNull(r.settled_at),
        })),
        kybSubmissions: kyb.map((r) => ({
          id: String(r.id),
          status: String(r.status),
          decision: textOrNull(r.decision),
          owners: (r.owners as unknown[]).map(String),
          eventId: textOrNull(r.event_id),
          deadlineAt: iso(r.deadline_at),
          createdAt: iso(r.created_at),
          settledAt: isoOrNull(r.settled_at),
        })),
      },
      owners: ownerIds.map((id) => ({
        entityId: id,
        verifiedPersons: ownerPersons.filter((p) => p.entityId === id),
        decisions: ownerDecisions.filter((d) => d.entityId === id),
        files: ownerFiles
          .filter((f) => String(f.entity_id) === id)
          .map((f) => ({
            id: String(f.id),
            slug: String(f.slug),
            documentType: textOrNull(f.document_type),
            sha256: String(f.sha256),
            uploadedAt: iso(f.uploaded_at),
            retiredAt: isoOrNull(f.retired_at),
          })),
      })),
      events: events.map((r) => ({
        id: String(r.id),
        eventName: String(r.event_name),
        eventType: String(r.event_type),
        createdAt: iso(r.created_at),
        payload: r.payload,
      })),
      files: files.map((r) => ({
        id: String(r.id),
        slug: String(r.slug),
        documentType: textOrNull(r.document_type),
        fileName: textOrNull(r.file_name),
        contentType: String(r.content_type),
        size: Number(r.size),
        sha256: String(r.sha256),
        submissionId: textOrNull(r.submission_id),
        uploadedAt: iso(r.uploaded_at),
        retiredAt: isoOrNull(r.retired_at),
        storageKey: String(r.storage_key),
      })),
      digestKeys: keys.map((k) => ({ entityId: String(k.entity_id), key: k.key.toString('hex') })),
      audit: { chainHead: head, entries: [...entries.values()].sort((a, b) => a.seq - b.seq) },
    };
  });
}

/** Every version of these entities' person data, oldest first (record_kyc_persons keeps them all: migration 027). */
async function personsOf(db: Queryable, entityIds: readonly string[]): Promise<EvidencePerson[]> {
  if (entityIds.length === 0) return [];
  const rows = await db.query(
    'SELECT id, entity_id, provider, applicant_id, person, updated_at FROM record_kyc_persons WHERE entity_id = ANY ($1::uuid[]) ORDER BY seq',
    [entityIds],
  );
  return rows.map((r) => ({
    id: String(r.id),
    entityId: String(r.entity_id),
    provider: String(r.provider),
    applicantId: String(r.applicant_id),
    person: r.person,
    keptAt: iso(r.updated_at),
  }));
}
