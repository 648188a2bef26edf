// Recording the events beside the decision (domain/lifecycle-events.ts) with their deliveries, each
// once per source key (store/events.ts): a verification's stage, a change of an entity's features,
// reminders of waiting submissions, and the catalog's new features — for businesses that subscribed.
import {
  featureAccessEvent,
  FEATURE_ACCESS_EVENT,
  newFeatureEvent,
  NEW_FEATURE_EVENT,
  reminderDue,
  reminderEvent,
  REMINDER_EVENT,
  verificationStatusEvent,
  VERIFICATION_STATUS_EVENT,
  type FeatureRef,
  type ReminderSubject,
  type VerificationRef,
  type VerificationStage,
} from '../domain/lifecycle-events.ts';
import type { Feature } from '../domain/feature-catalog.ts';
import { ID_DOCUMENT_SLUG } from '../domain/universal-kyc.ts';
import type { Db, Queryable } from './db.ts';
import { recordEvent, type NewEvent } from './events.ts';
import { subscribesTo } from './subscriptions.ts';

/**
 * These events are recorded only for a business with a subscription that takes their type: an
 * event nobody subscribed to is never delivered (a redelivery goes to the event's own
 * subscriptions), and a business that did not ask pays no row for each.
 */
async function recordIfSubscribed(q: Queryable, event: NewEvent): Promise<string | null> {
  if (!(await subscribesTo(q, event.businessId, event.eventType))) return null;
  return recordEvent(q, event);
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

export function recordVerificationStage(q: Queryable, s: StageMoved): Promise<string | null> {
  return recordIfSubscribed(q, {
    businessId: s.businessId,
    entityId: s.entityId,
    ...VERIFICATION_STATUS_EVENT,
    payload: (eventId) => verificationStatusEvent({ eventId, entityId: s.entityId, timestamp: s.now.toISOString(), ref: s.ref, stage: s.stage }),
    sourceKey: `verification-stage:${s.key}:${s.stage}`,
  });
}

/**
 * Turns a feature on or off for the entity; when that changed its features, records the
 * feature_access_change event (once per `key`). Returns whether it changed.
 */
export async function setFeatureAccess(q: Queryable, a: { businessId: string; entityId: string; feature: FeatureRef; enabled: boolean; key: string; now: Date }): Promise<boolean> {
  const changed = a.enabled
    ? await q.query('INSERT INTO entity_features (entity_id, feature_id) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING 1', [a.entityId, a.feature.id])
    : await q.query('DELETE FROM entity_features WHERE entity_id = $1 AND feature_id = $2 RETURNING 1', [a.entityId, a.feature.id]);
  if (changed.length === 0) return false;
  await recordIfSubscribed(q, {
    businessId: a.businessId,
    entityId: a.entityId,
    ...FEATURE_ACCESS_EVENT,
    payload: (eventId) => featureAccessEvent({ eventId, entityId: a.entityId, timestamp: a.now.toISOString(), feature: a.feature, enabled: a.enabled }),
    sourceKey: `feature-access:${a.key}:${a.feature.id}`,
  });
  return true;
}

/** The latest decision event about the entity (any person path), which closes a hosted-SDK round. */
export async function lastDecisionEventOf(q: Queryable, entityId: string, eventType: string): Promise<string | null> {
  const [row] = await q.query<{ id: string }>('SELECT id FROM events WHERE entity_id = $1 AND event_type = $2 ORDER BY created_at DESC, id LIMIT 1', [entityId, eventType]);
  return row ? String(row.id) : null;
}

/** Submissions looked at per pass and kind; the rest wait for the next pass (a minute later). */
const REMINDERS_PER_PASS = 500;

type Waiting = { id: string; business_id: string; entity_id: string; created_at: Date; deadline_at: Date };

async function waitingSubmissions(db: Db, table: 'ukyc_submissions' | 'kyb_submissions', subject: ReminderSubject, now: Date): Promise<Waiting[]> {
  // due (domain/lifecycle-events.ts reminderDue, narrowed here by the same arithmetic), not reminded
  // yet, of a business that takes reminders
  return db.query<Waiting>(
    `SELECT s.id, s.business_id, s.entity_id, s.created_at, s.deadline_at FROM ${table} s
      WHERE s.status = 'waiting' AND s.deadline_at > $1
        AND s.deadline_at - $1 <= LEAST(interval '24 hours', (s.deadline_at - s.created_at) / 2)
        AND NOT EXISTS (SELECT 1 FROM events e WHERE e.source_key = 'reminder:' || $2 || ':' || s.id)
        AND EXISTS (SELECT 1 FROM notification_subscriptions n WHERE n.business_id = s.business_id AND $3 = ANY (n.types))
      ORDER BY s.deadline_at LIMIT ${REMINDERS_PER_PASS}`,
    [now, subject, REMINDER_EVENT.eventType],
  );
}

function remind(q: Queryable, s: Waiting, subject: ReminderSubject, waitingFor: string[], now: Date): Promise<string | null> {
  return recordIfSubscribed(q, {
    businessId: s.business_id,
    entityId: s.entity_id,
    ...REMINDER_EVENT,
    payload: (eventId) =>
      reminderEvent({ eventId, entityId: s.entity_id, timestamp: now.toISOString(), subject, submissionId: s.id, deadlineAt: new Date(s.deadline_at).toISOString(), waitingFor }),
    sourceKey: `reminder:${subject}:${s.id}`,
  });
}

/**
 * Reminds, once each, the waiting submissions whose deadline is near (domain reminderDue): a
 * universal KYC submission still without an identity document, a KYB submission whose declared
 * owners are not all decided. Returns how many reminders were recorded.
 */
export async function remindWaitingSubmissions(db: Db, now: Date): Promise<number> {
  let sent = 0;
  for (const s of await waitingSubmissions(db, 'ukyc_submissions', 'universal-kyc-document', now)) {
    if (!reminderDue(new Date(s.created_at), new Date(s.deadline_at), now)) continue;
    const [docs] = await db.query<{ n: string }>('SELECT count(*) AS n FROM files WHERE submission_id = $1 AND slug = $2 AND retired_at IS NULL', [s.id, ID_DOCUMENT_SLUG]);
    if (Number(docs?.n ?? 0) > 0) continue; // complete: being decided
    if (await remind(db, s, 'universal-kyc-document', [ID_DOCUMENT_SLUG], now)) sent++;
  }
  for (const s of await waitingSubmissions(db, 'kyb_submissions', 'kyb-owners', now)) {
    if (!reminderDue(new Date(s.created_at), new Date(s.deadline_at), now)) continue;
    const undecided = await db.query<{ id: string }>(
      `SELECT o.id FROM kyb_submissions k, unnest(k.owners) AS o(id)
        WHERE k.id = $1 AND NOT EXISTS (SELECT 1 FROM kyc_accounts a WHERE a.entity_id = o.id) ORDER BY o.id`,
      [s.id],
    );
    if (undecided.length === 0) continue; // every owner decided: being decided
    if (await remind(db, s, 'kyb-owners', undecided.map((u) => String(u.id)), now)) sent++;
  }
  return sent;
}

/**
 * Adds the catalog's features that are not yet known and tells every business of each, once, in the
 * same transaction (a failed pass adds nothing and is done again). Returns how many features were new.
 */
export async function announceNewFeatures(db: Db, catalog: readonly Feature[], now: Date): Promise<number> {
  let added = 0;
  for (const feature of catalog) {
    const isNew = await db.tx(async (q) => {
      const [inserted] = await q.query('INSERT INTO catalog_features (feature_id, added_at) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING 1', [feature.id, now]);
      if (!inserted) return false;
      const businesses = await q.query<{ id: string }>('SELECT id FROM businesses WHERE created_at < $1 ORDER BY id', [now]);
      for (const b of businesses) {
        await recordIfSubscribed(q, {
          businessId: String(b.id),
          entityId: null,
          ...NEW_FEATURE_EVENT,
          payload: (eventId) => newFeatureEvent({ eventId, timestamp: now.toISOString(), feature }),
          sourceKey: `new-feature:${feature.id}:${b.id}`,
        });
      }
      return true;
    });
    if (isNew) added++;
  }
  return added;
}
