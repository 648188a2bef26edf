// The facts of an entity's history (domain/entity-history.ts turns them into its items), read from
// the tables that hold them: the entity record, its members, requirements and files, its
// verifications (batch rows, sync requests, KYC accounts, universal KYC and KYB submissions), the
// stages recorded as they happened (audit entries, stage events), its events with their
// deliveries, its features and the feature changes the audit log holds. Never a
// decision's outcome: that is in store/trace.ts, for operators. Reads entity_records, so a sealed
// record's history is there for trace; the API checks first that the entity is the caller's and
// not sealed.
import { EVENT_TYPES } from '../domain/events.ts';
import type { EventFact, HistoryFacts, RecordedStage, StoredDelivery, VerificationFact } from '../domain/entity-history.ts';
import { kybVerificationKey, ukycVerificationKey, type AnyVerificationPath, type VerificationStage } from '../domain/lifecycle-events.ts';
import { ID_DOCUMENT_SLUG } from '../domain/universal-kyc.ts';
import { iso, readAll, type Queryable } from './db.ts';
import { shareRefKey } from './share-records.ts';

const isoOrNull = (v: unknown): string | null => (v == null ? null : iso(v));

/** The facts of the entity's history; null when there is no such record (purged, or never). */
export async function historyFacts(db: Queryable, entityId: string): Promise<HistoryFacts | null> {
  const [entity] = await db.query<{ id: string; business_id: string; type: 'INDIVIDUAL' | 'BUSINESS'; created_at: Date }>(
    'SELECT id, business_id, type, created_at FROM entity_records WHERE id = $1',
    [entityId],
  );
  if (!entity) return null;
  const [members, requirements, files, verifications, events, enabled, audited] = await readAll(db, [
    () =>
      db.query(
        'SELECT * FROM entity_members WHERE business_entity_id = $1 OR member_entity_id = $1 ORDER BY created_at, business_entity_id, member_entity_id',
        [entityId],
      ),
    () =>
      db.query(
        'SELECT id, requirement_slug, submission_id, status, created_at, updated_at FROM entity_requirements WHERE entity_id = $1 AND file_id IS NULL ' +
          'ORDER BY created_at, id',
        [entityId],
      ),
    () =>
      db.query('SELECT id, slug, document_type, submission_id, uploaded_at, retired_at FROM files WHERE entity_id = $1 ORDER BY uploaded_at, id', [entityId]),
    () => verificationsOf(db, entityId),
    () => eventsOf(db, entityId),
    () => db.query('SELECT feature_id, enabled_at FROM entity_features WHERE entity_id = $1', [entityId]),
    () => auditedFacts(db, String(entity.business_id), entityId),
  ]);
  return {
    entity: { id: String(entity.id), type: entity.type, createdAt: iso(entity.created_at) },
    members: members.map((m) => ({
      businessEntityId: String(m.business_entity_id),
      memberEntityId: String(m.member_entity_id),
      role: String(m.role),
      declaredAt: iso(m.created_at),
    })),
    requirements: requirements.map((r) => ({
      requirementId: String(r.id),
      slug: String(r.requirement_slug),
      submissionId: r.submission_id == null ? null : String(r.submission_id),
      submittedAt: iso(r.created_at),
      retiredAt: r.status === 'SUPERSEDED' ? iso(r.updated_at) : null,
    })),
    files: files.map((f) => ({
      fileId: String(f.id),
      slug: String(f.slug),
      documentType: f.document_type == null ? null : String(f.document_type),
      submissionId: f.submission_id == null ? null : String(f.submission_id),
      submittedAt: iso(f.uploaded_at),
      retiredAt: isoOrNull(f.retired_at),
    })),
    verifications,
    recordedStages: [...audited.stages, ...events.stages],
    events: events.events,
    enabledFeatures: enabled.map((f) => ({ featureId: String(f.feature_id), enabledAt: iso(f.enabled_at) })),
    auditedFeatureChanges: audited.features,
  };
}

