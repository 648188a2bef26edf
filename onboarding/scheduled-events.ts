// Events that come from time passing or a release rather than from a request: reminders of waiting
// submissions whose deadline is near, and the catalog's new features — each recorded once, for
// businesses that subscribed to its type (onboarding/lifecycle-events.ts recordIfSubscribed).
import {
  newFeatureEvent,
  NEW_FEATURE_EVENT,
  REMINDER_EVENT,
  REMINDER_LEAD,
  reminderEvent,
  reminderKey,
  type ReminderSubject,
} from '../domain/lifecycle-events.ts';
import type { Feature } from '../domain/feature-catalog.ts';
import { ID_DOCUMENT_SLUG } from '../domain/universal-kyc.ts';
import type { Db } from '../store/db.ts';
import type { Writer } from '../store/in-tx.ts';
import { latestOwnerDecisions } from '../store/kyb.ts';
import { recordIfSubscribed } from './lifecycle-events.ts';
import { loadSubmission } from '../store/universal-kyc.ts';

/** Submissions looked at per pass and kind; the rest wait for the next pass (a minute later). */
const REMINDERS_PER_PASS = 500;

type Waiting = { id: string; business_id: string; entity_id: string; deadline_at: Date; owners?: string[] };

/** Waiting submissions that are due a reminder (REMINDER_LEAD), not reminded yet, of a business that takes reminders. */
async function dueSubmissions(db: Db, table: 'ukyc_submissions' | 'kyb_submissions', subject: ReminderSubject, now: Date): Promise<Waiting[]> {
  return db.query<Waiting>(
    `SELECT s.id, s.business_id, s.entity_id, s.deadline_at${table === 'kyb_submissions' ? ', s.owners' : ''} FROM ${table} s
      WHERE s.status = 'waiting' AND s.deadline_at > $1
        AND s.deadline_at - $1 <= LEAST(make_interval(secs => $4::float8 / 1000), (s.deadline_at - s.created_at) * $5::float8)
        AND NOT EXISTS (SELECT 1 FROM events e WHERE e.source_key = $2 || s.id)
        AND EXISTS (SELECT 1 FROM notification_subscriptions n WHERE n.business_id = s.business_id AND $3 = ANY (n.types))
      ORDER BY s.deadline_at LIMIT ${REMINDERS_PER_PASS}`,
    [now, reminderKey(subject, ''), REMINDER_EVENT.eventType, REMINDER_LEAD.atMostMs, REMINDER_LEAD.shareOfWait],
  );
}

function remind(db: Writer, s: Waiting, subject: ReminderSubject, waitingFor: string[], now: Date): Promise<string | null> {
  return recordIfSubscribed(db, {
    businessId: s.business_id,
    entityId: s.entity_id,
    ...REMINDER_EVENT,
    payload: (eventId) =>
      reminderEvent({
        eventId,
        entityId: s.entity_id,
        timestamp: now.toISOString(),
        subject,
        submissionId: s.id,
        deadlineAt: new Date(s.deadline_at).toISOString(),
        waitingFor,
      }),
    sourceKey: reminderKey(subject, s.id),
  });
}

/**
 * Reminds, once each, the waiting submissions whose deadline is near (REMINDER_LEAD): a universal
 * KYC submission still without an identity document, a KYB submission whose declared owners are not
 * all decided. Returns how many reminders were recorded.
 */
export async function remindWaitingSubmissions(db: Db, now: Date): Promise<number> {
  let sent = 0;
  for (const s of await dueSubmissions(db, 'ukyc_submissions', 'universal-kyc-document', now)) {
    const submission = await loadSubmission(db, s.id);
    if (!submission || submission.idDocuments > 0) continue; // gone, or complete: being decided
    if (await remind(db, s, 'universal-kyc-document', [ID_DOCUMENT_SLUG], now)) sent++;
  }
  for (const s of await dueSubmissions(db, 'kyb_submissions', 'kyb-owners', now)) {
    const decided = await latestOwnerDecisions(db, s.owners ?? []);
    const undecided = (s.owners ?? []).filter((id) => !decided.has(id));
    if (undecided.length === 0) continue; // every owner decided: being decided
    if (await remind(db, s, 'kyb-owners', undecided, now)) sent++;
  }
  return sent;
}

/**
 * Adds the catalog's features that are not yet known and tells every business of each, once: each
 * business's event in a transaction of its own (an event's number is taken at commit under its
 * business's counter, migration 034: one transaction across thousands of businesses would hold every
 * counter until it commits), then the feature marked known. A pass that fails part way is done again;
 * the events' source keys tell each business once. Returns how many features were new.
 */
export async function announceNewFeatures(db: Db, catalog: readonly Feature[], now: Date): Promise<number> {
  let added = 0;
  for (const feature of catalog) {
    const [known] = await db.query('SELECT 1 FROM catalog_features WHERE feature_id = $1', [feature.id]);
    if (known) continue;
    const businesses = await db.query<{ id: string }>('SELECT id FROM businesses WHERE created_at < $1 ORDER BY id', [now]);
    for (const b of businesses) {
      await recordIfSubscribed(db, {
        businessId: String(b.id),
        entityId: null,
        ...NEW_FEATURE_EVENT,
        payload: (eventId) => newFeatureEvent({ eventId, timestamp: now.toISOString(), feature }),
        sourceKey: `new-feature:${feature.id}:${b.id}`,
      });
    }
    const [inserted] = await db.query('INSERT INTO catalog_features (feature_id, added_at) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING 1', [
      feature.id,
      now,
    ]);
    if (inserted) added++;
  }
  return added;
}
