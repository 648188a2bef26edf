// What a shared applicant's steps trigger (token sharing, batch row or sync request alike): its
// verification's start (STARTED, with the import request counted), the onboarding itself in one
// transaction with the record's own end, or its failure (FAILED once it had started). store/
// share-records.ts holds the record's rows.
import type { ShareRef } from '../contract/share-record.ts';
import { recordError } from '../domain/import-errors.ts';
import { isUniqueViolation, type Db } from '../store/db.ts';
import { beforeImportIn, loadShareRecord, markRecordFailedIn, markRecordSucceededIn, shareRefKey, shareVerification } from '../store/share-records.ts';
import type { RecordError } from '../domain/import-errors.ts';
import { applyDecision } from './decisions.ts';
import { recordVerificationStage } from './lifecycle-events.ts';

export type CompleteResult =
  { outcome: 'succeeded'; eventId: string; entityId: string } | { outcome: 'failed'; error: RecordError } | { outcome: 'already-done' };

/**
 * The onboarding itself, in one transaction: the KYC account, the card processor token, the
 * feature, the entity's verifier, the event and its webhook deliveries, the record and the
 * counters. The record's row lock makes overlapping attempts of one record (a retry racing a slow
 * first attempt) wait for each other: the second finds it done and changes nothing.
 */
export async function completeRecord(db: Db, ref: ShareRef, provider: string, now: Date): Promise<CompleteResult> {
  const sourceKey = shareRefKey(ref);
  try {
    return await db.tx(async (tx) => {
      const rec = await loadShareRecord(tx, ref, true);
      if (rec.status !== 'pending') return { outcome: 'already-done' };
      if (!rec.entityId || !rec.applicantId || !rec.decision) throw new Error(`record ${sourceKey} is not ready to complete`);
      // the entity may have been deleted since its applicant was imported: the record fails for
      // good; the lock keeps a delete from slipping in before this transaction ends
      const [entity] = await tx.query('SELECT 1 FROM entities WHERE id = $1 AND business_id = $2 FOR UPDATE', [rec.entityId, rec.businessId]);
      if (!entity) {
        const error = recordError('ENTITY_NOT_FOUND');
        await markRecordFailedIn(tx, ref, { businessId: rec.businessId, entityId: null }, error); // the entity is gone
        return { outcome: 'failed', error };
      }
      const eventId = await applyDecision(tx, {
        businessId: rec.businessId,
        entityId: rec.entityId,
        provider,
        applicantId: rec.applicantId,
        levelName: rec.applicantLevel,
        source: ref.kind,
        sourceRef: sourceKey,
        decision: rec.decision,
        path: 'token-sharing',
        verification: shareVerification(ref),
        eventSourceKey: sourceKey,
        cardProcessorPublicToken: rec.cardProcessorPublicToken,
        now,
      });
      await markRecordSucceededIn(tx, ref);
      return { outcome: 'succeeded', eventId, entityId: rec.entityId };
    });
  } catch (err) {
    if (!isUniqueViolation(err, 'entities_card_processor_token_key')) throw err;
    const error = recordError('CARD_PROCESSOR_TOKEN_INVALID');
    await failRecord(db, ref, error);
    return { outcome: 'failed', error };
  }
}

/**
 * Records the entity and counts the import request about to be sent (store/share-records.ts
 * beforeImportIn) and, the first time, that the record's verification started (verification_status_change
 * STARTED, once per record by its key however many attempts send a request). 0 when no request may be sent.
 */
export function beforeImport(db: Db, ref: ShareRef, businessId: string, entityId: string): Promise<number> {
  return db.tx(async (tx) => {
    const changed = await beforeImportIn(tx, ref, entityId);
    if (changed) {
      await recordVerificationStage(tx, {
        businessId,
        entityId,
        ref: { path: 'token-sharing', ...shareVerification(ref) },
        stage: 'STARTED',
        key: shareRefKey(ref),
        now: new Date(),
      });
    }
    return changed;
  });
}

/**
 * Marks a pending record failed and counts it — only if this call moved it (overlapping attempts
 * count once); a record that started (its import request went out) ends without a decision: FAILED.
 */
export function failRecord(db: Db, ref: ShareRef, error: RecordError): Promise<boolean> {
  return db.tx(async (tx) => {
    const rec = await loadShareRecord(tx, ref);
    if (!(await markRecordFailedIn(tx, ref, rec, error))) return false;
    if (rec.entityId && error.category !== 'ENTITY_NOT_FOUND') {
      await recordVerificationStage(tx, {
        businessId: rec.businessId,
        entityId: rec.entityId,
        ref: { path: 'token-sharing', ...shareVerification(ref) },
        stage: 'FAILED',
        key: shareRefKey(ref),
        now: new Date(),
      });
    }
    return true;
  });
}