/** Every verification of the entity, whatever its path, as its rows tell it. */
async function verificationsOf(db: Queryable, entityId: string): Promise<VerificationFact[]> {
  const [accounts, batchRows, syncs, sdk, ukyc, kyb] = await readAll(db, [
    () =>
      db.query<{ source: string; source_ref: string; decided_at: Date }>(
        "SELECT source, source_ref, decided_at FROM kyc_accounts WHERE entity_id = $1 AND source IN ('batch', 'sync')",
        [entityId],
      ),
    () =>
      db.query(
        `SELECT r.batch_id, r.row_number, r.status, r.import_attempts, r.error_category, r.updated_at, coalesce(b.started_at, b.created_at) AS run_started_at
         FROM import_records r JOIN import_batches b ON b.id = r.batch_id WHERE r.entity_id = $1 ORDER BY b.created_at, r.row_number`,
        [entityId],
      ),
    () =>
      db.query(
        'SELECT request_id, status, import_attempts, error_category, created_at, updated_at FROM sync_imports WHERE entity_id = $1 ORDER BY created_at',
        [entityId],
      ),
    () =>
      // a hosted-SDK review is named by its decision's event (same transaction, same instant), whose source key is the review's
      db.query<{ applicant_id: string; decided_at: Date; source_key: string | null }>(
        `SELECT k.applicant_id, k.decided_at, e.source_key FROM kyc_accounts k
         LEFT JOIN events e ON e.entity_id = k.entity_id AND e.event_type = 'account_status_change' AND e.created_at = k.decided_at
        WHERE k.entity_id = $1 AND k.source = 'hosted-sdk' ORDER BY k.created_at`,
        [entityId],
      ),
    () =>
      db.query(
        `SELECT s.id, s.created_at, s.status, s.settled_at,
              (SELECT min(f.uploaded_at) FROM files f WHERE f.submission_id = s.id AND f.slug = $2) AS first_id_document_at
         FROM ukyc_submissions s WHERE s.entity_id = $1 ORDER BY s.created_at`,
        [entityId, ID_DOCUMENT_SLUG],
      ),
    () =>
      // an owner is decided from its first KYC account on; the submission is ready once its last owner is
      db.query(
        `SELECT s.id, s.created_at, s.status, s.settled_at,
              CASE WHEN cardinality(s.owners) = 0 THEN s.created_at
                   ELSE (SELECT CASE WHEN bool_and(o.first IS NOT NULL) THEN max(o.first) END
                           FROM (SELECT (SELECT min(k.created_at) FROM kyc_accounts k WHERE k.entity_id = x.id) AS first FROM unnest(s.owners) AS x(id)) o)
              END AS owners_decided_at
         FROM kyb_submissions s WHERE s.entity_id = $1 ORDER BY s.created_at`,
        [entityId],
      ),
  ]);
  const decidedAt = new Map(accounts.map((a) => [`${a.source}:${a.source_ref}`, iso(a.decided_at)]));
  const shared = (
    source: 'batch' | 'sync',
    r: Record<string, unknown>,
    ids: { batchId: string; rowNumber: number } | { requestId: string },
    startedAt: unknown,
  ): VerificationFact => {
    const key = shareRefKey('batchId' in ids ? { kind: 'batch', ...ids } : { kind: 'sync', ...ids });
    return {
      key,
      source,
      ...ids,
      status: r.status as 'pending' | 'succeeded' | 'failed',
      importAttempts: Number(r.import_attempts ?? 0),
      errorCategory: r.error_category == null ? null : String(r.error_category),
      startedAt: iso(startedAt),
      updatedAt: iso(r.updated_at),
      decidedAt: decidedAt.get(`${source}:${key}`) ?? null,
    };
  };
  return [
    ...batchRows.map((r) => shared('batch', r, { batchId: String(r.batch_id), rowNumber: Number(r.row_number) }, r.run_started_at)),
    ...syncs.map((r) => shared('sync', r, { requestId: String(r.request_id) }, r.created_at)),
    ...sdk.map((a): VerificationFact => ({
      key: a.source_key ?? `hosted-sdk-account:${a.applicant_id}:${iso(a.decided_at)}`,
      source: 'hosted-sdk',
      applicantId: String(a.applicant_id),
      decidedAt: iso(a.decided_at),
    })),
    ...ukyc.map((s): VerificationFact => ({
      key: ukycVerificationKey(String(s.id)),
      source: 'universal-kyc',
      submissionId: String(s.id),
      createdAt: iso(s.created_at),
      status: s.status as 'waiting' | 'decided' | 'expired',
      settledAt: isoOrNull(s.settled_at),
      firstIdDocumentAt: isoOrNull(s.first_id_document_at),
    })),
    ...kyb.map((s): VerificationFact => ({
      key: kybVerificationKey(String(s.id)),
      source: 'universal-kyb',
      submissionId: String(s.id),
      createdAt: iso(s.created_at),
      status: s.status as 'waiting' | 'decided' | 'expired' | 'superseded',
      settledAt: isoOrNull(s.settled_at),
      ownersDecidedAt: isoOrNull(s.owners_decided_at),
    })),
  ];
}

const isEventType = (t: string): t is EventFact['eventType'] => (EVENT_TYPES as readonly string[]).includes(t);
const STAGE_EVENT_KEY = /^verification-stage:(.*):[A-Z_]+$/;

/**
 * The entity's events, oldest first, with each delivery's state; and the stages they announced
 * (a verification_status_change names its verification in its source key, onboarding/lifecycle-events.ts).
 */
