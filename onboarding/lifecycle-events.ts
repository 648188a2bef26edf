// Recording the events beside the decision (domain/lifecycle-events.ts) with their deliveries, each
// once per source key (store/events.ts): a verification's stage and a change of an entity's
// features — for businesses that subscribed (reminders and new features: onboarding/scheduled-events.ts).
import {
  featureAccessEvent,
  FEATURE_ACCESS_EVENT,
  verificationStatusEvent,
  VERIFICATION_STATUS_EVENT,
  type FeatureRef,
  type VerificationRef,
  type VerificationStage,
} from '../domain/lifecycle-events.ts';
import { canonicalDetails, type AuditFields } from '../domain/audit-chain.ts';
import { recordAudit } from '../store/audit-log.ts';
import type { Queryable, Tx } from '../store/db.ts';
import { recordEvent, type NewEvent } from '../store/events.ts';
import { inTx, type Writer } from '../store/in-tx.ts';
import { subscribesTo } from '../store/subscriptions.ts';

/**
 * These events are recorded only for a business with a subscription that takes their type: an
 * event nobody subscribed to is never delivered (a redelivery goes to the event's own
 * subscriptions), and a business that did not ask pays no row for each.
 */
export async function recordIfSubscribed(db: Writer, event: NewEvent): Promise<string | null> {
  if (!(await subscribesTo(db, event.businessId, event.eventType))) return null;
  return recordEvent(db, event);
}

export type StageMoved = {
  businessId: string;
  entityId: string;
  ref: VerificationRef;
  stage: VerificationStage;
  /** Names the verification (and round) the stage belongs to: one event per key and stage. */
  key: string;
  now: Date;
};

/**
 * Records that a verification moved to a stage: its audit entry (verification.stage, whether or not
 * anyone subscribed) and, for a business that subscribed, its event. Both once per key and stage: a
 * step that looks again (a readiness check on every wake) records nothing new.
 */
export function recordVerificationStage(db: Writer, s: StageMoved): Promise<string | null> {
  return inTx(db, async (tx) => {
    const details: AuditFields['details'] = {
      path: s.ref.path,
      verificationId: s.ref.verificationId ?? null,
      rowNumber: s.ref.rowNumber ?? null,
      stage: s.stage,
    };
    const subject = { type: 'verification', id: s.key };
    if (!(await stageRecorded(tx, s, subject.id, details))) {
      recordAudit(tx, { businessId: s.businessId, action: 'verification.stage', entityId: s.entityId, subject, details });
    }
    return recordIfSubscribed(tx, {
      businessId: s.businessId,
      entityId: s.entityId,
      ...VERIFICATION_STATUS_EVENT,
      payload: (eventId) => verificationStatusEvent({ eventId, entityId: s.entityId, timestamp: s.now.toISOString(), ref: s.ref, stage: s.stage }),
      sourceKey: `verification-stage:${s.key}:${s.stage}`,
    });
  });
}

/** Whether this stage of this verification has its entry already, linked or still waiting (by the audit log's entity index). */
async function stageRecorded(db: Queryable, s: StageMoved, key: string, details: AuditFields['details']): Promise<boolean> {
  const rows = await db.query(
    `SELECT 1 FROM audit_log WHERE business_id = $1 AND entity_id = $2 AND action = 'verification.stage' AND subject_id = $3 AND details = $4
      UNION ALL
     SELECT 1 FROM audit_pending WHERE business_id = $1 AND entity_id = $2 AND action = 'verification.stage' AND subject_id = $3 AND details = $4 LIMIT 1`,
    [s.businessId, s.entityId, key, canonicalDetails(details)],
  );
  return rows.length === 1;
}

/**
 * Turns a feature on or off for the entity; when that changed its features, records the
 * feature_access_change event (once per `key`). Returns whether it changed.
 */
export async function setFeatureAccess(
  tx: Tx,
  a: { businessId: string; entityId: string; feature: FeatureRef; enabled: boolean; key: string; now: Date },
): Promise<boolean> {
  const changed = a.enabled
    ? await tx.query('INSERT INTO entity_features (entity_id, feature_id) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING 1', [a.entityId, a.feature.id])
    : await tx.query('DELETE FROM entity_features WHERE entity_id = $1 AND feature_id = $2 RETURNING 1', [a.entityId, a.feature.id]);
  if (changed.length === 0) return false;
  recordAudit(tx, {
    businessId: a.businessId,
    action: a.enabled ? 'feature.enabled' : 'feature.removed',
    entityId: a.entityId,
    subject: { type: 'feature', id: a.feature.id },
    details: { featureId: a.feature.id, slug: a.feature.slug },
  });
  await recordIfSubscribed(tx, {
    businessId: a.businessId,
    entityId: a.entityId,
    ...FEATURE_ACCESS_EVENT,
    payload: (eventId) => featureAccessEvent({ eventId, entityId: a.entityId, timestamp: a.now.toISOString(), feature: a.feature, enabled: a.enabled }),
    sourceKey: `feature-access:${a.key}:${a.feature.id}`,
  });
  return true;
}