async function eventsOf(db: Queryable, entityId: string): Promise<{ events: EventFact[]; stages: RecordedStage[] }> {
  // the payload's stage and feature fields only: a decision event's payload carries the outcome, which stays where it is
  const rows = await db.query(
    `SELECT id, event_type, event_name, created_at, source_key,
            payload->'data'->>'verificationStatus' AS stage, payload->'data'->>'verificationPath' AS path,
            payload->'data'->>'verificationId' AS verification_id, payload->'data'->>'rowNumber' AS row_number,
            payload->'data'->'feature'->>'id' AS feature_id, payload->'data'->>'access' AS access
       FROM events WHERE entity_id = $1 ORDER BY created_at, id`,
    [entityId],
  );
  const deliveries = rows.length
    ? await db.query(
        `SELECT d.event_id, d.subscription_id, d.status, d.attempts, d.run_attempts, d.delivered_at, a.http_status, a.started_at
           FROM webhook_deliveries d
           LEFT JOIN LATERAL (SELECT http_status, started_at FROM webhook_attempts WHERE delivery_id = d.id ORDER BY started_at DESC LIMIT 1) a ON true
          WHERE d.event_id = ANY ($1::uuid[]) ORDER BY d.created_at, d.subscription_id`,
        [rows.map((r) => r.id)],
      )
    : [];
  const byEvent = new Map<string, StoredDelivery[]>();
  for (const d of deliveries) {
    const list = byEvent.get(String(d.event_id)) ?? [];
    list.push({
      subscriptionId: String(d.subscription_id),
      status: d.status as StoredDelivery['status'],
      attempts: Number(d.attempts),
      runAttempts: Number(d.run_attempts),
      lastStatusCode: d.http_status == null ? null : Number(d.http_status),
      lastAttemptAt: isoOrNull(d.started_at),
      deliveredAt: isoOrNull(d.delivered_at),
    });
    byEvent.set(String(d.event_id), list);
  }
  const events: EventFact[] = [];
  const stages: RecordedStage[] = [];
  for (const r of rows) {
    const eventType = String(r.event_type);
    if (!isEventType(eventType)) continue;
    const eventId = String(r.id);
    const at = iso(r.created_at);
    const sourceKey = String(r.source_key);
    const stageKey = eventType === 'verification_status_change' ? STAGE_EVENT_KEY.exec(sourceKey)?.[1] : undefined;
    if (stageKey && r.stage && r.path) stages.push({ key: stageKey, at, eventId, ...stageOf(r) });
    events.push({
      eventId,
      eventType,
      eventName: String(r.event_name),
      at,
      sourceKey,
      ...(eventType === 'feature_access_change' && r.feature_id ? { feature: { featureId: String(r.feature_id), enabled: r.access === 'ENABLED' } } : {}),
      deliveries: byEvent.get(eventId) ?? [],
    });
  }
  return { events, stages };
}

/** A stage as a stage event's payload or an audit entry's details name it. */
const stageOf = (r: Record<string, unknown>): Pick<RecordedStage, 'path' | 'stage' | 'verificationId' | 'rowNumber'> => ({
  path: r.path as AnyVerificationPath,
  stage: r.stage as VerificationStage,
  verificationId: r.verification_id == null ? null : String(r.verification_id),
  rowNumber: r.row_number == null ? null : Number(r.row_number),
});

/**
 * What the audit log holds of the entity's stages (verification.stage: the verification's key as
 * subject, its path, id, row and stage as details) and of its features (feature.enabled and
 * feature.removed: the feature as subject) — written whatever the subscriptions.
 */
async function auditedFacts(
  db: Queryable,
  businessId: string,
  entityId: string,
): Promise<{ stages: RecordedStage[]; features: HistoryFacts['auditedFeatureChanges'] }> {
  const rows = await db.query<{ action: string; occurred_at: Date; subject_type: string | null; subject_id: string | null; details: string }>(
    `SELECT action, occurred_at, subject_type, subject_id, details FROM audit_log
      WHERE business_id = $1 AND entity_id = $2 AND action IN ('verification.stage', 'feature.enabled', 'feature.removed') AND outcome = 'ok' ORDER BY seq`,
    [businessId, entityId],
  );
  const stages: RecordedStage[] = [];
  const features: HistoryFacts['auditedFeatureChanges'] = [];
  for (const r of rows) {
    const at = iso(r.occurred_at);
    if (r.action === 'verification.stage') {
      const d = JSON.parse(r.details) as Record<string, unknown>;
      if (r.subject_id && typeof d.stage === 'string' && typeof d.path === 'string') {
        stages.push({ key: r.subject_id, at, eventId: null, ...stageOf({ ...d, verification_id: d.verificationId, row_number: d.rowNumber }) });
      }
    } else if (r.subject_type === 'feature' && r.subject_id) {
      features.push({ featureId: r.subject_id, enabled: r.action === 'feature.enabled', at });
    }
  }
  return { stages, features };
}
